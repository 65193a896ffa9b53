//! The SPSA step as OpenBench takes it, independent of how a result is obtained.
//!
//! At iteration `k`, each parameter gets a random sign `flip` (±1); the engine playing as
//! *dev* uses `θ + flip · c_k` and the one playing as *base* `θ − flip · c_k`, both rounded
//! stochastically with one shared uniform `u` (`floor(x + u)`) and clipped to the range.
//! After the games, with `W − L` counted from dev's side over all games of the iteration:
//!
//! ```text
//! θ ← clip(θ + r_k · c_k · (W − L) · flip, min, max)
//! ```
//!
//! The random numbers of iteration `k` come from a generator seeded with `(seed, k)`, so a
//! run resumed at iteration `k` continues exactly as the uninterrupted run would have.

use engine::rng::{mix_seed, SplitMix64};

use super::gains::Gains;
use super::spsa_params::SpsaParam;

/// The two engines of one iteration and the step sizes used.
#[derive(Clone, Debug, PartialEq)]
pub struct Perturbation {
    /// Iteration (1-based).
    pub k: u64,
    /// +1 or −1 per parameter.
    pub flip: Vec<f64>,
    /// `c_k` per parameter.
    pub c: Vec<f64>,
    /// `r_k` per parameter.
    pub r: Vec<f64>,
    /// Values of the dev engine.
    pub dev: Vec<i64>,
    /// Values of the base engine.
    pub base: Vec<i64>,
}

/// The state of a run: the parameters and the current θ.
#[derive(Clone, Debug)]
pub struct Spsa {
    params: Vec<SpsaParam>,
    gains: Gains,
    theta: Vec<f64>,
    seed: u64,
}

/// A uniform number in [0, 1).
fn uniform(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Spsa {
    /// A run starting at each parameter's `start`.
    pub fn new(params: Vec<SpsaParam>, gains: Gains, seed: u64) -> Spsa {
        let theta = params.iter().map(|p| p.start).collect();
        Spsa {
            params,
            gains,
            theta,
            seed,
        }
    }

    /// Replaces θ (when resuming), clipped to the ranges.
    pub fn set_theta(&mut self, theta: &[f64]) {
        for ((t, &v), p) in self.theta.iter_mut().zip(theta).zip(&self.params) {
            *t = v.clamp(p.min, p.max);
        }
    }

    /// The current θ.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// The parameters.
    pub fn params(&self) -> &[SpsaParam] {
        &self.params
    }

    /// The engines of iteration `k` (1-based), perturbed from the current θ.
    #[cfg(test)]
    pub fn perturb(&self, k: u64) -> Perturbation {
        self.perturb_from(k, &self.theta)
    }

    /// The engines of iteration `k` (1-based), perturbed from `theta` (an earlier θ, when
    /// iterations run ahead of the updates: see [`super::schedule`]).
    pub fn perturb_from(&self, k: u64, theta: &[f64]) -> Perturbation {
        let mut rng = SplitMix64::new(mix_seed(self.seed, k));
        let n = self.params.len();
        let mut p = Perturbation {
            k,
            flip: Vec::with_capacity(n),
            c: Vec::with_capacity(n),
            r: Vec::with_capacity(n),
            dev: Vec::with_capacity(n),
            base: Vec::with_capacity(n),
        };
        for (param, &theta) in self.params.iter().zip(theta) {
            let (c, r) = self.gains.at(param.c_end, param.r_end, k);
            let flip = if rng.next_u64() & 1 == 1 { 1.0 } else { -1.0 };
            let u = uniform(&mut rng);
            let round = |x: f64| (x + u).floor().clamp(param.min, param.max) as i64;
            p.dev.push(round(theta + flip * c));
            p.base.push(round(theta - flip * c));
            p.flip.push(flip);
            p.c.push(c);
            p.r.push(r);
        }
        p
    }

    /// Applies the result `W − L` (dev's view, all games of the iteration).
    pub fn update(&mut self, p: &Perturbation, result: f64) {
        for (i, param) in self.params.iter().enumerate() {
            let step = p.r[i] * p.c[i] * result * p.flip[i];
            self.theta[i] = (self.theta[i] + step).clamp(param.min, param.max);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, start: f64, min: f64, max: f64) -> SpsaParam {
        SpsaParam {
            name: name.into(),
            start,
            min,
            max,
            c_end: 4.0,
            r_end: 0.002,
        }
    }

    fn gains(n: u64) -> Gains {
        Gains {
            iterations: n,
            alpha: 0.602,
            gamma: 0.101,
            a_ratio: 0.1,
        }
    }

    #[test]
    fn perturbation_is_symmetric_rounded_and_clipped() {
        let s = Spsa::new(
            vec![param("a", 10.3, 0.0, 100.0), param("b", 1.0, 0.0, 100.0)],
            gains(1000),
            7,
        );
        for k in 1..200 {
            let p = s.perturb(k);
            assert_eq!(p, s.perturb(k), "deterministic");
            for i in 0..2 {
                let theta = s.theta()[i];
                let (dev, base) = (p.dev[i] as f64, p.base[i] as f64);
                assert!(dev >= 0.0 && base >= 0.0, "clipped");
                // Rounded within one of the exact value, in the flip's direction.
                let exact_dev = theta + p.flip[i] * p.c[i];
                assert!((dev - exact_dev).abs() < 1.0 || dev == 0.0);
                if i == 0 {
                    assert_eq!(dev - base, (dev - base).round());
                    assert!(((dev - base) - 2.0 * p.flip[i] * p.c[i]).abs() <= 1.0);
                }
            }
        }
        // Both signs occur.
        let flips: Vec<f64> = (1..50).map(|k| s.perturb(k).flip[0]).collect();
        assert!(flips.contains(&1.0) && flips.contains(&-1.0));
    }

    /// A noiseless objective: the result of an iteration is the difference of a concave
    /// quadratic between dev and base. SPSA must climb to its known maximum.
    #[test]
    fn update_rule_finds_the_optimum_of_a_quadratic() {
        let optimum = [37.0, 61.0, -12.0];
        let params = vec![
            param("x", 0.0, -100.0, 100.0),
            param("y", 100.0, -100.0, 100.0),
            param("z", 20.0, -100.0, 100.0),
        ];
        let n = 3000;
        let mut s = Spsa::new(params, gains(n), 3);
        let f = |v: &[i64]| -> f64 {
            -v.iter()
                .zip(optimum)
                .map(|(&x, o)| (x as f64 - o).powi(2))
                .sum::<f64>()
                / 4.0
        };
        for k in 1..=n {
            let p = s.perturb(k);
            let result = f(&p.dev) - f(&p.base);
            s.update(&p, result);
        }
        for (t, o) in s.theta().iter().zip(optimum) {
            assert!(
                (t - o).abs() < 1.0,
                "theta {:?} vs optimum {optimum:?}",
                s.theta()
            );
        }
    }

    #[test]
    fn update_moves_along_flip_and_clips() {
        let mut s = Spsa::new(vec![param("a", 50.0, 0.0, 60.0)], gains(10), 1);
        let p = s.perturb(1);
        s.update(&p, 2.0);
        let expected = 50.0 + p.r[0] * p.c[0] * 2.0 * p.flip[0];
        assert!((s.theta()[0] - expected).abs() < 1e-12);
        s.update(&p, 1e9 * p.flip[0]);
        assert_eq!(s.theta()[0], 60.0);
        s.set_theta(&[-5.0]);
        assert_eq!(s.theta()[0], 0.0);
    }
}
