//! `track!` statistics reports: the data ([`stats`]: JSON and CSV files), the significance
//! tests ([`compare`]), the display bins ([`bins`]), the terminal ([`terminal`]) and HTML
//! ([`html`]) renderings, and the player wrapper that attributes records to variants
//! ([`tracked`]).

pub mod bins;
pub mod compare;
pub mod html;
pub mod stats;
pub mod terminal;
pub mod tracked;

use std::io::Write;
use std::path::Path;

use stats::StatsFile;

/// Writes a file through a temporary file in the same directory and a rename, so that it is
/// never seen half-written.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    // Temporary files are private (0600); reports are ordinary files.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes `stats.csv`, `stats.json` and `report.html` into `dir` (created if needed).
pub fn write_files(dir: &Path, file: &StatsFile, title: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the output directory {}: {e}", dir.display()))?;
    let outputs = [
        ("stats.csv", file.to_csv()),
        ("stats.json", file.to_json()),
        ("report.html", html::render(&file.variants, title)),
    ];
    for (name, text) in outputs {
        let path = dir.join(name);
        write_atomically(&path, &text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
