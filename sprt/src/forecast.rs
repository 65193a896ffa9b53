//! Where a running SPRT is heading: the expected number of further games to a decision
//! and the probability of passing, if the true strength equals the current estimate.
//!
//! The LLR is approximated by a Brownian motion (fishtest's `LLR_drift_variance_alt2`):
//! per sampling unit (a game, or a pair for pentanomial counts) it drifts by
//! μ = (s − (s₀+s₁)/2)·(s₁ − s₀)/v with variance σ² = (s₁ − s₀)²/v, where s is the
//! estimated score, v its per-unit variance and s₀, s₁ the scores of the bounds. From the
//! current LLR x between the bounds A < x < B, with θ = 2μ/σ²,
//! P(pass) = (1 − e^(−θ(x−A))) / (1 − e^(−θ(B−A))) and
//! E\[units\] = (P·B + (1−P)·A − x)/μ ((x−A)(B−x)/σ² without drift).

use crate::counts::Sample;
use crate::elo::elo_to_score;
use crate::llr::{bayesian_scores, t_bounds, Model};
use crate::sprt::{Sprt, SprtError};

/// The outlook of a running SPRT. Fields are NaN when the sample says nothing yet
/// (no games, zero variance).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Forecast {
    /// The current log-likelihood ratio.
    pub llr: f64,
    /// Games per sampling unit: 1 for trinomial counts, 2 for pentanomial counts.
    pub games_per_unit: u64,
    /// Expected LLR change per unit at the current estimate.
    pub drift: f64,
    /// Variance of the LLR change per unit.
    pub variance: f64,
    /// Expected further units (games or pairs) until a bound is reached; 0 once decided.
    pub expected_units: f64,
    /// Expected further games until a bound is reached; 0 once decided.
    pub expected_games: f64,
    /// Probability that the test ends with H1 (pass); 1 or 0 once decided.
    pub pass_probability: f64,
}

/// Probability of leaving (a, b) through b, and the expected exit time, for a Brownian
/// motion started at x with drift `mu` and variance `var` per unit time.
pub fn brownian_exit(x: f64, a: f64, b: f64, mu: f64, var: f64) -> (f64, f64) {
    if x.is_nan() || mu.is_nan() || var.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    if x >= b {
        return (1.0, 0.0);
    }
    if x <= a {
        return (0.0, 0.0);
    }
    if var <= 0.0 || var.is_infinite() {
        // Deterministic motion (or no information): it goes where the drift points.
        return match mu.partial_cmp(&0.0) {
            Some(std::cmp::Ordering::Greater) => (1.0, (b - x) / mu),
            Some(std::cmp::Ordering::Less) => (0.0, (a - x) / mu),
            _ => (f64::NAN, f64::INFINITY),
        };
    }
    let theta = 2.0 * mu / var;
    if (theta * (b - a)).abs() < 1e-6 {
        return ((x - a) / (b - a), (x - a) * (b - x) / var);
    }
    let pass = if theta > 0.0 {
        (-theta * (x - a)).exp_m1() / (-theta * (b - a)).exp_m1()
    } else {
        let k = -theta;
        (k * (x - b)).exp() * (-k * (x - a)).exp_m1() / (-k * (b - a)).exp_m1()
    };
    let time = (pass * b + (1.0 - pass) * a - x) / mu;
    (pass, time.max(0.0))
}

impl Sprt {
    /// The forecast for a sample (see the module documentation). Fails only for the
    /// bayesian model with pentanomial counts.
    pub fn forecast(&self, sample: &Sample) -> Result<Forecast, SprtError> {
        let llr = self.llr(sample)?;
        let estimate = sample.estimate();
        let (games_per_unit, (s0, s1)) = match sample {
            Sample::Trinomial(t) => (1, self.bound_scores::<3>(estimate.unit_variance, Some(t))),
            Sample::Pentanomial(_) => (2, self.bound_scores::<5>(estimate.unit_variance, None)),
        };
        let v = estimate.unit_variance;
        let s = estimate.score;
        let drift = (s - (s0 + s1) / 2.0) * (s1 - s0) / v;
        let variance = (s1 - s0) * (s1 - s0) / v;
        let (pass_probability, expected_units) = if v > 0.0 && v.is_finite() {
            brownian_exit(llr, self.lower_bound(), self.upper_bound(), drift, variance)
        } else {
            match self.decide(llr) {
                crate::sprt::Decision::H1 => (1.0, 0.0),
                crate::sprt::Decision::H0 => (0.0, 0.0),
                crate::sprt::Decision::Continue => (f64::NAN, f64::NAN),
            }
        };
        Ok(Forecast {
            llr,
            games_per_unit,
            drift,
            variance,
            expected_units,
            expected_games: expected_units * games_per_unit as f64,
            pass_probability,
        })
    }

    /// Expected unit scores (0..1) of the two hypotheses, given the per-unit variance.
    fn bound_scores<const N: usize>(
        &self,
        unit_variance: f64,
        counts: Option<&crate::Trinomial>,
    ) -> (f64, f64) {
        match (self.model(), counts) {
            (Model::Normalized, _) => {
                let (t0, t1) = t_bounds::<N>(self.elo0(), self.elo1());
                let sigma = unit_variance.sqrt();
                (0.5 + t0 * sigma, 0.5 + t1 * sigma)
            }
            (Model::Bayesian, Some(t)) => bayesian_scores(t, self.elo0(), self.elo1()),
            _ => (elo_to_score(self.elo0()), elo_to_score(self.elo1())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Pentanomial, Trinomial};

    #[test]
    fn brownian_exit_without_drift_is_linear() {
        let (p, t) = brownian_exit(0.0, -1.0, 3.0, 0.0, 1.0);
        assert!((p - 0.25).abs() < 1e-12);
        assert!((t - 3.0).abs() < 1e-12);
    }

    #[test]
    fn brownian_exit_with_drift_is_continuous_at_zero() {
        let (p0, t0) = brownian_exit(0.5, -2.0, 2.0, 0.0, 1.0);
        let (p1, t1) = brownian_exit(0.5, -2.0, 2.0, 1e-5, 1.0);
        assert!((p0 - p1).abs() < 1e-4 && (t0 - t1).abs() < 1e-2);
        let (p, _) = brownian_exit(0.0, -3.0, 3.0, -1e3, 1.0);
        assert!(p.abs() < 1e-12);
        let (p, t) = brownian_exit(0.0, -3.0, 3.0, 0.01, 1e-6);
        assert!((p - 1.0).abs() < 1e-12 && (t - 300.0).abs() < 1e-6);
    }

    #[test]
    fn strong_results_forecast_a_pass() {
        let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05, Model::Normalized).unwrap();
        let good = Pentanomial::new([30, 300, 600, 340, 34]);
        let f = sprt.forecast(&good.into()).unwrap();
        assert!(f.pass_probability > 0.5, "{f:?}");
        assert!(
            f.expected_games > 0.0 && f.expected_games.is_finite(),
            "{f:?}"
        );
        let bad = good.flipped();
        let f = sprt.forecast(&bad.into()).unwrap();
        assert!(
            f.pass_probability < 0.01 || f.expected_games == 0.0,
            "{f:?}"
        );
    }

    #[test]
    fn degenerate_samples_forecast_without_panic() {
        let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05, Model::Logistic).unwrap();
        for t in [
            Trinomial::default(),
            Trinomial::new(0, 10, 0),
            Trinomial::new(10, 0, 0),
        ] {
            let f = sprt.forecast(&t.into()).unwrap();
            assert!(!f.expected_games.is_sign_negative() || f.expected_games.is_nan());
        }
    }
}
