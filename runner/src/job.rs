//! The job contract: what every long-running kind of spar run is to the code that plans,
//! plays, resumes, observes and merges runs without knowing which command made them.
//!
//! A *job* is anything spar plays for a long time: a match or SPRT, an SPSA tune (with its
//! probe and verification SPRT), training-data generation, and the `track!` report. Each
//! kind lives in one room of `jobs/` and implements [`Job`]; `jobs::KINDS` lists them, one
//! line each. A kind's life:
//!
//! 1. **Plan.** `cmd/` turns clap arguments into the kind's argument struct (serialisable:
//!    a cluster run's manifest stores it); the kind checks it and builds its validated plan
//!    (`MatchPlan` for the kinds that play pairs of games, the datagen plan for datagen).
//! 2. **Play.** Locally on this machine's threads, or, with `--slurm`, as the shards of a
//!    cluster run: the kind writes the manifest, and `cluster::coordinator` — generic over
//!    this trait — submits, watches, resubmits, stops and merges. Each shard runs
//!    [`Job::play_shard`].
//! 3. **Records.** A shard appends what it plays to `RUN_DIR/shards/I/` in one of two
//!    [`RecordShape`]s that `cluster::records` reads incrementally: pairs of games (results
//!    rows, deduplicated by pair) or training games (a training file).
//! 4. **Merge.** [`Job::merge`] writes the local command's own files from the records, byte
//!    for byte what the local run writes; [`Job::outputs`] names them beforehand so that
//!    none can be a file the run reads or owns.
//! 5. **Status.** [`Job::status`] is the view of a run directory (text lines and an HTML
//!    page); [`Job::status_of_file`] that of a local run's own file, for the kinds that
//!    have one.
//! 6. **Live.** [`Job::live_reader`] makes the kind's incremental reader of a server's run
//!    (`crate::live::LiveReader`): the numbers `spar status` shows, updated from the bytes
//!    appended since its last read, for the server's run cache.
//!
//! Why a trait, not an enum: the coordinator, the records, `spar shard`, `spar merge`,
//! `spar status` and a server hold a `&dyn Job` and never branch on the command; adding a
//! kind is one module implementing the trait plus one line in `jobs::KINDS`, with no new
//! `match` arm anywhere. Each kind's argument and plan types stay its own (they are
//! different things), so the trait's methods take the manifest, whose `args` hold them.

use std::path::{Path, PathBuf};

use crate::cli::OutputArgs;
use crate::cluster::manifest::Manifest;
use crate::cluster::merged::Merged;
use crate::cluster::records::{RecordShape, Records};
use crate::cluster::shard::ShardRun;
use crate::error::CliResult;
use crate::live::{LiveReader, LiveRun};

/// What a run's total counts, and what its shards record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Pairs of games (each opening with both colours): match, SPRT, tune, report.
    Pairs,
    /// Single games: datagen.
    Games,
}

impl Unit {
    /// The unit's plural, as messages say it (`pairs`, `games`).
    pub fn plural(self) -> &'static str {
        match self {
            Unit::Pairs => "pairs",
            Unit::Games => "games",
        }
    }

    /// Games in `n` units.
    pub fn games(self, n: u64) -> u64 {
        match self {
            Unit::Pairs => 2 * n,
            Unit::Games => n,
        }
    }
}

/// What `spar status` shows of a run: text lines and a self-contained HTML page.
pub trait StatusView {
    /// The lines `spar status` prints.
    fn lines(&self) -> Vec<String>;
    /// The page `spar status --html` writes.
    fn page(&self) -> String;
}

/// A long-running kind of spar run (see the module documentation).
pub trait Job: Sync {
    /// The command that starts it, as a manifest and a run record name it (`match`,
    /// `sprt`, `tune`, `datagen`, `report`).
    fn command(&self) -> &'static str;

    /// What its total counts.
    fn unit(&self) -> Unit;

    /// The kind's own checks of a manifest that passed the generic ones (a plan where it
    /// needs one, a total where it needs one, …): `Err` says what is wrong.
    fn check_manifest(&self, m: &Manifest) -> Result<(), String>;

    /// How its shards record.
    fn records(&self, m: &Manifest) -> CliResult<RecordShape>;

    /// Plays shard `shard` of the run (this process is in the directory the run was
    /// started in; the manifest has been checked against this binary and the inputs).
    fn play_shard(&self, shard: &ShardRun) -> CliResult;

    /// Whether the run is over by its records (every pair or game played, or its SPRT
    /// decided).
    fn finished(&self, m: &Manifest, records: &Records) -> CliResult<bool>;

    /// The live line of the coordinator's progress display.
    fn progress_message(&self, m: &Manifest, records: &Records) -> String;

    /// Every file a merge writes, with the flag that names it (`files`: `spar merge`'s own
    /// output options, when given).
    fn outputs(
        &self,
        m: &Manifest,
        files: Option<&OutputArgs>,
    ) -> CliResult<Vec<(String, PathBuf)>>;

    /// Refuses an output option of `spar merge` (`files`) that this run cannot honour.
    fn check_merge_options(&self, dir: &Path, m: &Manifest, files: &OutputArgs) -> CliResult;

    /// Writes the local command's files from the records of the run in `dir` (or `files`,
    /// when given) and returns what it printed.
    fn merge(&self, dir: &Path, m: &Manifest, files: Option<&OutputArgs>) -> CliResult<Merged>;

    /// The status view of the run directory `dir`.
    fn status(&self, dir: &Path, m: &Manifest) -> CliResult<Box<dyn StatusView>>;

    /// Whether `path` is a local run's file of this kind that `spar status FILE` shows (a
    /// results CSV, a tune's trajectory).
    fn owns_file(&self, path: &Path) -> bool {
        let _ = path;
        false
    }

    /// The files `spar status FILE --html` reads of a local run's file of this kind, each
    /// with what names it: the page may be none of them.
    fn file_inputs(&self, path: &Path) -> Vec<(&'static str, PathBuf)> {
        let _ = path;
        Vec::new()
    }

    /// The status view of a local run's file (see [`Job::owns_file`]).
    fn status_of_file(&self, path: &Path) -> CliResult<Box<dyn StatusView>> {
        Err(crate::error::CliError::usage(format!(
            "{}: spar {} keeps no file that spar status shows",
            path.display(),
            self.command()
        )))
    }

    /// The reader of this kind's live numbers of a run whose files are where `run` says (a
    /// local run's own file, or a cluster run's directory): a server's run cache keeps one
    /// per run and updates it from the bytes appended since its last read; its numbers are
    /// those `spar status` prints of the same files.
    fn live_reader(&'static self, run: &LiveRun) -> Box<dyn LiveReader>;
}
