//! A run's live numbers and status view, read from its files (the files are the truth)
//! — with the Slurm backend, a cluster run's from its run directory (its shards too):
//! the job contract's status view of the run's own file (`jobs::owning`,
//! `status_of_file`) and, for a match or SPRT, the snapshot's numbers.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sprt::Decision;

use super::{slurm, views, words};
use crate::job::StatusView;
use crate::jobs;
use crate::jobs::tune::status::TuneView;

/// What a run's files say now.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Live {
    /// Games played.
    pub games: Option<u64>,
    pub wins: Option<u64>,
    pub losses: Option<u64>,
    pub draws: Option<u64>,
    /// Elo of the first engine and its 95 % error.
    pub elo: Option<f64>,
    pub elo_error: Option<f64>,
    /// The SPRT's LLR and bounds.
    pub llr: Option<f64>,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    /// `H1`, `H0` or none (an SPRT still playing, or no SPRT).
    pub verdict: Option<String>,
    /// A tune's iterations done.
    pub iteration: Option<u64>,
    /// A datagen run's positions: in its complete games (the viriformat file's positions,
    /// or the text file's lines when it writes only text).
    pub positions: Option<u64>,
    /// A datagen run's positions per second since its child last started (to the end of
    /// the run once it has ended).
    pub positions_per_s: Option<f64>,
    /// `spar status`'s lines for the run's file.
    pub lines: Vec<String>,
    /// A cluster run's shards (the Slurm backend; empty otherwise).
    pub shards: Vec<slurm::Shard>,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x + 0.0)
}

/// The numbers of `run`: for a run that plays, from its files; for one that does not,
/// those its files gave when its child last ended (stored in its row), else its files.
pub fn of(store: &super::store::Store, run: &super::db::runs::Run) -> Live {
    let mut out = None;
    if !matches!(run.state.as_str(), "queued" | "running") {
        let stored = store.blocking(|db| db.last_live(run.id)).ok().flatten();
        out = stored.and_then(|t| serde_json::from_str(&t).ok());
    }
    let mut out: Live =
        out.unwrap_or_else(|| live(run.kind.as_str(), &run.words, Path::new(&run.dir)));
    out.positions_per_s = rate(run, &out);
    out
}

/// What a run's page shows of its files, read at one moment: the live numbers and, for a
/// tune, the trajectory view its section draws (from the same read, so the table, the
/// status lines and the section agree).
pub struct Reading {
    /// The numbers and status lines.
    pub live: Live,
    /// A tune's view (`None` for the other kinds, or before its files can be read).
    pub tune: Option<TuneView>,
}

/// [`of`], with a tune's view from the same read of its files.
pub fn reading(db: &super::store::Store, run: &super::db::runs::Run) -> Reading {
    let dir = Path::new(&run.dir);
    if run.kind.as_str() != "tune" || !matches!(run.state.as_str(), "queued" | "running") {
        let live = of(db, run);
        let tune = (run.kind.as_str() == "tune")
            .then(|| views::tune(dir))
            .flatten();
        return Reading { live, tune };
    }
    if !slurm::is_cluster_run(dir) {
        let tune = views::tune(dir);
        let live = tune.as_ref().map(tune_numbers).unwrap_or_default();
        return Reading { live, tune };
    }
    // A cluster tune: its view and its shards' lines from one snapshot of the shards.
    let rd = slurm::run_dir(dir);
    let snap = jobs::read(&rd).ok().and_then(|(m, job)| {
        let snap = crate::cluster::status::of_run(&rd, &m, job).ok()?;
        let view = jobs::tune::status_cluster::view(&rd, &m, &snap).ok();
        Some((view, shard_lines(&snap)))
    });
    let Some((tune, shards)) = snap else {
        return Reading {
            live: Live::default(),
            tune: None,
        };
    };
    let live = Live {
        shards,
        ..tune.as_ref().map(tune_numbers).unwrap_or_default()
    };
    Reading { live, tune }
}

/// A tune's numbers and lines from its view.
fn tune_numbers(view: &TuneView) -> Live {
    Live {
        lines: view.lines(),
        iteration: view.rows.last().map(|r| r.iteration),
        games: view.rows.last().map(|r| r.games),
        ..Live::default()
    }
}

/// A datagen run's positions per second: its positions over the seconds from its child's
/// last start to its end (or now); `None` before it has positions or a start.
fn rate(run: &super::db::runs::Run, l: &Live) -> Option<f64> {
    let positions = l.positions.filter(|_| run.kind.as_str() == "datagen")?;
    let end = match run.state.as_str() {
        "running" => super::db::runs::now(),
        _ => run.finished?,
    };
    let secs = end - run.started?;
    (secs > 0).then(|| positions as f64 / secs as f64)
}

/// The live numbers of a run of `kind` with `words` whose files are in `dir`.
pub fn live(kind: &str, words: &[String], dir: &Path) -> Live {
    if let Some(out) = cluster(kind, words, dir) {
        return out;
    }
    let file = words::primary_of(kind, dir, words).unwrap_or_default();
    let mut out = Live::default();
    if !file.is_file() {
        return out;
    }
    // Each kind's file is read once, so that its numbers and its status lines are of one
    // moment. A training file is no kind's own file for `spar status` (the match's results
    // CSV is the catch-all there): datagen's numbers are its complete games.
    match kind {
        "match" | "sprt" => {
            if let Ok(snap) = crate::cluster::status::of_csv(&file) {
                out.lines = snap.lines();
                numbers(&snap, &mut out);
            }
        }
        "tune" => {
            if let Some(view) = views::tune(dir) {
                out = tune_numbers(&view);
            }
        }
        "datagen" => {
            let format = words::format_of(words);
            if let Ok(ends) = data::training::files::game_ends(&file, format) {
                let paths = format.paths(&file);
                let (vf, text) = (paths.viriformat.is_some(), paths.text.is_some());
                let games = match (vf, text) {
                    (true, true) => ends.viriformat.len().min(ends.text.len()),
                    (true, false) => ends.viriformat.len(),
                    _ => ends.text.len(),
                };
                let counted = if vf { &ends.viriformat } else { &ends.text };
                out.games = Some(games as u64);
                out.positions = Some(games.checked_sub(1).map_or(0, |g| counted[g].1));
            }
            if out.lines.is_empty() {
                out.lines = vec![
                    format!("Games: {}", out.games.unwrap_or(0)),
                    format!("Positions: {}", out.positions.unwrap_or(0)),
                ];
            }
        }
        _ => {
            if let Some(view) = jobs::owning(&file).and_then(|job| job.status_of_file(&file).ok()) {
                out.lines = view.lines();
            }
        }
    }
    out
}

/// The live numbers of a cluster run from its run directory (`None`: the run in `dir` is
/// no cluster run, or its directory cannot be read: the caller reads the local files).
fn cluster(kind: &str, words: &[String], dir: &Path) -> Option<Live> {
    if !slurm::is_cluster_run(dir) {
        return None;
    }
    let rd = slurm::run_dir(dir);
    let (m, job) = jobs::read(&rd).ok()?;
    let snap = crate::cluster::status::of_run(&rd, &m, job).ok()?;
    let mut out = Live {
        lines: snap.lines(),
        shards: shard_lines(&snap),
        ..Live::default()
    };
    match kind {
        "match" | "sprt" => numbers(&snap, &mut out),
        "tune" => {
            // The tune's view from the same snapshot of its shards.
            if let Ok(view) = jobs::tune::status_cluster::view(&rd, &m, &snap) {
                out = Live {
                    shards: out.shards,
                    ..tune_numbers(&view)
                };
            }
        }
        "datagen" => {
            out.games = snap.games_done;
            out.positions = Some(shard_positions(&rd, &out.shards, words::format_of(words)));
        }
        _ => {}
    }
    Some(out)
}

/// The server's lines of a cluster run's shards.
fn shard_lines(snap: &crate::cluster::status::Snapshot) -> Vec<slurm::Shard> {
    snap.shards
        .iter()
        .map(|s| slurm::Shard {
            index: s.index,
            done: s.done,
            share: s.share,
            state: s.state.clone(),
            age: s.age,
            stalled: s.stalled,
            failed: s.failed.clone(),
        })
        .collect()
}

/// A cluster datagen run's positions: those of each shard's complete games (its records'
/// count) in the shard's training file — the viriformat file's positions, or the text
/// file's lines when it writes only text.
fn shard_positions(
    rd: &Path,
    shards: &[slurm::Shard],
    format: data::training::files::Format,
) -> u64 {
    shards
        .iter()
        .filter(|s| s.done > 0)
        .filter_map(|s| {
            let file = crate::cluster::shard_positions(rd, s.index);
            let ends = data::training::files::game_ends(&file, format).ok()?;
            let counted = match format.paths(&file).viriformat {
                Some(_) => ends.viriformat,
                None => ends.text,
            };
            let games = (s.done as usize).min(counted.len());
            games.checked_sub(1).map(|g| counted[g].1)
        })
        .sum()
}

/// A match's or SPRT's numbers from a snapshot of its files.
pub fn numbers(snap: &crate::cluster::status::Snapshot, out: &mut Live) {
    let tally = snap.tally();
    let g = &tally.games;
    out.games = Some(g.games());
    (out.wins, out.losses, out.draws) = (Some(g.wins), Some(g.losses), Some(g.draws));
    let sample = match &snap.sprt {
        Some(s) => crate::summary::sample(&tally, s),
        None => sprt::Sample::Pentanomial(tally.pairs),
    };
    if g.games() > 0 {
        let e = sample.estimate();
        out.elo = finite(e.elo);
        out.elo_error = finite(e.elo_error);
    }
    if let Some(st) = snap.sprt.as_ref().and_then(|s| s.status(&sample).ok()) {
        out.llr = finite(st.llr);
        out.lower = Some(st.lower_bound);
        out.upper = Some(st.upper_bound);
        out.verdict = match st.decision {
            Decision::H1 => Some("H1".into()),
            Decision::H0 => Some("H0".into()),
            Decision::Continue => None,
        };
    }
}

/// The HTML page `spar status FILE --html` writes for the run's file, if its kind shows one.
pub fn page(kind: &str, words: &[String], dir: &Path) -> Option<String> {
    if slurm::is_cluster_run(dir) {
        let rd = slurm::run_dir(dir);
        let (m, job) = jobs::read(&rd).ok()?;
        return job.status(&rd, &m).ok().map(|v| v.page());
    }
    let file = words::primary_of(kind, dir, words)?;
    if !file.is_file() || kind == "datagen" {
        return None;
    }
    let job = jobs::owning(&file)?;
    job.status_of_file(&file).ok().map(|v| v.page())
}
