//! OpenBench's SPSA gain schedule.
//!
//! For a run of `N` iterations with exponents α, γ and `A = a_ratio · N`, each parameter has
//!
//! ```text
//! c   = c_end · N^γ                        a   = r_end · c_end² · (A + N)^α
//! c_k = max(c / k^γ, 0.5)                  r_k = a / (A + k)^α / c_k²
//! ```
//!
//! at iteration `k = 1..=N`, so that `c_N = c_end` and `r_N = r_end` (the 0.5 floor is for
//! integer parameters, which all of the builtin engine's are).

/// The constants of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gains {
    /// Number of iterations `N`.
    pub iterations: u64,
    /// Learning-rate decay exponent α (0.602).
    pub alpha: f64,
    /// Perturbation decay exponent γ (0.101).
    pub gamma: f64,
    /// `A / N` (0.1).
    pub a_ratio: f64,
}

/// Smallest perturbation of an integer parameter.
pub const MIN_INT_C: f64 = 0.5;

impl Gains {
    /// `A = a_ratio · N`.
    pub fn big_a(&self) -> f64 {
        self.a_ratio * self.iterations as f64
    }

    /// `(c_k, r_k)` of a parameter with `c_end`, `r_end` at iteration `k` (1-based).
    pub fn at(&self, c_end: f64, r_end: f64, k: u64) -> (f64, f64) {
        let n = self.iterations as f64;
        let c = c_end * n.powf(self.gamma);
        let a = r_end * c_end * c_end * (self.big_a() + n).powf(self.alpha);
        let k = k as f64;
        let c_k = (c / k.powf(self.gamma)).max(MIN_INT_C);
        let r_k = a / (self.big_a() + k).powf(self.alpha) / (c_k * c_k);
        (c_k, r_k)
    }

    /// Checks the constants.
    pub fn check(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("--iterations must be at least 1".to_string());
        }
        for (name, v) in [
            ("--alpha", self.alpha),
            ("--gamma", self.gamma),
            ("--a-ratio", self.a_ratio),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{name} {v}: must be a non-negative number"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openbench_vector() {
        let g = Gains {
            iterations: 25_000,
            alpha: 0.602,
            gamma: 0.101,
            a_ratio: 0.1,
        };
        for (k, c, r) in [
            (1, 27.809, 0.001095),
            (1000, 13.842, 0.003611),
            (25_000, 10.0, 0.002),
        ] {
            let (ck, rk) = g.at(10.0, 0.002, k);
            assert!((ck - c).abs() < 0.0005, "c_{k} = {ck}, expected {c}");
            assert!((rk - r).abs() < 0.0000005, "r_{k} = {rk}, expected {r}");
        }
    }

    #[test]
    fn integer_floor_and_checks() {
        let g = Gains {
            iterations: 100,
            alpha: 0.602,
            gamma: 0.101,
            a_ratio: 0.1,
        };
        let (c, _) = g.at(0.1, 0.002, 100);
        assert_eq!(c, MIN_INT_C);
        assert!(g.check().is_ok());
        assert!(Gains { iterations: 0, ..g }.check().is_err());
        assert!(Gains { alpha: -1.0, ..g }.check().is_err());
        assert!(Gains {
            gamma: f64::NAN,
            ..g
        }
        .check()
        .is_err());
    }
}
