//! What a tune's and a report's pages show, read from their files with the jobs' own
//! readers: a tune's [`TuneView`] as `spar status` builds it (from `tune.csv` and its run
//! record, or a cluster run's directory), and a report's statistics (`stats.json`, as
//! `spar report --out` writes it).

use std::path::Path;

use super::slurm;
use crate::jobs;
use crate::jobs::tune::status::TuneView;
use crate::report::stats::StatsFile;

/// The most bytes of `tuned.txt` a page shows.
const MAX_TUNED: u64 = 64 * 1024;

/// The view of the tune whose files are in `dir` (`None`: none yet, or unreadable).
pub fn tune(dir: &Path) -> Option<TuneView> {
    if slurm::is_cluster_run(dir) {
        let rd = slurm::run_dir(dir);
        let (m, job) = jobs::read(&rd).ok()?;
        let snap = crate::cluster::status::of_run(&rd, &m, job).ok()?;
        return jobs::tune::status_cluster::view(&rd, &m, &snap).ok();
    }
    let csv = dir.join("tune.csv");
    if !csv.is_file() {
        return None;
    }
    jobs::tune::status_local::from_csv(&csv).ok()
}

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
