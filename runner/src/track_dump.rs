//! Dumping `track!` statistics at the end of a UCI session, so that external spar builds
//! (`--engine cmd=…` or `features=track`) can be reported too.
//!
//! `setoption name TrackFile value PATH` names the file; on `quit` (or end of input) the
//! statistics of every search of the session are written there as a `spar report` JSON file
//! (one variant named `uci`, no game count: UCI engines cannot tell games apart reliably).
//! Read it back with `spar report --from PATH`.

use std::path::Path;

use crate::report::stats::{StatsFile, VariantStats};

/// The variant name in UCI dumps.
pub const UCI_VARIANT: &str = "uci";

/// The hook `spar uci` runs on quit: writes the statistics to the file named by the
/// `TrackFile` option (nothing when it is empty). A build without the `track` feature writes
/// a file without sites and says so on stderr.
pub fn quit_hook() -> engine::uci::QuitHook {
    Box::new(|path: &str| {
        if path.is_empty() {
            return;
        }
        if let Err(e) = dump(Path::new(path)) {
            eprintln!("spar: {e}");
        }
    })
}

/// Writes this process's statistics (all variants' records merged under [`UCI_VARIANT`]).
pub fn dump(path: &Path) -> Result<(), String> {
    engine::track::flush();
    if !engine::track::ENABLED {
        eprintln!(
            "spar: TrackFile {}: this spar was built without the `track` feature, so no site recorded anything \
             (build with `cargo build --release --features track`)",
            path.display()
        );
    }
    let snapshot = engine::track::snapshot();
    let mut merged: Option<VariantStats> = None;
    for totals in snapshot.values() {
        let v = VariantStats::from_totals(UCI_VARIANT, Some(totals), Some(0));
        match &mut merged {
            None => merged = Some(v),
            Some(m) => m.merge(&v)?,
        }
    }
    let variant = merged.unwrap_or_else(|| VariantStats::from_totals(UCI_VARIANT, None, Some(0)));
    let file = StatsFile::new(vec![variant]);
    crate::files::atomic::write_atomically(path, &file.to_json())
        .map_err(|e| format!("cannot write TrackFile {}: {e}", path.display()))
}
