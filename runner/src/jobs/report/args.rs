//! The arguments of `spar report`, as the command line gives them and a cluster run's
//! manifest stores them, and the checks of every file a report reads or writes.

use std::path::PathBuf;

use crate::cli::{AdjudicationArgs, BookArgs, EngineArgs, FailureArgs, RunArgs, SlurmArgs};
use crate::error::{CliError, CliResult};
use crate::files::paths::PathCheck;
use crate::plan::{MatchPlan, PlanRequest, Run};
use crate::report;

/// Play games and report what every `track!(…)` site recorded: count, mean, mean of |x|,
/// standard deviation, min, max and a histogram, per variant, with the differences between
/// two variants and their significance.
///
///   spar report --engine name=dev option.rfp_margin=60 --engine name=base --each nodes=5000 --games 40 --out rep
///
///   spar report --from rep/stats.json                      re-render a saved run
///   spar report --from base.json --from dev.json --out cmp  compare two saved runs
///
///   spar report ... --slurm --run-dir /shared/rep --shards 16   play the games as a cluster run
///
/// Builtin engines need a spar built with the `track` feature; a spar without it builds
/// one from the working tree (`cargo build --release --features track`, cached) and runs
/// that instead, unless --no-build. External spar builds (`cmd=…`, `features=track`) are
/// asked to dump their statistics through the `TrackFile` UCI option.
///
/// Engine keys are those of `spar match` (name, cmd, args, dir, git, features, params,
/// `option.<Name>`, nodes, depth, movetime, st, tc, timemargin).
#[derive(clap::Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[command(verbatim_doc_comment)]
pub struct ReportArgs {
    #[command(flatten)]
    pub(crate) engines: EngineArgs,
    /// Number of games (even: each opening is played once with each colour).
    #[arg(long, default_value_t = 20)]
    pub(crate) games: u64,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) book: BookArgs,
    #[command(flatten)]
    pub(crate) adjudication: AdjudicationArgs,
    /// Write stats.csv, stats.json and report.html into this directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Report saved statistics (stats.json, stats.csv or a TrackFile dump) instead of
    /// playing; give it twice to compare two runs.
    #[arg(long, value_name = "FILE", action = clap::ArgAction::Append)]
    pub(crate) from: Vec<PathBuf>,
    /// Fail instead of building a track-enabled spar when this one lacks the feature.
    #[arg(long)]
    pub(crate) no_build: bool,
    #[command(flatten)]
    pub(crate) failure: FailureArgs,
    /// With --slurm: reattach to the run in --run-dir (same options) and continue it.
    #[arg(long)]
    #[serde(default)]
    pub(crate) resume: bool,
    #[command(flatten)]
    #[serde(default)]
    pub(crate) slurm: SlurmArgs,
}

/// Every file the report reads or writes, checked before any game: inputs are regular
/// files, no output is an input, another output or a file of `run_dir`, and the `--out`
/// directory can be made and written.
pub(super) fn check_paths(args: &ReportArgs, run_dir: Option<&PathBuf>) -> CliResult {
    let mut check = PathCheck::new();
    for f in &args.from {
        check.input("--from", f);
    }
    check.engines(&args.engines.engines, &args.engines.each);
    check.tb_words(args.adjudication.tb.as_deref());
    // A spar without `track` builds one that has it (unless --no-build).
    if !args.engines.engines.is_empty() && !args.no_build && !engine::track::ENABLED {
        check.builds();
    }
    check.book_words(args.book.book.as_deref());
    if let Some(dir) = run_dir {
        check.run_dir(dir);
    }
    if let Some(dir) = &args.out {
        for name in report::FILES {
            check.output("--out", dir.join(name));
        }
    }
    check.inputs()?;
    check.collisions()?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::usage(format!(
                "--out {}: cannot create the directory: {e} (give a writable directory)",
                dir.display()
            ))
        })?;
    }
    check.writable()
}

/// The plan of the games (one engine playing itself, or two).
pub(super) fn plan(args: &ReportArgs) -> CliResult<(MatchPlan, Run)> {
    MatchPlan::build(&PlanRequest {
        engines: &args.engines,
        seats: 1..=2,
        example: "--engine name=dev option.rfp_margin=60 --engine name=base",
        run: &args.run,
        games: Some(args.games),
        default_games: None,
        book: &args.book,
        adjudication: args.adjudication.rules()?,
        failure: Some(&args.failure),
        recover_by_default: false,
        sprt: None,
    })
}
