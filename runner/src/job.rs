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
//! 6. **Serve.** A server runs the kinds whose [`Job::served`] is some, and asks the
//!    contract, never the kind's name, what a served run's files are
//!    ([`Job::served_outputs`], [`Job::served_primary`]) and what its page shows and how
//!    it is played ([`Job::served_page`]). Why methods of this trait and not a companion
//!    trait registered beside each kind: a kind is then still one value in one list, and
//!    the answers are facts of the kind (its files, its numbers), which its room knows;
//!    the server keeps the drawing (HTML) and picks a drawing by [`Section`].
//! 7. **Live.** [`Job::live_reader`] makes the kind's incremental reader of a server's run
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

    // What a server needs of the kind: `serve/` knows kinds only through these
    // (docs/architecture.md, "What a kind implements").

    /// Its place in the server's list of kinds (the submit form's menu, whose first is the
    /// form's default, and the message that names the kinds a server runs); `None`: a
    /// server does not run it.
    fn served(&self) -> Option<u8> {
        None
    }

    /// The flags, as words, that give a served run whose directory is `dir` its files (the
    /// server owns a run's files: the user's words name none).
    fn served_outputs(&self, dir: &Path) -> Vec<String> {
        let _ = dir;
        Vec::new()
    }

    /// The file a served run whose directory is `dir` and whose words are `words` keeps its
    /// progress in: what `--resume` continues from and its status view reads.
    fn served_primary(&self, dir: &Path, words: &[String]) -> PathBuf {
        let _ = words;
        dir.to_path_buf()
    }

    /// What a served run's page shows of the kind besides what every run's shows.
    fn served_page(&self) -> ServedPage {
        ServedPage::default()
    }

    /// The kind's own section of served run `id`'s page (HTML, every text escaped with
    /// `crate::html::esc`), drawn from its files in `dir` and the `view` its live reader
    /// gave with its numbers ([`crate::live::Reading::view`]); empty: none.
    fn served_section(
        &self,
        id: i64,
        dir: &Path,
        view: Option<&(dyn std::any::Any + Send + Sync)>,
    ) -> String {
        let _ = (id, dir, view);
        String::new()
    }

    /// The reader of this kind's live numbers of a run whose files are where `run` says (a
    /// local run's own file, or a cluster run's directory): a server's run cache keeps one
    /// per run and updates it from the bytes appended since its last read; its numbers are
    /// those `spar status` prints of the same files.
    fn live_reader(&'static self, run: &LiveRun) -> Box<dyn LiveReader>;

    // What a server's watched branch needs of the kinds (docs/serve.md, "Watched
    // branches"): it finds the kind for each role here, never by a kind's name.

    /// The role this kind plays for a watched branch ([`WatchRole`]); `None`: none.
    fn watch_role(&self) -> Option<WatchRole> {
        None
    }

    /// The words of the run this kind plays for a watched branch's `ask` (only asked of a
    /// kind whose [`Job::watch_role`] is some): checked and run as a person's words are.
    fn watch_words(&self, ask: &WatchAsk) -> Vec<String> {
        let _ = ask;
        Vec::new()
    }

    /// The commit a finished run of this kind found for a watched branch (a bisect's first
    /// bad commit, its full hash), read from the run's files in `dir` (its words are
    /// `words`); `None`: none found, or the run has not ended.
    fn watch_found(&self, dir: &Path, words: &[String]) -> Option<String> {
        let _ = (dir, words);
        None
    }
}

/// What a kind is to a server's watched branch ([`Job::watch_role`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchRole {
    /// Tests one commit against its parent (or a pushed batch's tip against its base): a
    /// non-regression SPRT.
    CommitTest,
    /// Finds the first bad commit of a range whose test failed.
    Bisect,
    /// Measures the tip against a fixed anchor commit: a match of a fixed number of games.
    AnchorTest,
}

/// What a watched branch asks a kind to play ([`Job::watch_words`]).
#[derive(Clone, Debug)]
pub struct WatchAsk<'a> {
    /// The registered engine whose branch is watched.
    pub engine: &'a str,
    /// The full hash of the base side: the parent (a commit test), the last known good
    /// commit (a bisect), the anchor (an anchor test).
    pub base: &'a str,
    /// The full hash of the other side: the commit tested, the first commit known bad (a
    /// bisect), the branch's tip (an anchor test).
    pub tip: &'a str,
    /// The engine's test words for both sides, given after `--each` (`tc=8+0.08
    /// option.Hash=16`).
    pub each: &'a [String],
    /// The engine's other test words, given to every run as they are (`--book NAME`).
    pub extra: &'a [String],
    /// The non-regression bounds `[elo0, elo1]` (normalized Elo, e.g. `[-3, 1]`); a
    /// bisect's drop is `-elo0`.
    pub bounds: [f64; 2],
    /// The games of an anchor test.
    pub games: u64,
}

/// What a served run's page (and the scheduler) make of a kind ([`Job::served_page`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServedPage {
    /// Its numbers' rows: a run of games' (W-L-D, Elo, LLR, iteration), or a datagen's
    /// positions and their rate.
    pub numbers: Numbers,
    /// Whether the page shows `spar status`'s lines of its file (its Status section).
    pub status_lines: bool,
    /// Whether its primary file has the page `spar status FILE --html` writes (shown in
    /// the run's page once the file is there; a cluster run always has one).
    pub status_page: bool,
    /// Whether its training files (`positions…`) get their own table.
    pub training_files: bool,
    /// Whether it resumes from its primary file (`--resume`); `false`: a resumed run
    /// plays from the start again.
    pub resumes: bool,
    /// Whether its games are pairs between the same two engines, so that the machines'
    /// score residuals (`/runs/ID/machines`) mean something.
    pub residuals: bool,
    /// Whether the server plays it with its `track!`-instrumented spar (`--track-spar`).
    pub tracked: bool,
}

/// The numbers a served run's page shows ([`ServedPage::numbers`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Numbers {
    /// W-L-D, Elo, LLR and bounds, a tune's iteration.
    #[default]
    Games,
    /// Training positions and positions per second.
    Positions,
}

/// A served run's output flags, each `(flag, file name)` naming a file in `dir`: the words
/// `FLAG DIR/NAME …` that [`Job::served_outputs`] answers.
pub fn files_in(dir: &Path, flags: &[(&str, &str)]) -> Vec<String> {
    flags
        .iter()
        .flat_map(|(flag, name)| {
            [
                flag.to_string(),
                dir.join(name).to_string_lossy().into_owned(),
            ]
        })
        .collect()
}
