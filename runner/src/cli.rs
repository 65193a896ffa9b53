//! Argument groups shared by the commands that play games (`match`, `sprt`, `report`,
//! `tune`, `datagen`): each is a clap struct that a command flattens into its own, so an
//! option is declared, documented and validated once. [`crate::plan`] turns them into a
//! checked run.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use sprt::{Model, Sprt, SprtError};

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
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    pub alpha: f64,
    /// SPRT: false negative rate.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    pub beta: f64,
    /// SPRT: Elo model of the bounds: normalized, logistic or bayesian.
    #[arg(long, default_value = "normalized")]
    pub model: String,
}

/// SPRT bounds when none are given: [0, 5] in the units of --model (normalized by default),
/// a common "gainer" test.
pub const DEFAULT_SPRT_BOUNDS: (f64, f64) = (0.0, 5.0);

/// The error rates when none are given.
pub const DEFAULT_SPRT_RATES: (f64, f64) = (0.05, 0.05);

/// An SPRT as given, before it is checked: what `spar sprt`'s options, `spar stats`,
/// `spar sim` and the personalities' `-sprt KEY=VALUE` words all become, so that every one
/// of them is checked by [`SprtBounds::check`] alone.
#[derive(Clone, Debug, PartialEq)]
pub struct SprtBounds {
    /// Elo of the null hypothesis.
    pub elo0: f64,
    /// Elo of the alternative.
    pub elo1: f64,
    /// False positive rate.
    pub alpha: f64,
    /// False negative rate.
    pub beta: f64,
    /// Elo model of the bounds (`normalized`, `logistic`, `bayesian`).
    pub model: String,
}

/// Why SPRT bounds were refused.
#[derive(Clone, Debug, PartialEq)]
pub enum BoundsError {
    /// The model is none spar knows (the message says which are).
    Model(String),
    /// The numbers: the error names the key at fault (`elo0 (5) must be less than …`).
    Test(SprtError),
}

impl std::fmt::Display for BoundsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoundsError::Model(m) => f.write_str(m),
            BoundsError::Test(t) => write!(f, "{t}"),
        }
    }
}

impl SprtBounds {
    /// The checked test: finite elo0 < elo1, 0 < alpha < 1, 0 < beta < 1, alpha + beta < 1,
    /// a known model. The caller says how the user spelt the bounds.
    pub fn check(&self) -> Result<Sprt, BoundsError> {
        let model: Model = self
            .model
            .parse()
            .map_err(|e| BoundsError::Model(format!("{e}")))?;
        Sprt::new(self.elo0, self.elo1, self.alpha, self.beta, model).map_err(BoundsError::Test)
    }

    /// [`Self::check`] with the message in spar's option words (`--model X: …`, `SPRT
    /// --elo0 A --elo1 B --alpha C --beta D: …`), exit code 2: `spar sprt`, `stats`, `sim`.
    pub fn check_options(&self) -> CliResult<Sprt> {
        self.check().map_err(|e| match e {
            BoundsError::Model(m) => CliError::usage(format!("--model {}: {m}", self.model)),
            BoundsError::Test(t) => CliError::usage(format!(
                "SPRT --elo0 {} --elo1 {} --alpha {} --beta {}: {t}",
                self.elo0, self.elo1, self.alpha, self.beta
            )),
        })
    }

    /// Reads `KEY=VALUE` words (the personalities' `-sprt`): `elo0=`, `elo1=`, `alpha=`,
    /// `beta=` (numbers, negative ones included) and, where `keys` lists it, `model=`. Both
    /// bounds or neither ([`DEFAULT_SPRT_BOUNDS`]); the rates default to
    /// [`DEFAULT_SPRT_RATES`], the model to `normalized`. Not checked: see [`Self::check`].
    pub fn from_words(words: &[String], keys: &[&str]) -> Result<SprtBounds, String> {
        let (mut elo0, mut elo1) = (None, None);
        let (mut alpha, mut beta) = DEFAULT_SPRT_RATES;
        let mut model = "normalized".to_string();
        for w in words {
            let Some((k, v)) = w.split_once('=') else {
                return Err(format!("'{w}' is not key=value ({})", keys.join(", ")));
            };
            if !keys.iter().any(|key| key.strip_suffix('=') == Some(k)) {
                return Err(format!("unknown key '{k}' ({})", keys.join(", ")));
            }
            if k == "model" {
                model = v.to_string();
                continue;
            }
            let x: f64 = v
                .trim()
                .parse()
                .map_err(|_| format!("{k}={v}: '{v}' is not a number"))?;
            match k {
                "elo0" => elo0 = Some(x),
                "elo1" => elo1 = Some(x),
                "alpha" => alpha = x,
                _ => beta = x,
            }
        }
        let (elo0, elo1) = match (elo0, elo1) {
            (Some(e0), Some(e1)) => (e0, e1),
            (None, None) => DEFAULT_SPRT_BOUNDS,
            (Some(_), None) => return Err("elo0= needs elo1= too: give both bounds".into()),
            (None, Some(_)) => return Err("elo1= needs elo0= too: give both bounds".into()),
        };
        Ok(SprtBounds {
            elo0,
            elo1,
            alpha,
            beta,
            model,
        })
    }
}

/// Running a match, SPRT, datagen or report as shards of one Slurm job array (see docs/cluster.md).
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

    /// Refuses the cluster options without `--slurm`, and zero shards or CPUs per shard
    /// (named as given, before any other check speaks of what they become).
    pub fn check_local(&self) -> CliResult {
        if self.shards == Some(0) {
            return Err(CliError::usage("--shards 0: give at least 1 shard"));
        }
        if self.cpus_per_shard == Some(0) {
            return Err(CliError::usage(
                "--cpus-per-shard 0: give at least 1 CPU per shard",
            ));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    const KEYS: &[&str] = &["elo0=", "elo1=", "alpha=", "beta=", "model="];

    #[test]
    fn sprt_words_read_negative_numbers_and_defaults() {
        let b = SprtBounds::from_words(&words("elo0=-3 elo1=-0.5 beta=0.1"), KEYS).unwrap();
        assert_eq!((b.elo0, b.elo1, b.alpha, b.beta), (-3.0, -0.5, 0.05, 0.1));
        assert_eq!(b.model, "normalized");
        let b = SprtBounds::from_words(&[], KEYS).unwrap();
        assert_eq!((b.elo0, b.elo1), DEFAULT_SPRT_BOUNDS);
        assert!(b.check().is_ok());
        let e = SprtBounds::from_words(&words("elo0=1"), KEYS).unwrap_err();
        assert!(e.contains("elo1="), "{e}");
        let e = SprtBounds::from_words(&words("elo0=x elo1=1"), KEYS).unwrap_err();
        assert!(e.contains("'x' is not a number"), "{e}");
        let e = SprtBounds::from_words(&words("model=logistic"), &KEYS[..4]).unwrap_err();
        assert!(e.contains("unknown key 'model'"), "{e}");
        let e = SprtBounds::from_words(&words("elo0"), KEYS).unwrap_err();
        assert!(e.contains("not key=value"), "{e}");
    }

    #[test]
    fn sprt_bounds_are_checked_in_one_place() {
        let bounds = |line: &str| SprtBounds::from_words(&words(line), KEYS).unwrap();
        for (bad, key) in [
            ("elo0=5 elo1=5", "elo0 (5)"),
            ("elo0=5 elo1=0", "elo0 (5)"),
            ("beta=-0.1", "beta (-0.1)"),
            ("alpha=1.5", "alpha (1.5)"),
            ("alpha=0.5 beta=0.5", "alpha + beta"),
            ("elo0=inf elo1=5", "elo0 (inf)"),
            ("model=elo", "unknown SPRT model 'elo'"),
        ] {
            let e = bounds(bad).check().unwrap_err().to_string();
            assert!(e.contains(key), "{bad}: {e}");
            let e = bounds(bad).check_options().unwrap_err();
            assert_eq!(e.code, 2, "{bad}");
            assert!(e.message.contains(key), "{bad}: {}", e.message);
        }
        assert!(bounds("elo0=-2 elo1=3 alpha=0.1 beta=0.2 model=logistic")
            .check()
            .is_ok());
    }
}
