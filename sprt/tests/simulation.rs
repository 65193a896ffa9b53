//! The SPRT keeps its promises: pass rate ≈ α at elo0 and ≈ 1 − β at elo1, within the
//! Monte-Carlo error (three standard errors) plus one percentage point.

use std::thread;

use sprt::simulate::{run_sprt, GameModel, LlrChecks, RunOutcome, SimulationSummary, Xoshiro256};
use sprt::{Model, Sprt};

fn simulate(
    sprt: &Sprt,
    game: &GameModel,
    seed: u64,
    runs: u64,
    checks: LlrChecks,
) -> Vec<RunOutcome> {
    let threads = 2;
    thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (0..runs)
                        .filter(|r| r % threads == t)
                        .map(|r| {
                            (
                                r,
                                run_sprt(
                                    sprt,
                                    game,
                                    &mut Xoshiro256::for_run(seed, r),
                                    1_000_000,
                                    checks,
                                ),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<_> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_by_key(|(r, _)| *r);
        all.into_iter().map(|(_, o)| o).collect()
    })
}

fn check_rates(model: Model, elo0: f64, elo1: f64, runs: u64) {
    let sprt = Sprt::new(elo0, elo1, 0.05, 0.05, model).unwrap();
    for (true_elo, expected) in [(elo0, 0.05), (elo1, 0.95)] {
        let game = GameModel::new(true_elo, 0.5, model).unwrap();
        let summary =
            SimulationSummary::new(&simulate(&sprt, &game, 2024, runs, LlrChecks::Adaptive));
        let se = (expected * (1.0 - expected) / runs as f64).sqrt();
        eprintln!("{model} [{elo0}, {elo1}] at {true_elo}: {summary:?}");
        assert_eq!(summary.undecided, 0);
        assert!(
            (summary.pass_rate - expected).abs() <= 3.0 * se + 0.01,
            "{model} [{elo0}, {elo1}] at {true_elo}: pass rate {} ± {}, expected {expected}",
            summary.pass_rate,
            summary.pass_rate_error
        );
    }
}

#[test]
fn normalized_sprt_error_rates() {
    check_rates(Model::Normalized, 0.0, 20.0, 1000);
}

#[test]
fn logistic_sprt_error_rates() {
    check_rates(Model::Logistic, 0.0, 15.0, 1000);
}

#[test]
fn adaptive_checks_decide_like_checking_every_pair() {
    for model in [Model::Normalized, Model::Logistic, Model::Bayesian] {
        let sprt = Sprt::new(0.0, 25.0, 0.05, 0.05, model).unwrap();
        for true_elo in [-5.0, 12.0, 30.0] {
            let game = GameModel::new(true_elo, 0.4, model).unwrap();
            let every = simulate(&sprt, &game, 99, 40, LlrChecks::EveryPair);
            let adaptive = simulate(&sprt, &game, 99, 40, LlrChecks::Adaptive);
            for (e, a) in every.iter().zip(&adaptive) {
                assert_eq!(
                    (e.decision, e.pairs),
                    (a.decision, a.pairs),
                    "{model} at {true_elo}"
                );
            }
        }
    }
}

#[test]
fn runs_are_reproducible() {
    let sprt = Sprt::new(0.0, 10.0, 0.05, 0.05, Model::Normalized).unwrap();
    let game = GameModel::new(5.0, 0.5, Model::Normalized).unwrap();
    let a = simulate(&sprt, &game, 5, 20, LlrChecks::Adaptive);
    let b: Vec<_> = (0..20)
        .map(|r| {
            run_sprt(
                &sprt,
                &game,
                &mut Xoshiro256::for_run(5, r),
                1_000_000,
                LlrChecks::Adaptive,
            )
        })
        .collect();
    assert_eq!(a, b);
}
