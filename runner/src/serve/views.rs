//! What a tune's and a report's pages show, read from their files with the jobs' own
//! readers (a tune's trajectories come with its live reading, `serve::cache`): a tune's
//! `tuned.txt`, and a report's statistics (`stats.json`, as
//! `spar report --out` writes it).

use std::path::Path;

use crate::report::stats::StatsFile;

/// The most bytes of `tuned.txt` a page shows.
const MAX_TUNED: u64 = 64 * 1024;

/// The tune's `tuned.txt` (what its `--out` wrote), when there is one of a sane size.
pub fn tuned(dir: &Path) -> Option<String> {
    let path = dir.join("tuned.txt");
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_TUNED {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The statistics a report run wrote (`stats.json` in `dir`; `None`: none yet, or
/// unreadable).
pub fn report(dir: &Path) -> Option<StatsFile> {
    let path = dir.join("stats.json");
    if !path.is_file() {
        return None;
    }
    StatsFile::read(&path).ok()
}
