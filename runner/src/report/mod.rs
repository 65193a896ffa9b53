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

use std::path::Path;

use stats::StatsFile;

use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;

/// The files [`write_files`] writes into its directory.
pub const FILES: [&str; 3] = ["stats.csv", "stats.json", "report.html"];

/// Writes `stats.csv`, `stats.json` and `report.html` into `dir` (created if needed).
/// A failed write is a failure (exit 1): the directory was checked before the games.
pub fn write_files(dir: &Path, file: &StatsFile, title: &str) -> CliResult {
    std::fs::create_dir_all(dir).map_err(|e| {
        CliError::failure(format!(
            "cannot create the output directory {}: {e}",
            dir.display()
        ))
    })?;
    let outputs = [
        (FILES[0], file.to_csv()),
        (FILES[1], file.to_json()),
        (FILES[2], html::render(&file.variants, title)),
    ];
    for (name, text) in outputs {
        let path = dir.join(name);
        write_atomically(&path, &text)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}
