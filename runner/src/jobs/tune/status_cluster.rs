//! What `spar status RUN_DIR` shows of a cluster tune: its trajectory so far, replayed from
//! the shards' records, with the run's pace and the verification's verdict.

use std::path::Path;

use super::merge::{replay, stored_args};
use super::setup::setup;
use super::status::TuneView;
use super::verdict::{read_verdict, verdict_line, verify_dir, verify_json};
use crate::cluster::manifest::Manifest;
use crate::cluster::status::Snapshot;
use crate::error::CliResult;

/// What `spar status RUN_DIR` shows of a cluster tune: its trajectory so far (from the
/// shards' records, by the schedule), games/s and ETA from the run's snapshot, the shards'
/// lines and the verification's verdict.
pub fn view(dir: &Path, m: &Manifest, snapshot: &Snapshot) -> CliResult<TuneView> {
    let args = stored_args(dir, m)?;
    let s = setup(&args)?;
    let (_, rows) = replay(dir, m, &s)?;
    let games = 2 * snapshot.pairs.len() as u64;
    let games_per_second = snapshot
        .elapsed
        .filter(|&e| e > 0.0 && games > 0)
        .map(|e| games as f64 / e);
    let mut live = !snapshot.finished();
    let mut extra_lines = vec![format!(
        "{} shards; --delay {}; pairs recorded {}{}",
        m.shards,
        s.schedule.delay,
        snapshot.pairs.len(),
        snapshot.total.map_or(String::new(), |t| format!(" of {t}"))
    )];
    extra_lines.extend(
        snapshot
            .lines()
            .into_iter()
            .filter(|l| l.trim_start().starts_with("shard ") || l.contains("conflict")),
    );
    let vdir = verify_dir(dir);
    if Manifest::path(&vdir).exists() {
        match read_verdict(&verify_json(dir)) {
            Some(v) => extra_lines.push(verdict_line(&v)),
            None => {
                // The page stays live while the verification plays.
                let verification = crate::jobs::read(&vdir)
                    .and_then(|(m, job)| crate::cluster::status::of_run(&vdir, &m, job));
                live |= verification.as_ref().is_ok_and(|v| !v.finished());
                extra_lines.extend(super::status::verification_so_far(
                    verification,
                    "its coordinator runs it, or --resume continues it",
                    &vdir,
                ));
            }
        }
    }
    Ok(TuneView {
        title: format!(
            "Run {}: spar tune, {} parameters, {} shards",
            dir.display(),
            s.params.len(),
            m.shards
        ),
        params: s.params,
        rows,
        iterations: s.gains.iterations,
        pairs_per_iteration: s.schedule.pairs_per_iteration,
        games_per_second,
        eta_seconds: if live { snapshot.eta() } else { None },
        extra_lines,
        live,
    })
}
