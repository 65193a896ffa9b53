//! `spar sim`: Monte-Carlo SPRT runs at a chosen true strength — how often the test passes
//! and how many games it needs. The game model and the LLR checking schedule are those of
//! [`sprt::simulate`].

use rayon::prelude::*;
use sprt::simulate::{run_sprt, GameModel, LlrChecks, SimulationSummary, Xoshiro256};

use crate::cli::SprtBounds;
use crate::error::{CliError, CliResult};
use crate::stdout;

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
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct SimArgs {
    /// True Elo difference of the simulated engines, in the units of --model.
    #[arg(long, allow_hyphen_values = true)]
    elo: f64,
    /// SPRT null hypothesis (H0).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    elo0: f64,
    /// SPRT alternative hypothesis (H1).
    #[arg(long, default_value_t = 5.0, allow_hyphen_values = true)]
    elo1: f64,
    /// SPRT false positive rate.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    alpha: f64,
    /// SPRT false negative rate.
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
}

/// Runs `spar sim`.
pub fn run(args: SimArgs) -> CliResult {
    let sprt = SprtBounds {
        elo0: args.elo0,
        elo1: args.elo1,
        alpha: args.alpha,
        beta: args.beta,
        model: args.model.clone(),
    }
    .check_options()?;
    let model = sprt.model();
    let game = GameModel::new(args.elo, args.draw_ratio, model).map_err(|e| {
        CliError::usage(format!(
            "--elo {} --draw-ratio {}: {e}",
            args.elo, args.draw_ratio
        ))
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
    let checks = if args.every_pair {
        LlrChecks::EveryPair
    } else {
        LlrChecks::Adaptive
    };
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
        model, args.elo0, args.elo1, args.alpha, args.beta, args.elo, args.draw_ratio
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
