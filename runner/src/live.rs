//! A run's live numbers, as the job contract gives them (`Job::live_reader`): what a
//! kind's files say now — W-L-D, Elo, the SPRT's LLR and verdict, a tune's iterations, a
//! datagen's positions, `spar status`'s lines — and the [`LiveReader`] that keeps them up
//! to date from the bytes appended since its last read. A server's run cache
//! (`serve::cache`) holds one reader per run and serves its last [`Reading`]; `spar status`
//! and the readers share the arithmetic (`cluster::status::Snapshot`), so both show the
//! same numbers.

use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What a run's files say now.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    pub shards: Vec<Shard>,
}

/// One shard of a cluster run, as the run's page and the machines page show it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    /// Pairs (datagen: games) done, and its share of a fixed-size run.
    pub done: u64,
    pub share: Option<u64>,
    /// Its Slurm state (`RUNNING`, `PENDING`), when the queue knows it.
    pub state: Option<String>,
    /// Seconds since its last record.
    pub age: Option<f64>,
    pub stalled: bool,
    pub failed: Option<String>,
}

/// `x`, or `None` when it is not finite (an estimate without spread); `-0.0` reads `0.0`.
pub fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x + 0.0)
}

/// Where a server keeps a run's files: what a kind's reader is made from.
#[derive(Clone, Debug)]
pub struct LiveRun {
    /// Its primary file (a results CSV, `tune.csv`, the training file, `stats.json`).
    pub file: PathBuf,
    /// A cluster run's run directory (`None`: a local run).
    pub cluster: Option<PathBuf>,
    /// Its words (what the kind reads more of them is its own: a datagen's `--format`).
    pub words: Vec<String>,
}

/// What a reader read at one moment: the numbers and, for a kind whose run page draws
/// more (a tune's trajectories), the view it drew them from (the kind's own type).
#[derive(Clone, Default)]
pub struct Reading {
    /// The numbers and status lines.
    pub live: Live,
    /// The kind's view of the same read (`None` for most kinds, or before there is one).
    pub view: Option<Arc<dyn Any + Send + Sync>>,
}

/// A kind's incremental reader of one run's files.
pub trait LiveReader: Send {
    /// Reads what changed since the last call (the bytes appended; the whole file again
    /// when it is no extension of what was read) and returns the reading now, or `None`
    /// when nothing changed since the last call (the first call always gives one).
    fn update(&mut self) -> Option<Reading>;
}
