//! `spar sim`: Monte-Carlo SPRT runs at a chosen true strength — how often the test passes
//! and how many games it needs. The game model and the LLR checking schedule are those of
//! [`sprt::simulate`]. With `--bisect`, whole simulated bisects ([`bisect`]).

use rayon::prelude::*;
use sprt::simulate::{run_sprt, GameModel, LlrChecks, SimulationSummary, Xoshiro256};

use crate::cli::SprtBounds;
use crate::error::{CliError, CliResult};
use crate::stdout;

mod bisect;

/// SPRT simulator.
///
/// Plays many simulated SPRT runs of game pairs at a true strength --elo (in the units of
/// --model) and reports the pass rate with its Monte-Carlo standard error and the games
/// needed to reach a decision. Games are independent with the given draw ratio; a pair is
/// two such games. Runs are seeded from (--seed, run index), so results do not depend on
/// the number of threads.
///
///   spar sim --elo 0 --elo0 0 --elo1 5      (pass rate should be about alpha)
///
///   spar sim --elo 5 --elo0 0 --elo1 5      (pass rate should be about 1 - beta)
///
/// With --bisect it simulates whole bisects (`spar bisect`) instead: commits before the
/// culprit at true Elo 0 against the good one, from the culprit on at --true-drop worse;
/// the gate SPRT of bad against good, then each step an SPRT [-drop, 0] at the rates the
/// error rule gives. It reports the rate of wrong answers against the bound max(alpha,
/// beta) and the games per step and in total; lists and ranges make a table:
///
///   spar sim --bisect --commits 16 --drop 5
///
///   spar sim --bisect --commits 8,32,128 --drop 5 --true-drop 0.5x..2x:0.5x --csv b.csv
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct SimArgs {
    /// True Elo difference of the simulated engines, in the units of --model.
    #[arg(
        long,
        allow_hyphen_values = true,
        required_unless_present = "bisect",
        conflicts_with = "bisect"
    )]
    elo: Option<f64>,
    /// SPRT null hypothesis (H0).
    #[arg(
        long,
        default_value_t = 0.0,
        allow_hyphen_values = true,
        conflicts_with = "bisect"
    )]
    elo0: f64,
    /// SPRT alternative hypothesis (H1).
    #[arg(
        long,
        default_value_t = 5.0,
        allow_hyphen_values = true,
        conflicts_with = "bisect"
    )]
    elo1: f64,
    /// SPRT false positive rate (with --bisect: the whole bisect's).
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    alpha: f64,
    /// SPRT false negative rate (with --bisect: the whole bisect's).
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    beta: f64,
    /// Share of drawn games (for bayesian: between equal engines).
    #[arg(long, default_value_t = 0.5, allow_hyphen_values = true)]
    draw_ratio: f64,
    /// Elo model of --elo, --elo0 and --elo1: normalized, logistic or bayesian.
    #[arg(long, default_value = "normalized")]
    model: String,
    /// Number of simulated SPRT runs.
    #[arg(long, default_value_t = 2000)]
    runs: u64,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Give up a run after this many pairs (it counts as undecided).
    #[arg(long, default_value_t = 1_000_000)]
    max_pairs: u64,
    /// Compute the exact LLR after every pair instead of adaptively (same decisions, slower).
    #[arg(long)]
    every_pair: bool,
    /// Simulate whole bisects of `spar bisect` instead of one SPRT.
    #[arg(long)]
    bisect: bool,
    #[command(flatten)]
    bisect_args: bisect::BisectArgs,
}

/// Runs `spar sim`.
pub fn run(args: SimArgs) -> CliResult {
    let checks = if args.every_pair {
        LlrChecks::EveryPair
    } else {
        LlrChecks::Adaptive
    };
    let common = bisect::Common {
        alpha: args.alpha,
        beta: args.beta,
        draw_ratio: args.draw_ratio,
        model: args.model.clone(),
        runs: args.runs,
        seed: args.seed,
        max_pairs: args.max_pairs,
        checks,
    };
    if let (false, Some(flag)) = (args.bisect, args.bisect_args.first_given()) {
        return Err(CliError::usage(format!(
            "{flag} is an option of spar sim --bisect: add --bisect, or leave {flag} out"
        )));
    }
    let elo = match args.elo {
        Some(elo) if !args.bisect => elo,
        _ => return bisect::run(&args.bisect_args, &common),
    };
    let sprt = SprtBounds {
        elo0: args.elo0,
        elo1: args.elo1,
        alpha: args.alpha,
        beta: args.beta,
        model: args.model.clone(),
    }
    .check_options()?;
    let model = sprt.model();
    let game = GameModel::new(elo, args.draw_ratio, model).map_err(|e| {
        CliError::usage(format!("--elo {elo} --draw-ratio {}: {e}", args.draw_ratio))
    })?;
    if args.runs == 0 {
        return Err(CliError::usage(
            "--runs 0: give at least one run, e.g. --runs 2000",
        ));
    }
    if args.max_pairs == 0 {
        return Err(CliError::usage(
            "--max-pairs 0: give a positive pair limit, e.g. --max-pairs 1000000",
        ));
    }
    let outcomes: Vec<_> = (0..args.runs)
        .into_par_iter()
        .map(|r| {
            run_sprt(
                &sprt,
                &game,
                &mut Xoshiro256::for_run(args.seed, r),
                args.max_pairs,
                checks,
            )
        })
        .collect();
    let summary = SimulationSummary::new(&outcomes);

    let [p0, p1, p2, p3, p4] = game.pair_probabilities();
    let mut lines = Vec::new();
    lines.push(format!(
        "SPRT: {} [{:.2}, {:.2}], alpha {}, beta {}; true Elo {:.2}, draw ratio {:.2}",
        model, args.elo0, args.elo1, args.alpha, args.beta, elo, args.draw_ratio
    ));
    lines.push(format!(
        "Game: W {:.4} D {:.4} L {:.4}; pairs 0-2 points [{p0:.4}, {p1:.4}, {p2:.4}, {p3:.4}, {p4:.4}]",
        game.win, game.draw, game.loss
    ));
    lines.push(format!(
        "Runs: {} (seed {}): {} passed, {} failed, {} undecided after {} pairs",
        summary.runs, args.seed, summary.passed, summary.failed, summary.undecided, args.max_pairs
    ));
    lines.push(format!(
        "Pass rate: {:.4} +/- {:.4}",
        summary.pass_rate, summary.pass_rate_error
    ));
    lines.push(format!(
        "Games to a decision: mean {:.0}, median {:.0}, 95th percentile {:.0}",
        summary.mean_games, summary.median_games, summary.p95_games
    ));
    stdout::print_lines(&lines)
}
