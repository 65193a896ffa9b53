//! The arguments of a tune (`spar tune`), as the command line gives them and a cluster
//! run's manifest stores them: the parameters, the schedule, the engine, the files, the
//! verification SPRT and the cluster options.

use std::path::PathBuf;

use crate::cli::{AdjudicationArgs, BookArgs, RunArgs, SlurmArgs};
use crate::tune;

/// Tune parameters of the builtin engine, or the spin options of an external UCI engine,
/// by SPSA self-play, as OpenBench does.
///
///   spar tune --param rfp_margin --param lmr_base --each nodes=5000 --iterations 2000 --csv run.csv
///
///   spar tune --params spsa.txt --each tc=8+0.08 --csv run.csv --out tuned.txt
///
///   spar tune --params spsa.txt --engine cmd=./myengine option.Hash=8 --each nodes=5000 --csv run.csv
///
///   spar tune --plot run.csv                 (writes run.svg)
///
///   spar tune --params spsa.txt --each nodes=5000 --probe   (preflight: is c_end measurable?)
///
/// `--params FILE` takes OpenBench lines `name, int, start, min, max, c_end, r_end` (as
/// `spar params --search` prints them) or fishtest lines `name, start, min, max, c_end,
/// r_end`; `--param NAME` takes a parameter's registered default, range and step sizes.
/// For an external engine (`cmd=`) a parameter is a `spin` option of the engine, sent with
/// `setoption` before each game; each is checked against the engine's `uci` answer first.
/// Each iteration plays --pairs-per-iteration game pairs (in parallel) between θ + c_k·Δ
/// and θ − c_k·Δ for a random ±1 vector Δ, then moves θ by r_k·c_k·(W − L)·Δ.
/// At the end the averaged θ over the last quarter of the iterations is printed beside the
/// last iterate, with an error bar per parameter; `spar status run.csv` shows a run's state.
#[derive(clap::Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[command(verbatim_doc_comment)]
pub struct TuneArgs {
    /// SPSA input file: one parameter per line (OpenBench or fishtest form).
    #[arg(long, value_name = "FILE")]
    pub(crate) params: Option<PathBuf>,
    /// Tune this registered parameter from its default (repeatable).
    #[arg(long = "param", value_name = "NAME")]
    pub(crate) param: Vec<String>,
    /// Number of iterations N (the schedule depends on it).
    #[arg(long, default_value_t = 25_000)]
    pub(crate) iterations: u64,
    /// Game pairs per iteration (each opening once per colour).
    #[arg(long, default_value_t = 8, value_name = "P")]
    pub(crate) pairs_per_iteration: u64,
    /// Learning-rate decay exponent α.
    #[arg(long, default_value_t = 0.602)]
    pub(crate) alpha: f64,
    /// Perturbation decay exponent γ.
    #[arg(long, default_value_t = 0.101)]
    pub(crate) gamma: f64,
    /// A as a fraction of the iterations.
    #[arg(long, default_value_t = 0.1)]
    pub(crate) a_ratio: f64,
    /// Iterations that may play ahead of the last complete one: iteration j plays from θ
    /// after iteration j − 1 − D, so D + 1 iterations run at once (on threads or shards).
    /// Part of the schedule: the same seed and options give the same trajectory whatever
    /// the threads or shards; 0 is sequential SPSA (docs/tuning.md).
    #[arg(long, default_value_t = 0, value_name = "D")]
    #[serde(default)]
    pub(crate) delay: u64,
    /// The engine being tuned, in `spar match`'s engine words (default: the builtin engine):
    /// `cmd=PATH` (with `args=`, `dir=`, `option.X=V`) for an external UCI engine, whose
    /// tuned parameters are its `spin` options; combined with --each.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE", action = clap::ArgAction::Set)]
    pub(crate) engine: Vec<String>,
    /// Engine words for both sides: a limit (`nodes=5000`, `tc=8+0.08`, `depth=`,
    /// `movetime=`), `option.Hash=8`, fixed overrides `option.<param>=<v>`, `params=FILE`.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub(crate) each: Vec<String>,
    #[command(flatten)]
    pub(crate) book: BookArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) adjudication: AdjudicationArgs,
    /// Trajectory CSV: one row per iteration (θ, c_k, r_k), appended as the run goes.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,
    /// Continue an interrupted run from its --csv file (same command otherwise); with
    /// --slurm, reattach to the run in --run-dir.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Write the final values as `name, value` lines (load with `--engine … params=FILE`):
    /// the averaged θ over the last quarter of the iterations, rounded (the last iterate
    /// is printed beside it).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Instead of tuning, a preflight: per parameter a match of θ + c_end against θ − c_end
    /// (the others at their start), its Elo gap ± error, flags for steps too small to
    /// measure or without effect, and suggested c_end, r_end and game budget.
    #[arg(long, conflicts_with_all = ["csv", "resume", "out", "plot", "slurm"])]
    #[serde(default)]
    pub(crate) probe: bool,
    /// With --probe: games per parameter (pairs: each opening once per colour).
    #[arg(long, value_name = "N", requires = "probe", default_value_t = tune::probe::DEFAULT_GAMES)]
    #[serde(default)]
    pub(crate) probe_games: u64,
    /// Draw the trajectory in this CSV as an SVG instead of tuning.
    #[arg(long, value_name = "CSV", conflicts_with_all = ["params", "param", "resume", "out"])]
    pub(crate) plot: Option<PathBuf>,
    /// With --plot: where to write the SVG (default: the CSV's name with .svg).
    #[arg(long, value_name = "FILE", requires = "plot")]
    pub(crate) svg: Option<PathBuf>,
    #[command(flatten)]
    #[serde(default)]
    pub(crate) verify: VerifyArgs,
    #[command(flatten)]
    #[serde(default)]
    pub(crate) slurm: SlurmArgs,
}

/// The SPRT of the tuned values against the start values that ends a tune.
#[derive(clap::Args, Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct VerifyArgs {
    /// Skip the verification SPRT (tuned against start) at the end of the run.
    #[arg(long)]
    #[serde(default)]
    pub no_verify: bool,
    /// Limit words of the verification games instead of the tune's (e.g. `tc=10+0.1`, to
    /// verify at a longer time control); other --each words are kept.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    #[serde(default)]
    pub verify_each: Vec<String>,
    /// Elo of the verification SPRT's null hypothesis [default: 0].
    #[arg(long, value_name = "ELO", allow_hyphen_values = true)]
    #[serde(default)]
    pub verify_elo0: Option<f64>,
    /// Elo of the verification SPRT's alternative [default: 5].
    #[arg(long, value_name = "ELO", allow_hyphen_values = true)]
    #[serde(default)]
    pub verify_elo1: Option<f64>,
    /// At most this many verification games (the SPRT may end undecided).
    #[arg(long, value_name = "N")]
    #[serde(default)]
    pub verify_games: Option<u64>,
}
