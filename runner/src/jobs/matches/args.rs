//! The arguments of a match or SPRT (`spar match`, `spar sprt`), as the command line gives
//! them and a cluster run's manifest stores them, and their checks: the plan, and every
//! file the match reads or writes.

use std::path::Path;

use super::lines::GameLines;
use crate::cli::{
    AdjudicationArgs, BookArgs, EngineArgs, FailureArgs, OutputArgs, RunArgs, SlurmArgs, SprtArgs,
    DEFAULT_SPRT_RATES,
};
use crate::error::{CliError, CliResult};
use crate::files::paths::PathCheck;
use crate::files::position_dump::{spec_of, DumpSpec};
use crate::files::run_record;
use crate::plan::{MatchPlan, PlanRequest, Run};
use crate::summary::OutputFormat;

/// Play games between two engine variants.
///
/// Each `--engine` takes fastchess-style key=value words; `--each` words apply to every
/// engine (an engine's own words win):
///
///   spar match --engine name=dev option.rfp_margin=90 --engine name=base --each nodes=5000 --games 200
///
///   spar match --engine name=sf cmd=/usr/games/stockfish option.Hash=16 --engine name=spar --each tc=10+0.1
///
/// Engine keys: name, cmd (external UCI engine), args, dir, git / features (build spar at a
/// revision / with cargo features), params (parameter file, builtin), `option.<Name>`,
/// nodes, depth, movetime (ms), st (s), tc (moves/base+inc, seconds), timemargin (ms).
#[derive(clap::Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[command(verbatim_doc_comment)]
pub struct MatchArgs {
    #[command(flatten)]
    pub(crate) engines: EngineArgs,
    /// Number of games (even: N/2 pairs, each opening once per colour). `spar sprt`
    /// without it runs until the SPRT decides; `spar match` defaults to 100.
    #[arg(long)]
    pub(crate) games: Option<u64>,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) book: BookArgs,
    #[command(flatten)]
    pub(crate) adjudication: AdjudicationArgs,
    #[command(flatten)]
    pub(crate) files: OutputArgs,
    /// Format of the final summary.
    #[arg(long, value_enum, default_value = "cutechess")]
    pub(crate) output: OutputFormat,
    #[command(flatten)]
    pub(crate) failure: FailureArgs,
    #[command(flatten)]
    pub(crate) sprt: SprtArgs,
    #[command(flatten)]
    pub(crate) slurm: SlurmArgs,
    /// Print fastchess's (or cutechess-cli's) per-game lines on stdout (`Started game N of
    /// M (A vs B)`, `Finished game N (A vs B): RESULT {reason}`), in game order, their
    /// periodic reports and their final report; `spar fastchess`/`spar cutechess` set it
    /// (`TOOL[:OUTPUT][:rating=N][:every=N]`, see the personalities in cmd/compat).
    #[arg(long, hide = true, num_args = 0..=1, default_missing_value = "fastchess")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) game_lines: Option<String>,
}

impl MatchArgs {
    /// An SPRT as `spar sprt` reads it when only these options are given (every other
    /// option at its default: no output file, no cluster, cutechess output, the failure
    /// policy's and the SPRT's rates and model): how a job that ends in an SPRT (a tune's
    /// verification) makes one without a command line.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sprt(
        engines: EngineArgs,
        games: Option<u64>,
        run: RunArgs,
        book: BookArgs,
        adjudication: AdjudicationArgs,
        elo0: f64,
        elo1: f64,
    ) -> MatchArgs {
        let (alpha, beta) = DEFAULT_SPRT_RATES;
        MatchArgs {
            engines,
            games,
            run,
            book,
            adjudication,
            files: OutputArgs::default(),
            output: OutputFormat::Cutechess,
            failure: FailureArgs {
                stall_timeout: 10.0,
                recover: false,
                no_recover: false,
            },
            sprt: SprtArgs {
                elo0: Some(elo0),
                elo1: Some(elo1),
                alpha,
                beta,
                model: "normalized".into(),
            },
            slurm: SlurmArgs::default(),
            game_lines: None,
        }
    }
}

/// Games `spar match` plays without `--games`.
const DEFAULT_MATCH_GAMES: u64 = 100;

/// Checks the command line and makes the plan of the match.
pub(super) fn plan(
    args: &MatchArgs,
    is_sprt: bool,
    lines: Option<&dyn GameLines>,
) -> CliResult<(MatchPlan, Run)> {
    if !is_sprt && (args.sprt.elo0.is_some() || args.sprt.elo1.is_some()) {
        return Err(CliError::usage(
            "--elo0/--elo1 belong to `spar sprt`; `spar match` plays a fixed number of games",
        ));
    }
    // Before any file is opened: the personality's lines.
    if let Some(lines) = lines {
        lines.check()?;
    }
    MatchPlan::build(&PlanRequest {
        engines: &args.engines,
        seats: 2..=2,
        example: "--engine name=dev option.rfp_margin=90 --engine name=base",
        run: &args.run,
        games: args.games,
        default_games: (!is_sprt).then_some(DEFAULT_MATCH_GAMES),
        book: &args.book,
        adjudication: args.adjudication.rules()?,
        failure: Some(&args.failure),
        recover_by_default: is_sprt,
        sprt: is_sprt.then_some(&args.sprt),
    })
}

/// Checks the arguments of a match as [`super::run`] does before its first game (the plan: engines,
/// games, book, adjudication, SPRT bounds), playing nothing: what `spar tune` checks of its
/// verification SPRT before the tune's first game.
pub fn check(args: &MatchArgs, is_sprt: bool) -> CliResult {
    plan(args, is_sprt, None).map(|_| ())
}

/// The `--dump-positions` spec, after [`check_paths`] of every file the match touches.
pub(super) fn checked_paths(args: &MatchArgs) -> CliResult<Option<DumpSpec>> {
    let dump_spec = spec_of(args.files.dump_positions.as_deref())?;
    check_paths(args, dump_spec.as_ref())?;
    Ok(dump_spec)
}

/// Every file the match reads or writes: no output is another input or output, and every
/// output can be written, before any game.
fn check_paths(args: &MatchArgs, dump: Option<&DumpSpec>) -> CliResult {
    let mut check = PathCheck::new();
    check.engines(&args.engines.engines, &args.engines.each);
    check.book_words(args.book.book.as_deref());
    check.tb_words(args.adjudication.tb.as_deref());
    if let Some(dir) = args.slurm.run_dir.as_ref().filter(|_| args.slurm.slurm) {
        check.run_dir(dir);
    }
    let f = &args.files;
    if let Some(r) = &f.results {
        check.record("--results", r).locked("--results", r);
        check.record("--results record", run_record::path_for(r));
    }
    if let Some(p) = &f.pgnout {
        check.output("--pgnout", p).locked("--pgnout", p);
    }
    if let Some(d) = dump {
        let paths = d.format.paths(&d.path);
        for p in [paths.viriformat, paths.text, paths.index]
            .into_iter()
            .flatten()
        {
            check
                .record("--dump-positions", &p)
                .locked("--dump-positions", &p);
        }
    }
    if let Some(j) = &f.json {
        check.output("--json", j);
    }
    check.check()
}

/// Whether a results file holds anything (a resume with nothing to resume is a new run).
pub(super) fn has_rows(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Sprt {
        #[command(flatten)]
        args: MatchArgs,
    }

    /// [`MatchArgs::sprt`]'s defaults are `spar sprt`'s: the same options given on a
    /// command line read the same.
    #[test]
    fn an_sprt_built_is_the_sprt_the_command_line_reads() {
        let built = MatchArgs::sprt(
            EngineArgs {
                engines: vec![
                    vec!["name=a".into()],
                    vec!["name=b".into(), "depth=2".into()],
                ],
                each: vec!["nodes=100".into()],
            },
            Some(10),
            RunArgs {
                concurrency: None,
                seed: 3,
                quiet: true,
            },
            BookArgs::default(),
            AdjudicationArgs {
                maxmoves: Some(40),
                ..AdjudicationArgs::default()
            },
            -1.0,
            4.5,
        );
        let words = "sprt --engine name=a --engine name=b depth=2 --each nodes=100 --games 10 \
                     --seed 3 --quiet --maxmoves 40 --elo0 -1 --elo1 4.5";
        let parsed = Sprt::try_parse_from(words.split_whitespace())
            .expect("parses")
            .args;
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            serde_json::to_value(&parsed).unwrap()
        );
    }
}
