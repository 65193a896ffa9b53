//! The log-likelihood ratio of the generalized SPRT (fishtest's `LLR_logistic` and
//! `LLR_normalized`; BayesElo bounds are converted to logistic ones as fishtest does).
//!
//! Counts are regularized first: an empty bucket counts as 0.001, so one-sided samples
//! give finite LLRs. The LLR is N · Σ p̂ᵢ · ln(p₁ᵢ / p₀ᵢ), where p̂ are the observed
//! frequencies, N the regularized count and p₀, p₁ the MLEs under H0 and H1. Should no
//! MLE be found (only seen with normalized bounds of hundreds of nElo on extreme
//! samples), the LLR is NaN, which decides nothing.

use std::fmt;
use std::str::FromStr;

use crate::counts::Trinomial;
use crate::elo::{bayeselo_to_score, drawelo, elo_to_score, score_to_elo, NELO_PER_T};
use crate::mle::{mle_expected, mle_t_value};

/// The Elo model in which the SPRT bounds elo0 and elo1 are expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Model {
    /// Normalized Elo (nElo): bounds on the t-value of the score; fishtest's default.
    #[default]
    Normalized,
    /// Logistic Elo: bounds on the expected score.
    Logistic,
    /// BayesElo (trinomial counts only): converted to logistic bounds with the drawelo
    /// estimated from the sample.
    Bayesian,
}

impl Model {
    /// The model's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Model::Normalized => "normalized",
            Model::Logistic => "logistic",
            Model::Bayesian => "bayesian",
        }
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A model name that is none of `normalized`, `logistic`, `bayesian`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownModel(pub String);

impl fmt::Display for UnknownModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown SPRT model '{}': use normalized, logistic or bayesian",
            self.0
        )
    }
}

impl std::error::Error for UnknownModel {}

impl FromStr for Model {
    type Err = UnknownModel;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "normalized" | "normalised" | "nelo" => Ok(Model::Normalized),
            "logistic" => Ok(Model::Logistic),
            "bayesian" | "bayeselo" => Ok(Model::Bayesian),
            _ => Err(UnknownModel(s.to_string())),
        }
    }
}

/// One evaluation of the GSPRT: the observed frequencies and, per outcome, the jump of
/// the LLR that one more sample of that outcome would cause (ln p₁ᵢ − ln p₀ᵢ).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gsprt<const N: usize> {
    /// Regularized number of samples.
    pub total: f64,
    /// Observed (regularized) frequencies.
    pub freqs: [f64; N],
    /// ln p₁ᵢ − ln p₀ᵢ.
    pub jumps: [f64; N],
}

impl<const N: usize> Gsprt<N> {
    /// The log-likelihood ratio.
    pub fn llr(&self) -> f64 {
        let mut sum = 0.0;
        for i in 0..N {
            sum += self.freqs[i] * self.jumps[i];
        }
        self.total * sum
    }

    /// The largest |jump|.
    pub fn max_jump(&self) -> f64 {
        self.jumps.iter().fold(0.0, |m: f64, j| m.max(j.abs()))
    }
}

/// Counts (ordered by score) with empty buckets replaced by 0.001, and their total.
fn regularize<const N: usize>(counts: [u64; N]) -> ([f64; N], f64) {
    let values = counts.map(|n| if n == 0 { 1e-3 } else { n as f64 });
    (values, values.iter().sum())
}

/// Outcome values i/(N−1): 0, ½, 1 for games; 0, ¼, ½, ¾, 1 for pairs.
fn outcome_values<const N: usize>() -> [f64; N] {
    let mut values = [0.0; N];
    for (i, v) in values.iter_mut().enumerate() {
        *v = i as f64 / (N - 1) as f64;
    }
    values
}

fn assemble<const N: usize>(
    total: f64,
    freqs: [f64; N],
    p0: Option<[f64; N]>,
    p1: Option<[f64; N]>,
) -> Gsprt<N> {
    let jumps = match (p0, p1) {
        (Some(p0), Some(p1)) => {
            let mut jumps = [0.0; N];
            for i in 0..N {
                jumps[i] = p1[i].ln() - p0[i].ln();
            }
            jumps
        }
        _ => [f64::NAN; N],
    };
    Gsprt {
        total,
        freqs,
        jumps,
    }
}

/// GSPRT for bounds on the expected score per unit (s0, s1 in 0..1).
pub(crate) fn gsprt_expected<const N: usize>(counts: [u64; N], s0: f64, s1: f64) -> Gsprt<N> {
    let (regular, total) = regularize(counts);
    let freqs = regular.map(|n| n / total);
    let values = outcome_values::<N>();
    let p0 = mle_expected(&values, &freqs, s0);
    let p1 = mle_expected(&values, &freqs, s1);
    assemble(total, freqs, p0, p1)
}

/// GSPRT for bounds on the t-value (μ − ½)/σ of the per-unit score.
pub(crate) fn gsprt_t_value<const N: usize>(counts: [u64; N], t0: f64, t1: f64) -> Gsprt<N> {
    let (regular, total) = regularize(counts);
    let freqs = regular.map(|n| n / total);
    let values = outcome_values::<N>();
    let p0 = mle_t_value(&values, &freqs, 0.5, t0);
    let p1 = mle_t_value(&values, &freqs, 0.5, t1);
    assemble(total, freqs, p0, p1)
}

/// t-value bounds of normalized-Elo bounds for samples of `N` outcomes: nElo / (800/ln 10),
/// times √2 for pairs (their score's σ is that of one game divided by √2).
pub(crate) fn t_bounds<const N: usize>(nelo0: f64, nelo1: f64) -> (f64, f64) {
    let scale = if N == 5 {
        std::f64::consts::SQRT_2
    } else {
        1.0
    };
    (nelo0 / NELO_PER_T * scale, nelo1 / NELO_PER_T * scale)
}

/// Logistic bounds (as expected scores) of BayesElo bounds, with the drawelo estimated from
/// the regularized trinomial counts; scores are clamped to [0.001, 0.999] as fishtest's
/// `elo()` does.
pub(crate) fn bayesian_scores(counts: &Trinomial, belo0: f64, belo1: f64) -> (f64, f64) {
    let ([loss, _, win], total) = regularize(counts.by_score());
    let de = drawelo(win / total, loss / total);
    let to_score = |belo: f64| {
        let s = bayeselo_to_score(belo, de).clamp(1e-3, 1.0 - 1e-3);
        elo_to_score(score_to_elo(s))
    };
    (to_score(belo0), to_score(belo1))
}

/// The GSPRT log-likelihood ratio for logistic Elo bounds. `counts_by_score` holds 3
/// (losses, draws, wins) or 5 (pentanomial) frequencies; other lengths give NaN.
pub fn llr_logistic(counts_by_score: &[u64], elo0: f64, elo1: f64) -> f64 {
    let (s0, s1) = (elo_to_score(elo0), elo_to_score(elo1));
    match counts_by_score.len() {
        3 => gsprt_expected::<3>(counts_by_score.try_into().unwrap_or_default(), s0, s1).llr(),
        5 => gsprt_expected::<5>(counts_by_score.try_into().unwrap_or_default(), s0, s1).llr(),
        _ => f64::NAN,
    }
}

/// The GSPRT log-likelihood ratio for normalized-Elo bounds. `counts_by_score` holds 3
/// (losses, draws, wins) or 5 (pentanomial) frequencies; other lengths give NaN.
pub fn llr_normalized(counts_by_score: &[u64], nelo0: f64, nelo1: f64) -> f64 {
    match counts_by_score.len() {
        3 => {
            let (t0, t1) = t_bounds::<3>(nelo0, nelo1);
            gsprt_t_value::<3>(counts_by_score.try_into().unwrap_or_default(), t0, t1).llr()
        }
        5 => {
            let (t0, t1) = t_bounds::<5>(nelo0, nelo1);
            gsprt_t_value::<5>(counts_by_score.try_into().unwrap_or_default(), t0, t1).llr()
        }
        _ => f64::NAN,
    }
}

/// The GSPRT log-likelihood ratio for BayesElo bounds (trinomial counts only).
pub fn llr_bayesian(counts: &Trinomial, belo0: f64, belo1: f64) -> f64 {
    let (s0, s1) = bayesian_scores(counts, belo0, belo1);
    gsprt_expected::<3>(counts.by_score(), s0, s1).llr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_round_trip() {
        for model in [Model::Normalized, Model::Logistic, Model::Bayesian] {
            assert_eq!(model.name().parse::<Model>().unwrap(), model);
        }
        assert!("gaussian".parse::<Model>().is_err());
    }

    #[test]
    fn llr_is_zero_between_symmetric_bounds_at_the_midpoint() {
        // Score exactly between the hypotheses: both MLEs are equally far, LLR ≈ 0.
        let llr = llr_logistic(&[100, 200, 100], -10.0, 10.0);
        assert!(llr.abs() < 1e-9, "{llr}");
    }
}
