//! A run's live numbers and status view, read from its files (the files are the truth)
//! through its kind's live reader (`Job::live_reader`: a local run's own file, or with the
//! Slurm backend a cluster run's directory and its shards). The requests take them from
//! the run cache ([`super::cache`]), which keeps each run's reader; [`live`] reads a run's
//! files once, whole (the numbers the scheduler stores when a run ends).

use std::path::Path;

use super::cache::{reader, RunCache};
use super::db::runs::Run;
use super::store::Store;
use super::{slurm, words};
use crate::jobs;
use crate::live::Reading;

pub use crate::live::Live;

/// The numbers of `run`: for a run that plays, from its files (as the cache last read
/// them); for one that does not, those its files gave when its child last ended (stored
/// in its row), else its files.
pub fn of(cache: &RunCache, store: &Store, run: &Run) -> Live {
    let mut out = cache.live(store, run);
    out.positions_per_s = rate(run, &out);
    out
}

/// [`of`], with the kind's view of the same read of its files (a tune's trajectories, for
/// its section of the run page: the table, the status lines and the section agree).
pub fn reading(cache: &RunCache, store: &Store, run: &Run) -> Reading {
    let mut out = cache.reading(store, run);
    out.live.positions_per_s = rate(run, &out.live);
    out
}

/// A datagen run's positions per second: its positions over the seconds from its child's
/// last start to its end (or now); `None` before it has positions or a start (only a
/// datagen run counts positions).
fn rate(run: &Run, l: &Live) -> Option<f64> {
    let positions = l.positions?;
    let end = match run.state.as_str() {
        "running" => super::db::runs::now(),
        _ => run.finished?,
    };
    let secs = end - run.started?;
    (secs > 0).then(|| positions as f64 / secs as f64)
}

/// The live numbers of a run of `kind` with `words` whose files are in `dir`, read now,
/// whole.
pub fn live(kind: &str, words: &[String], dir: &Path) -> Live {
    reader(kind, words, dir)
        .update()
        .map(|r| r.live)
        .unwrap_or_default()
}

/// The HTML page `spar status FILE --html` writes for the run's file, if its kind shows one.
pub fn page(kind: &str, words: &[String], dir: &Path) -> Option<String> {
    if slurm::is_cluster_run(dir) {
        let rd = slurm::run_dir(dir);
        let (m, job) = jobs::read(&rd).ok()?;
        return job.status(&rd, &m).ok().map(|v| v.page());
    }
    // Only a kind whose file `spar status` shows has a page (a datagen's training file,
    // a report's statistics have none).
    let kind = jobs::by_command(kind)?;
    let file = words::primary(kind, dir, words);
    let shown = !kind.file_inputs(&file).is_empty();
    if !file.is_file() || !shown {
        return None;
    }
    let job = jobs::owning(&file)?;
    job.status_of_file(&file).ok().map(|v| v.page())
}
