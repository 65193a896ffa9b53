//! The live reader of a bisect (the job contract's `live_reader`): its plan and steps,
//! read again when the steps file changes, and the step in play followed by the SPRT's own
//! reader (its results CSV, or the cluster run it is). The numbers: every step's games in
//! all, and the W-L-D, Elo and LLR of the step in play (or of the last one); the lines are
//! `spar status`'s; the view is the status the run page's section draws.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use super::status::{self, BisectStatus};
use crate::job::{Job, StatusView};
use crate::live::{Live, LiveReader, LiveRun, Reading};

/// The reader of the bisect whose run directory `run.file` is.
pub fn reader(run: &LiveRun) -> Box<dyn LiveReader> {
    Box::new(BisectReader {
        dir: run.file.clone(),
        seen: None,
        status: None,
        empty: false,
        step: None,
        step_live: Live::default(),
    })
}

/// What a reading was made of: the plan's and the steps file's length and time, and the
/// last step directory.
type Mark = (
    Option<(u64, SystemTime)>,
    Option<(u64, SystemTime)>,
    Option<String>,
);

struct BisectReader {
    dir: PathBuf,
    /// The plan, the steps file and the last step directory at the last reading.
    seen: Option<Mark>,
    /// The status replayed at the last change of the mark (`None`: no plan).
    status: Option<BisectStatus>,
    /// Whether the last reading was the empty one of a directory with no plan.
    empty: bool,
    /// The step in play and its SPRT's reader.
    step: Option<(String, Box<dyn LiveReader>)>,
    /// The step in play's last numbers.
    step_live: Live,
}

impl BisectReader {
    /// What the plan, the steps and the step directories look like now (metadata and
    /// names only: nothing is read).
    fn mark(&self) -> Mark {
        let meta = |name: &str| {
            let m = std::fs::metadata(self.dir.join(name)).ok()?;
            Some((m.len(), m.modified().ok()?))
        };
        let last_step = std::fs::read_dir(self.dir.join("steps"))
            .ok()
            .and_then(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).max())
            .map(|n| n.to_string_lossy().into_owned());
        (
            meta(super::record::PLAN),
            meta(super::record::STEPS),
            last_step,
        )
    }
}

impl LiveReader for BisectReader {
    fn update(&mut self) -> Option<Reading> {
        // The plan and the steps are read again only when they (or the step directories)
        // changed; the step in play through the SPRT's own incremental reader.
        let mark = self.mark();
        let changed = self.seen.as_ref() != Some(&mark);
        if changed {
            self.seen = Some(mark);
            // One this spar cannot read gives no numbers, as with no plan yet.
            self.status = status::of_dir_with(&self.dir, |_| Vec::new()).unwrap_or_default();
        }
        let Some(status) = &mut self.status else {
            let again = self.empty;
            self.empty = true;
            return (!again || changed).then(Reading::default);
        };
        self.empty = false;
        let playing = status.playing.as_ref().map(|(rel, _)| rel.clone());
        if self.step.as_ref().map(|(rel, _)| rel) != playing.as_ref() {
            self.step = playing.map(|rel| {
                let dir = self.dir.join(&rel);
                let cluster = crate::cluster::manifest::Manifest::path(&dir)
                    .is_file()
                    .then(|| dir.clone());
                let run = LiveRun {
                    file: dir.join("results.csv"),
                    cluster,
                    words: Vec::new(),
                };
                (rel, crate::jobs::matches::job::SPRT.live_reader(&run))
            });
            self.step_live = Live::default();
        }
        let mut step_changed = false;
        if let Some((_, r)) = &mut self.step {
            if let Some(reading) = r.update() {
                self.step_live = reading.live;
                step_changed = true;
            }
        }
        if !changed && !step_changed {
            return None;
        }
        if let Some((_, lines)) = &mut status.playing {
            lines.clone_from(&self.step_live.lines);
        }
        let step = self.step.is_some().then_some(&self.step_live);
        Some(reading(status.clone(), step))
    }
}

/// The numbers of a bisect's `status`, with the step in play's `step` numbers.
fn reading(status: BisectStatus, step: Option<&Live>) -> Reading {
    let mut live = Live::default();
    match (step, status.steps.iter().rev().find(|s| s.games > 0)) {
        (Some(s), _) => {
            live = s.clone();
            live.verdict = None;
            live.lines = Vec::new();
        }
        (None, Some(last)) => {
            (live.wins, live.losses, live.draws) =
                (Some(last.wins), Some(last.losses), Some(last.draws));
            live.elo = crate::live::finite(last.elo);
            live.elo_error = crate::live::finite(last.elo_pm);
            live.llr = crate::live::finite(last.llr);
            (live.lower, live.upper) = (Some(last.lower), Some(last.upper));
        }
        (None, None) => {}
    }
    live.games = Some(status.games() + step.and_then(|s| s.games).unwrap_or(0));
    live.lines = status.lines();
    Reading {
        live,
        view: Some(Arc::new(status)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::bisect::record::tests::{plan, step};
    use crate::jobs::bisect::record::{append_step, Outcome, Role};

    #[test]
    fn the_reader_counts_every_steps_games_and_reads_again_only_on_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let run = LiveRun {
            file: dir.path().to_path_buf(),
            cluster: None,
            words: vec![],
        };
        let mut r = reader(&run);
        assert_eq!(r.update().unwrap().live, Live::default());
        let p = plan(8, true);
        p.write(dir.path()).unwrap();
        let first = r.update().unwrap();
        assert_eq!(first.live.games, Some(0));
        assert!(first.view.is_some());
        assert!(r.update().is_none(), "nothing changed");
        append_step(dir.path(), &step(&p, Role::Search, 4, Outcome::Bad)).unwrap();
        let live = r.update().unwrap().live;
        assert_eq!(
            (live.games, live.wins, live.losses),
            (Some(40), Some(5), Some(20))
        );
        assert_eq!(live.elo, Some(-120.0));
        assert!(live
            .lines
            .last()
            .unwrap()
            .starts_with("Searching: the first bad commit is one of 1..=4"));
    }
}
