//! Texel tuning: fit the scaling constant K once, then minimise the mean squared error of
//! the predicted result with Adam, using the exact gradient of the linear evaluation.
//!
//! ```text
//! σ(q) = 1 / (1 + 10^(−K·q/400))                     predicted score of White
//! E(w) = mean over positions of (R − σ(eval_w))²      R = White's result (1, ½, 0)
//! ∂E/∂w_i = mean 2 (σ − R) · σ (1 − σ) · K ln10 / 400 · ∂eval/∂w_i
//! ```
//!
//! `∂eval/∂w_i` is the position's count of the feature of `w_i`, tapered by the phase and
//! multiplied by the scale factor (see [`Dataset::add_gradient`]).
//!
//! Sums over positions are taken over fixed chunks in parallel and added in chunk order, so
//! the result is the same for any number of threads.

use engine::rng::{mix_seed, SplitMix64};
use rayon::prelude::*;

use super::dataset::{sigmoid, Dataset, LN10_400};

/// Positions per parallel work item.
const CHUNK: usize = 2048;

/// Sums `f(i)` over `indices` in parallel, deterministically.
fn sum_over(indices: &[u32], f: impl Fn(usize) -> f64 + Sync) -> f64 {
    let parts: Vec<f64> = indices
        .par_chunks(CHUNK)
        .map(|c| c.iter().map(|&i| f(i as usize)).sum::<f64>())
        .collect();
    parts.iter().sum()
}

fn all_indices(data: &Dataset) -> Vec<u32> {
    (0..data.len() as u32).collect()
}

/// E for the smooth model with weights `w`.
pub fn error(data: &Dataset, w: &[f64], k: f64) -> f64 {
    if data.is_empty() {
        return 0.0;
    }
    let idx = all_indices(data);
    sum_over(&idx, |i| {
        let e = sigmoid(k, data.eval(i, w).white) - data.result(i);
        e * e
    }) / data.len() as f64
}

/// E for the engine's exact (integer) evaluation with weights `w`.
pub fn error_exact(data: &Dataset, w: &[i32], k: f64) -> f64 {
    if data.is_empty() {
        return 0.0;
    }
    let idx = all_indices(data);
    sum_over(&idx, |i| {
        let e = sigmoid(k, data.eval_exact(i, w) as f64) - data.result(i);
        e * e
    }) / data.len() as f64
}

/// The K in `[lo, hi]` minimising E for the exact evaluation with weights `w`: a coarse scan
/// then golden-section refinement (E(K) is unimodal in practice). Evaluations are computed
/// once, so each trial K costs one pass over the positions.
pub fn fit_k(data: &Dataset, w: &[i32], lo: f64, hi: f64) -> f64 {
    if data.is_empty() {
        return 1.0;
    }
    let evals: Vec<(f64, f64)> = (0..data.len())
        .into_par_iter()
        .map(|i| (data.eval_exact(i, w) as f64, data.result(i)))
        .collect();
    let idx = all_indices(data);
    let e = |k: f64| {
        sum_over(&idx, |i| {
            let (q, r) = evals[i];
            let d = sigmoid(k, q) - r;
            d * d
        })
    };
    // Coarse scan: 40 points, keep the best bracket.
    let steps = 40;
    let at = |j: usize| lo + (hi - lo) * j as f64 / steps as f64;
    let best = (0..=steps)
        .map(|j| (j, e(at(j))))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(0, |(j, _)| j);
    let (mut a, mut b) = (at(best.saturating_sub(1)), at((best + 1).min(steps)));
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (b - g * (b - a), a + g * (b - a));
    let (mut fc, mut fd) = (e(c), e(d));
    for _ in 0..60 {
        if (b - a).abs() < 1e-7 {
            break;
        }
        if fc < fd {
            b = d;
            (d, fd) = (c, fc);
            c = b - g * (b - a);
            fc = e(c);
        } else {
            a = c;
            (c, fc) = (d, fd);
            d = a + g * (b - a);
            fd = e(d);
        }
    }
    (a + b) / 2.0
}

/// The gradient of E over the positions `batch` (mean over the batch) for weights `w`.
pub fn gradient(data: &Dataset, batch: &[u32], w: &[f64], k: f64) -> Vec<f64> {
    let n = w.len();
    let parts: Vec<Vec<f64>> = batch
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut g = vec![0.0; n];
            for &i in chunk {
                let i = i as usize;
                let e = data.eval(i, w);
                let s = sigmoid(k, e.white);
                let factor = 2.0 * (s - data.result(i)) * s * (1.0 - s) * k * LN10_400;
                data.add_gradient(i, factor, e.scale, &mut g);
            }
            g
        })
        .collect();
    let mut total = vec![0.0; n];
    for p in parts {
        for (t, v) in total.iter_mut().zip(p) {
            *t += v;
        }
    }
    let scale = 1.0 / batch.len().max(1) as f64;
    total.iter_mut().for_each(|t| *t *= scale);
    total
}

/// Settings of a training run.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainOptions {
    /// Passes over the data.
    pub epochs: u32,
    /// Positions per Adam step (0: all of them, one step per epoch).
    pub batch_size: usize,
    /// Adam's step size at the first epoch (centipawns).
    pub lr: f64,
    /// The step size is multiplied by this after every epoch.
    pub lr_decay: f64,
    /// Seed of the batch order.
    pub seed: u64,
    /// Strength λ of the L2 pull toward the start weights (0: none).
    pub l2: f64,
}

/// What the caller wants after an epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Go on.
    Continue,
    /// Stop now (the weights so far are returned).
    Stop,
}

/// Adam (Kingma and Ba 2015) with bounds: parameters outside `tuned` are left alone, the
/// others are clipped into `[lo, hi]` after each step.
struct Adam {
    m: Vec<f64>,
    v: Vec<f64>,
    t: i32,
}

impl Adam {
    const BETA1: f64 = 0.9;
    const BETA2: f64 = 0.999;
    const EPS: f64 = 1e-8;

    fn step(
        &mut self,
        w: &mut [f64],
        grad: &[f64],
        lr: f64,
        tuned: &[bool],
        bounds: &[(f64, f64)],
    ) {
        self.t += 1;
        let c1 = 1.0 - Self::BETA1.powi(self.t);
        let c2 = 1.0 - Self::BETA2.powi(self.t);
        for i in 0..w.len() {
            if !tuned[i] {
                continue;
            }
            self.m[i] = Self::BETA1 * self.m[i] + (1.0 - Self::BETA1) * grad[i];
            self.v[i] = Self::BETA2 * self.v[i] + (1.0 - Self::BETA2) * grad[i] * grad[i];
            let m = self.m[i] / c1;
            let v = self.v[i] / c2;
            w[i] = (w[i] - lr * m / (v.sqrt() + Self::EPS)).clamp(bounds[i].0, bounds[i].1);
        }
    }
}

/// Minimises E from `w` (in place) with Adam. `on_epoch(epoch, error, rate, w)` is called
/// after every epoch with the smooth model's error over all positions, the step size used
/// and the weights.
pub fn train(
    data: &Dataset,
    w: &mut [f64],
    tuned: &[bool],
    bounds: &[(f64, f64)],
    k: f64,
    options: &TrainOptions,
    mut on_epoch: impl FnMut(u32, f64, f64, &[f64]) -> Next,
) {
    let n = w.len();
    let mut adam = Adam {
        m: vec![0.0; n],
        v: vec![0.0; n],
        t: 0,
    };
    let mut order = all_indices(data);
    let batch = if options.batch_size == 0 {
        order.len().max(1)
    } else {
        options.batch_size
    };
    let anchor = w.to_vec();
    let mut lr = options.lr;
    for epoch in 1..=options.epochs {
        if batch < order.len() {
            SplitMix64::new(mix_seed(options.seed, epoch as u64)).shuffle(&mut order);
        }
        for b in order.chunks(batch) {
            let mut g = gradient(data, b, w, k);
            if options.l2 > 0.0 {
                for ((g, &w), &a) in g.iter_mut().zip(w.iter()).zip(&anchor) {
                    *g += 2.0 * options.l2 * (w - a);
                }
            }
            adam.step(w, &g, lr, tuned, bounds);
        }
        let e = error(data, w, k);
        let used = lr;
        lr *= options.lr_decay;
        if on_epoch(epoch, e, used, w) == Next::Stop {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::eval::EvalTrace;

    /// Random sparse traces over `n` weights with known true weights, labelled with the
    /// exact predicted score σ(K·q) of the true model.
    fn synthetic(n: usize, positions: usize, truth: &[f64], k: f64) -> Dataset {
        let mut rng = SplitMix64::new(99);
        let mut d = Dataset::new();
        for _ in 0..positions {
            let mut mg = Vec::new();
            let mut eg = Vec::new();
            for i in 0..n / 2 {
                let c = rng.below(5) as i32 - 2;
                if c != 0 {
                    mg.push((i, c));
                }
                let c = rng.below(5) as i32 - 2;
                if c != 0 {
                    eg.push((n / 2 + i, c));
                }
            }
            let t = EvalTrace {
                phase: rng.below(25) as i32,
                scale: [64, 64],
                side_to_move_sign: 1,
                mg,
                eg,
            };
            let q = t.white_f64(truth);
            d.push(&t, sigmoid(k, q) as f32, 0).unwrap();
        }
        d
    }

    #[test]
    fn k_fit_recovers_the_labelling_constant() {
        let truth: Vec<f64> = (0..8).map(|i| 20.0 * i as f64 - 70.0).collect();
        let d = synthetic(8, 4000, &truth, 1.3);
        let ints: Vec<i32> = truth.iter().map(|&v| v as i32).collect();
        let k = fit_k(&d, &ints, 0.05, 4.0);
        assert!((k - 1.3).abs() < 0.02, "K = {k}");
    }

    #[test]
    fn adam_recovers_known_weights() {
        let truth = [40.0, -25.0, 60.0, 5.0, -80.0, 30.0, 0.0, 15.0, 90.0, -10.0];
        let n = truth.len();
        let d = synthetic(n, 6000, &truth, 1.0);
        let mut w = vec![0.0; n];
        let tuned = vec![true; n];
        let bounds = vec![(-200.0, 200.0); n];
        let options = TrainOptions {
            epochs: 150,
            batch_size: 1024,
            lr: 2.0,
            lr_decay: 0.97,
            seed: 1,
            l2: 0.0,
        };
        let mut errors = Vec::new();
        train(&d, &mut w, &tuned, &bounds, 1.0, &options, |_, e, _, _| {
            errors.push(e);
            Next::Continue
        });
        for (got, want) in w.iter().zip(truth) {
            assert!((got - want).abs() < 1.0, "weights {w:?} vs {truth:?}");
        }
        assert!(errors.last().unwrap() < &1e-5, "{errors:?}");
        assert!(errors[0] > *errors.last().unwrap());
    }

    #[test]
    fn frozen_and_bounded_weights() {
        let truth = [40.0, -25.0, 60.0, 5.0];
        let d = synthetic(4, 500, &truth, 1.0);
        let mut w = vec![0.0; 4];
        let tuned = [true, false, true, true];
        let bounds = [
            (-200.0, 200.0),
            (-200.0, 200.0),
            (0.0, 30.0),
            (-200.0, 200.0),
        ];
        let options = TrainOptions {
            epochs: 30,
            batch_size: 0,
            lr: 5.0,
            lr_decay: 1.0,
            seed: 1,
            l2: 0.0,
        };
        let mut epochs = 0;
        train(&d, &mut w, &tuned, &bounds, 1.0, &options, |e, _, _, _| {
            epochs = e;
            if e == 20 {
                Next::Stop
            } else {
                Next::Continue
            }
        });
        assert_eq!(epochs, 20);
        assert_eq!(w[1], 0.0);
        assert!(w[2] <= 30.0 && w[2] > 20.0);
    }

    #[test]
    fn l2_keeps_rarely_seen_weights_near_their_start() {
        // Weight 0 is in every position, weight 1 in one position of 500, and the labels
        // come from weights (50, 80) while both start at 0.
        let mut d = Dataset::new();
        let mut rng = SplitMix64::new(4);
        for i in 0..500 {
            let mut mg = vec![(0, rng.below(3) as i32 - 1)];
            if i == 0 {
                mg.push((1, 1));
            }
            let t = EvalTrace {
                phase: 24,
                scale: [64, 64],
                side_to_move_sign: 1,
                mg,
                eg: vec![],
            };
            let q = t.white_f64(&[50.0, 80.0]);
            d.push(&t, sigmoid(1.0, q) as f32, 0).unwrap();
        }
        let run = |l2| {
            let mut w = vec![0.0, 0.0];
            let options = TrainOptions {
                epochs: 200,
                batch_size: 0,
                lr: 2.0,
                lr_decay: 0.99,
                seed: 1,
                l2,
            };
            train(
                &d,
                &mut w,
                &[true; 2],
                &[(-200.0, 200.0); 2],
                1.0,
                &options,
                |_, _, _, _| Next::Continue,
            );
            w
        };
        let free = run(0.0);
        let pulled = run(1e-7);
        assert!((free[1] - 80.0).abs() < 5.0, "{free:?}");
        // The frequent weight goes most of its way, the rare one hardly moves.
        assert!(pulled[0] > 0.6 * 50.0, "{pulled:?}");
        assert!(pulled[1] < 0.2 * 80.0, "{pulled:?}");
        assert!(run(1.0).iter().all(|w| w.abs() < 1.0));
    }

    #[test]
    fn deterministic_for_any_thread_count() {
        let truth = [40.0, -25.0, 60.0, 5.0];
        let d = synthetic(4, 5000, &truth, 1.0);
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut w = vec![0.0; 4];
                let options = TrainOptions {
                    epochs: 3,
                    batch_size: 700,
                    lr: 1.0,
                    lr_decay: 1.0,
                    seed: 5,
                    l2: 0.0,
                };
                train(
                    &d,
                    &mut w,
                    &[true; 4],
                    &[(-99.0, 99.0); 4],
                    1.0,
                    &options,
                    |_, _, _, _| Next::Continue,
                );
                w
            })
        };
        assert_eq!(run(1), run(3));
    }
}
