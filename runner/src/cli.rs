//! Argument groups shared by the commands that play games (`match`, `sprt`, `report`,
//! `tune`, `datagen`): each is a clap struct that a command flattens into its own, so an
//! option is declared, documented and validated once. [`crate::plan`] turns them into a
//! checked run.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{CliError, CliResult};
use crate::play::adjudication::Adjudication;

/// The engines of a match: `--engine` (repeated) and `--each`. Each `--engine` keeps its
/// own words (clap's derive would flatten them into one list, so this group is written out
/// by hand).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineArgs {
    /// The words of each `--engine`, one list per occurrence.
    pub engines: Vec<Vec<String>>,
    /// Words applied to every engine (an engine's own words win).
    pub each: Vec<String>,
}

impl clap::FromArgMatches for EngineArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut args = EngineArgs::default();
        args.update_from_arg_matches(m)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        if let Some(occurrences) = m.get_occurrences::<String>("engine") {
            self.engines = occurrences.map(|o| o.cloned().collect()).collect();
        }
        if let Some(each) = m.get_many::<String>("each") {
            self.each = each.cloned().collect();
        }
        Ok(())
    }
}

impl clap::Args for EngineArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            clap::Arg::new("engine")
                .long("engine")
                .num_args(1..)
                .action(clap::ArgAction::Append)
                .value_name("KEY=VALUE")
                .help("An engine: key=value words (give --engine once per engine)"),
        )
        .arg(
            clap::Arg::new("each")
                .long("each")
                .num_args(1..)
                .action(clap::ArgAction::Append)
                .value_name("KEY=VALUE")
                .help("Words applied to every engine, e.g. `nodes=5000` or `tc=10+0.1` (an engine's own words win)"),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// How a run is spread and seeded.
#[derive(clap::Args, Debug, Clone, Serialize, Deserialize)]
pub struct RunArgs {
    /// Games played at once (default: all cores).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Seed of the opening order and of everything random.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// No progress display (the final summary is still printed).
    #[arg(long)]
    pub quiet: bool,
}

impl RunArgs {
    /// `--concurrency`, or every core of this machine.
    pub fn concurrency(&self) -> CliResult<usize> {
        match self.concurrency {
            Some(0) => Err(CliError::usage("--concurrency must be at least 1")),
            Some(n) => Ok(n),
            None => Ok(all_cores()),
        }
    }
}

/// The number of cores this process may use (1 if unknown): the default of every
/// `--concurrency`.
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The opening book.
#[derive(clap::Args, Debug, Clone, Default, Serialize, Deserialize)]
pub struct BookArgs {
    /// Opening book: `FILE [format=epd|pgn] [order=random|sequential] [plies=N] [start=K]`
    /// (default: the built-in balanced book, random order). Pair k plays opening k.
    #[arg(long, num_args = 1.., value_name = "FILE [KEY=VALUE]")]
    pub book: Option<Vec<String>>,
}

/// Early ends of games by score or length (fastchess's words and meaning).
#[derive(clap::Args, Debug, Clone, Default, Serialize, Deserialize)]
pub struct AdjudicationArgs {
    /// Resign adjudication: `movecount=3 score=600 [twosided=true]`.
    #[arg(long, num_args = 0.., value_name = "KEY=VALUE")]
    pub resign: Option<Vec<String>>,
    /// Draw adjudication: `movenumber=34 movecount=8 score=20`.
    #[arg(long, num_args = 0.., value_name = "KEY=VALUE")]
    pub draw: Option<Vec<String>>,
    /// Adjudicate a draw after this many moves (per side).
    #[arg(long, value_name = "N")]
    pub maxmoves: Option<u32>,
    /// Tablebase adjudication: `DIR [pieces=N] [adjudicate=win_loss|draw|both]
    /// [ignore50=false]` (Syzygy directories separated by ':'): a position the tables cover
    /// ends the game with their result.
    #[arg(long, num_args = 1.., value_name = "DIR [KEY=VALUE]")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tb: Option<Vec<String>>,
}

impl AdjudicationArgs {
    /// The checked rules (`--tb` opens and checks its tables).
    pub fn rules(&self) -> CliResult<Adjudication> {
        Adjudication::from_words(
            self.resign.as_deref(),
            self.draw.as_deref(),
            self.maxmoves,
            self.tb.as_deref(),
        )
        .map_err(CliError::usage)
    }
}

/// What happens when an external engine crashes or hangs.
#[derive(clap::Args, Debug, Clone, Serialize, Deserialize)]
pub struct FailureArgs {
    /// Seconds an external engine may stay silent under node or depth limits before it is
    /// killed and forfeits.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub stall_timeout: f64,
    /// After a crash or hang, restart the engine and go on (default for `spar sprt`).
    #[arg(long, overrides_with = "no_recover")]
    pub recover: bool,
    /// Stop the match when an engine crashes or hangs (default for `spar match`).
    #[arg(long)]
    pub no_recover: bool,
}

/// The files a match appends to and the summary it writes.
#[derive(clap::Args, Debug, Clone, Default, Serialize, Deserialize)]
pub struct OutputArgs {
    /// Append every game to this PGN file.
    #[arg(long, value_name = "FILE")]
    pub pgnout: Option<PathBuf>,
    /// Record training positions of every game: `FILE [format=viriformat|text|both]
    /// [min-ply=16] [max-score=3000] [keep-check=false] [keep-tactical=false]`.
    #[arg(long, num_args = 1.., value_name = "FILE [KEY=VALUE]")]
    pub dump_positions: Option<Vec<String>>,
    /// Append one CSV row per game to this file (the record `--resume` continues from).
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,
    /// Write the final summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Continue an interrupted run from its --results file (same command otherwise); with
    /// --slurm, reattach to the run in --run-dir.
    #[arg(long)]
    pub resume: bool,
}

/// SPRT bounds and error rates.
#[derive(clap::Args, Debug, Clone, Serialize, Deserialize)]
pub struct SprtArgs {
    /// SPRT: Elo difference of the null hypothesis (in --model units; default 0).
    #[arg(long, allow_hyphen_values = true)]
    pub elo0: Option<f64>,
    /// SPRT: Elo difference of the alternative hypothesis (default 5).
    #[arg(long, allow_hyphen_values = true)]
    pub elo1: Option<f64>,
    /// SPRT: false positive rate.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// SPRT: false negative rate.
    #[arg(long, default_value_t = 0.05)]
    pub beta: f64,
    /// SPRT: Elo model of the bounds: normalized, logistic or bayesian.
    #[arg(long, default_value = "normalized")]
    pub model: String,
}

/// Running a match, SPRT or datagen as shards of one Slurm job array (see docs/cluster.md).
#[derive(clap::Args, Debug, Clone, Default, Serialize, Deserialize)]
pub struct SlurmArgs {
    /// Run on a Slurm cluster: one job array whose tasks run `spar shard RUN_DIR`; this
    /// process submits, shows progress, stops the array and merges.
    #[arg(long)]
    pub slurm: bool,
    /// The run's directory (manifest, shard records, logs) on a filesystem that every node
    /// shares.
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// Array tasks (shards); shard I plays pairs I, I+N, I+2N, … [default: 8]
    #[arg(long, value_name = "N")]
    pub shards: Option<u64>,
    /// CPUs per array task: the games each shard plays at once [default: 1]
    #[arg(long, value_name = "C")]
    pub cpus_per_shard: Option<usize>,
    /// An extra sbatch option, e.g. `--sbatch-arg=--partition=long` (repeat for more).
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub sbatch_args: Vec<String>,
    /// Check, build and write RUN_DIR/manifest.json, but submit nothing: the shards are then
    /// run by another scheduler (`spar shard RUN_DIR --index I`), then `spar merge RUN_DIR`.
    #[arg(long)]
    pub plan_only: bool,
}

impl SlurmArgs {
    /// Shards when `--shards` is not given.
    pub const DEFAULT_SHARDS: u64 = 8;

    /// Refuses the cluster options without `--slurm`.
    pub fn check_local(&self) -> CliResult {
        let given = [
            (self.run_dir.is_some(), "--run-dir"),
            (self.shards.is_some(), "--shards"),
            (self.cpus_per_shard.is_some(), "--cpus-per-shard"),
            (!self.sbatch_args.is_empty(), "--sbatch-arg"),
            (self.plan_only, "--plan-only"),
        ];
        match given.iter().find(|(g, _)| *g) {
            Some((_, flag)) if !self.slurm => Err(CliError::usage(format!(
                "{flag} belongs to a cluster run: add --slurm --run-dir DIR, or leave {flag} out"
            ))),
            _ => Ok(()),
        }
    }
}
