//! The files a cluster run directory owns (its manifest, jobs file, STOP file, locks,
//! shards' records, built engines and logs), by name: no output of any command may be one
//! of them. The run directory itself is made and read by [`crate::cluster`].

use std::path::Path;

/// The manifest's file name in the run directory.
pub const MANIFEST: &str = "manifest.json";

/// The file name of a report shard's statistics in its shard directory
/// (`shards/I/stats.json`): owned like every file under `shards/`.
pub const SHARD_STATS: &str = "stats.json";

/// What a path inside a run directory (relative to it) is, when the run owns it: the
/// manifest, the jobs file, STOP, the horizon, the coordinator's lock, anything under `shards/`,
/// `engines/` or `logs/`. Other paths in the directory (a merged `all.csv`) are free.
pub fn owned_file(relative: &Path) -> Option<&'static str> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    Some(match first {
        MANIFEST => "the manifest",
        "jobs.json" => "the jobs file",
        "STOP" => "the STOP file",
        "horizon" => "the SPRT's horizon",
        "coordinator.lock" => "the coordinator's lock",
        "shards" => "a shard's record",
        "engines" => "a built engine",
        "logs" => "a task's log",
        "verify" => "the verification run of a tune",
        _ => return None,
    })
}
