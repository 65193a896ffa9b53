//! Texel tuning on the real evaluation: positions from random games, labelled with the
//! predicted score of the default weights, must lead a tuner started from perturbed weights
//! back to the default evaluation.

use engine::eval::trace;
use engine::params::{specs, Params};
use engine::position::Position;
use engine::rng::SplitMix64;

use super::dataset::{self, Dataset};
use super::optim::{self, Next, TrainOptions};

/// Positions met along random games from the start position.
fn random_positions(n: usize, seed: u64) -> Vec<Position> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut pos = Position::startpos();
        for _ in 0..(10 + rng.below(90)) {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos = pos.play(moves[rng.below(moves.len())]);
            if rng.below(4) == 0 && out.len() < n {
                out.push(pos.clone());
            }
        }
    }
    out
}

fn mean_abs_diff(d: &Dataset, a: &[i32], b: &[i32]) -> f64 {
    (0..d.len())
        .map(|i| (d.eval_exact(i, a) - d.eval_exact(i, b)).abs() as f64)
        .sum::<f64>()
        / d.len() as f64
}

#[test]
fn recovers_the_evaluation_that_labelled_the_data() {
    let truth = Params::defaults();
    let k_true = 1.2;
    let mut d = Dataset::new();
    for pos in random_positions(3000, 11) {
        let t = trace(&pos);
        let q = t.white(truth.values()) as f64;
        d.push(&t, dataset::sigmoid(k_true, q) as f32, 0).unwrap();
    }
    let k = optim::fit_k(&d, truth.values(), 0.05, 5.0);
    assert!((k - k_true).abs() < 0.01, "K = {k}");

    // Perturb every evaluation weight by up to ±20.
    let mut rng = SplitMix64::new(5);
    let start: Vec<i32> = specs()
        .iter()
        .zip(truth.values())
        .map(|(s, &v)| {
            if s.eval {
                (v + rng.below(41) as i32 - 20).clamp(s.min, s.max)
            } else {
                v
            }
        })
        .collect();
    let tuned: Vec<bool> = specs().iter().map(|s| s.eval).collect();
    let bounds: Vec<(f64, f64)> = specs()
        .iter()
        .map(|s| (s.min as f64, s.max as f64))
        .collect();
    let mut w: Vec<f64> = start.iter().map(|&v| v as f64).collect();
    let options = TrainOptions {
        epochs: 80,
        batch_size: 512,
        lr: 1.0,
        lr_decay: 0.97,
        seed: 3,
        l2: 0.0,
    };
    optim::train(
        &d,
        &mut w,
        &tuned,
        &bounds,
        k_true,
        &options,
        |_, _, _, _| Next::Continue,
    );
    let end: Vec<i32> = w.iter().map(|&v| v.round() as i32).collect();
    let before = mean_abs_diff(&d, &start, truth.values());
    let after = mean_abs_diff(&d, &end, truth.values());
    let e_start = optim::error_exact(&d, &start, k_true);
    let e_end = optim::error_exact(&d, &end, k_true);
    eprintln!("mean |eval - true|: {before:.1} -> {after:.1}; error {e_start:.6} -> {e_end:.6}");
    assert!(after < before / 4.0, "{before} -> {after}");
    assert!(e_end < e_start / 10.0, "{e_start} -> {e_end}");
}
