//! The sequential test: validated parameters, Wald's bounds and the decision rule.

use std::fmt;

use crate::counts::{Pentanomial, Sample, Trinomial};
use crate::elo::elo_to_score;
use crate::llr::{bayesian_scores, gsprt_expected, gsprt_t_value, t_bounds, Gsprt, Model};

/// Why SPRT parameters were rejected.
#[derive(Debug, Clone, PartialEq)]
pub enum SprtError {
    /// elo0 must be strictly below elo1.
    BoundsOrder {
        /// The lower bound given.
        elo0: f64,
        /// The upper bound given.
        elo1: f64,
    },
    /// An Elo bound is NaN or infinite.
    NonFiniteBound {
        /// `"elo0"` or `"elo1"`.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// α (false positive rate) outside (0, 1).
    Alpha(f64),
    /// β (false negative rate) outside (0, 1).
    Beta(f64),
    /// α + β must be below 1.
    AlphaBetaSum {
        /// α given.
        alpha: f64,
        /// β given.
        beta: f64,
    },
    /// The BayesElo model needs trinomial (W/D/L) counts.
    BayesianPentanomial,
}

impl fmt::Display for SprtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SprtError::BoundsOrder { elo0, elo1 } => {
                write!(f, "elo0 ({elo0}) must be less than elo1 ({elo1}): give the null hypothesis as the lower bound")
            }
            SprtError::NonFiniteBound { name, value } => write!(f, "{name} ({value}) must be a finite number"),
            SprtError::Alpha(alpha) => write!(f, "alpha ({alpha}) must be strictly between 0 and 1, e.g. 0.05"),
            SprtError::Beta(beta) => write!(f, "beta ({beta}) must be strictly between 0 and 1, e.g. 0.05"),
            SprtError::AlphaBetaSum { alpha, beta } => {
                write!(f, "alpha + beta ({alpha} + {beta}) must be less than 1")
            }
            SprtError::BayesianPentanomial => write!(
                f,
                "the bayesian model needs W/D/L counts, not pentanomial ones: use --wdl, or the normalized or logistic model"
            ),
        }
    }
}

impl std::error::Error for SprtError {}

/// The outcome of the test so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    /// LLR ≤ lower bound: accept H0 (the change fails).
    H0,
    /// LLR ≥ upper bound: accept H1 (the change passes).
    H1,
    /// Neither bound reached (or the LLR is NaN): play on.
    Continue,
}

impl Decision {
    /// `"H0"`, `"H1"` or `"continue"`.
    pub fn name(self) -> &'static str {
        match self {
            Decision::H0 => "H0",
            Decision::H1 => "H1",
            Decision::Continue => "continue",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated SPRT: H0 elo = elo0 against H1 elo = elo1, in the units of `model`, with
/// error rates α (pass when H0 holds) and β (fail when H1 holds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sprt {
    elo0: f64,
    elo1: f64,
    alpha: f64,
    beta: f64,
    model: Model,
}

/// The state of an SPRT for one sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SprtStatus {
    /// Log-likelihood ratio.
    pub llr: f64,
    /// Lower (H0) bound ln(β/(1−α)).
    pub lower_bound: f64,
    /// Upper (H1) bound ln((1−β)/α).
    pub upper_bound: f64,
    /// What the LLR decides.
    pub decision: Decision,
}

impl Sprt {
    /// Checks the parameters: finite elo0 < elo1, 0 < α < 1, 0 < β < 1, α + β < 1.
    pub fn new(
        elo0: f64,
        elo1: f64,
        alpha: f64,
        beta: f64,
        model: Model,
    ) -> Result<Sprt, SprtError> {
        if !elo0.is_finite() {
            return Err(SprtError::NonFiniteBound {
                name: "elo0",
                value: elo0,
            });
        }
        if !elo1.is_finite() {
            return Err(SprtError::NonFiniteBound {
                name: "elo1",
                value: elo1,
            });
        }
        if elo0 >= elo1 {
            return Err(SprtError::BoundsOrder { elo0, elo1 });
        }
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(SprtError::Alpha(alpha));
        }
        if !(beta > 0.0 && beta < 1.0) {
            return Err(SprtError::Beta(beta));
        }
        if alpha + beta >= 1.0 {
            return Err(SprtError::AlphaBetaSum { alpha, beta });
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha,
            beta,
            model,
        })
    }

    /// The H0 bound.
    pub fn elo0(&self) -> f64 {
        self.elo0
    }

    /// The H1 bound.
    pub fn elo1(&self) -> f64 {
        self.elo1
    }

    /// α: the probability of passing when elo = elo0.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// β: the probability of failing when elo = elo1.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The Elo model of the bounds.
    pub fn model(&self) -> Model {
        self.model
    }

    /// Lower bound A = ln(β/(1−α)).
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// Upper bound B = ln((1−β)/α).
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// H1 when llr ≥ B, H0 when llr ≤ A, else (and for NaN) continue.
    pub fn decide(&self, llr: f64) -> Decision {
        if llr >= self.upper_bound() {
            Decision::H1
        } else if llr <= self.lower_bound() {
            Decision::H0
        } else {
            Decision::Continue
        }
    }

    /// How far the LLR has gone toward the bound on its side, as fastchess prints it:
    /// llr/B for llr ≥ 0, −llr/A (≤ 0) otherwise.
    pub fn fraction(&self, llr: f64) -> f64 {
        if llr >= 0.0 {
            llr / self.upper_bound()
        } else {
            -llr / self.lower_bound()
        }
    }

    /// The GSPRT log-likelihood ratio of trinomial counts (any model).
    pub fn llr_trinomial(&self, counts: &Trinomial) -> f64 {
        self.gsprt_trinomial(counts).llr()
    }

    /// The GSPRT log-likelihood ratio of pentanomial counts; the bayesian model is
    /// rejected.
    pub fn llr_pentanomial(&self, counts: &Pentanomial) -> Result<f64, SprtError> {
        Ok(self.gsprt_pentanomial(counts)?.llr())
    }

    /// The GSPRT log-likelihood ratio of a sample.
    pub fn llr(&self, sample: &Sample) -> Result<f64, SprtError> {
        match sample {
            Sample::Trinomial(t) => Ok(self.llr_trinomial(t)),
            Sample::Pentanomial(p) => self.llr_pentanomial(p),
        }
    }

    /// LLR, bounds and decision for a sample.
    pub fn status(&self, sample: &Sample) -> Result<SprtStatus, SprtError> {
        let llr = self.llr(sample)?;
        Ok(SprtStatus {
            llr,
            lower_bound: self.lower_bound(),
            upper_bound: self.upper_bound(),
            decision: self.decide(llr),
        })
    }

    pub(crate) fn gsprt_trinomial(&self, counts: &Trinomial) -> Gsprt<3> {
        let by_score = counts.by_score();
        match self.model {
            Model::Normalized => {
                let (t0, t1) = t_bounds::<3>(self.elo0, self.elo1);
                gsprt_t_value(by_score, t0, t1)
            }
            Model::Logistic => {
                gsprt_expected(by_score, elo_to_score(self.elo0), elo_to_score(self.elo1))
            }
            Model::Bayesian => {
                let (s0, s1) = bayesian_scores(counts, self.elo0, self.elo1);
                gsprt_expected(by_score, s0, s1)
            }
        }
    }

    pub(crate) fn gsprt_pentanomial(&self, counts: &Pentanomial) -> Result<Gsprt<5>, SprtError> {
        match self.model {
            Model::Normalized => {
                let (t0, t1) = t_bounds::<5>(self.elo0, self.elo1);
                Ok(gsprt_t_value(counts.0, t0, t1))
            }
            Model::Logistic => Ok(gsprt_expected(
                counts.0,
                elo_to_score(self.elo0),
                elo_to_score(self.elo1),
            )),
            Model::Bayesian => Err(SprtError::BayesianPentanomial),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_bad_value() {
        let bad = [
            (5.0, 0.0, 0.05, 0.05, "elo0"),
            (0.0, 0.0, 0.05, 0.05, "elo0"),
            (f64::NAN, 1.0, 0.05, 0.05, "elo0"),
            (0.0, f64::INFINITY, 0.05, 0.05, "elo1"),
            (0.0, 5.0, 0.0, 0.05, "alpha"),
            (0.0, 5.0, f64::NAN, 0.05, "alpha"),
            (0.0, 5.0, 0.05, 1.0, "beta"),
            (0.0, 5.0, 0.6, 0.5, "alpha + beta"),
        ];
        for (elo0, elo1, alpha, beta, name) in bad {
            let err = Sprt::new(elo0, elo1, alpha, beta, Model::Normalized).unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
        }
        assert!(Sprt::new(0.0, 5.0, 0.05, 0.05, Model::Normalized).is_ok());
    }

    #[test]
    fn bounds_are_walds() {
        let sprt = Sprt::new(0.0, 2.0, 0.05, 0.05, Model::Normalized).unwrap();
        assert!((sprt.upper_bound() - 2.9444389791664403).abs() < 1e-15);
        assert!((sprt.lower_bound() + 2.9444389791664403).abs() < 1e-15);
        assert_eq!(sprt.decide(3.0), Decision::H1);
        assert_eq!(sprt.decide(-3.0), Decision::H0);
        assert_eq!(sprt.decide(f64::NAN), Decision::Continue);
    }

    #[test]
    fn bayesian_rejects_pairs() {
        let sprt = Sprt::new(0.0, 2.0, 0.05, 0.05, Model::Bayesian).unwrap();
        assert_eq!(
            sprt.llr_pentanomial(&Pentanomial::default()),
            Err(SprtError::BayesianPentanomial)
        );
    }
}
