//! Is a difference between two variants real? Welch's t-test on per-game record counts and
//! on site means.
//!
//! Records of one search are not independent (neighbouring nodes are alike), so treating
//! millions of records as independent samples would flag every tiny difference. The unit of
//! independence is the game: with per-game sums ([`PerGame`](super::stats::PerGame)) the tests use
//!
//! * **N per game**: the per-game counts n_g; mean n̄ = Σn/G, variance of the mean
//!   (Σn² − (Σn)²/G) / (G (G − 1)), G − 1 degrees of freedom;
//! * **μ**: the ratio estimate μ̂ = Σs / Σn (the site mean) with its cluster-robust variance
//!   Σ(s_g − μ̂ n_g)² / (G (G − 1) n̄²) (delta method), G − 1 degrees of freedom.
//!
//! Without per-game sums (UCI dumps, CSV files) the μ test falls back to the records as
//! independent samples (variance σ²/(N − 1)), which overstates significance, and there is no
//! N-per-game test. Welch's test combines the two variances with the Welch–Satterthwaite
//! degrees of freedom; the two-sided p-value is that of Student's t.

use super::stats::{SiteStats, VariantStats};

/// An estimate with the variance of the estimate and its degrees of freedom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The value.
    pub value: f64,
    /// Variance of the value (NaN when unknown).
    pub variance: f64,
    /// Degrees of freedom of the variance.
    pub df: f64,
}

/// The result of a two-sample test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Test {
    /// b − a.
    pub diff: f64,
    /// Welch's t statistic.
    pub t: f64,
    /// Degrees of freedom (Welch–Satterthwaite).
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

impl Test {
    /// `*` (p < 0.05), `**` (p < 0.01), `***` (p < 0.001) or nothing.
    pub fn stars(&self) -> &'static str {
        match self.p {
            p if p < 0.001 => "***",
            p if p < 0.01 => "**",
            p if p < 0.05 => "*",
            _ => "",
        }
    }
}

/// Records per game of a site (`None` when the variant's game count is unknown).
pub fn per_game_count(site: Option<&SiteStats>, games: u64) -> Option<Estimate> {
    if games == 0 {
        return None;
    }
    let g = games as f64;
    let Some(site) = site else {
        return Some(Estimate {
            value: 0.0,
            variance: 0.0,
            df: g - 1.0,
        });
    };
    let value = site.count as f64 / g;
    let variance = match site.per_game {
        Some(pg) if games >= 2 => ((pg.n2 - pg.n * pg.n / g) / (g * (g - 1.0))).max(0.0),
        _ => f64::NAN,
    };
    Some(Estimate {
        value,
        variance,
        df: g - 1.0,
    })
}

/// The site mean with the variance of the estimate.
pub fn mean(site: &SiteStats, games: u64) -> Estimate {
    let n = site.count as f64;
    match site.per_game {
        Some(pg) if games >= 2 && pg.n > 0.0 => {
            let g = games as f64;
            let mu = pg.s / pg.n;
            let nbar = pg.n / g;
            let ss = (pg.s2 - 2.0 * mu * pg.ns + mu * mu * pg.n2).max(0.0);
            Estimate {
                value: site.mean,
                variance: ss / (g * (g - 1.0) * nbar * nbar),
                df: g - 1.0,
            }
        }
        _ if site.count >= 2 => Estimate {
            value: site.mean,
            variance: site.stddev * site.stddev / (n - 1.0),
            df: n - 1.0,
        },
        _ => Estimate {
            value: site.mean,
            variance: f64::NAN,
            df: 0.0,
        },
    }
}

/// Welch's test of `b − a`; `None` when either variance is unknown.
pub fn welch(a: Estimate, b: Estimate) -> Option<Test> {
    if !(a.variance.is_finite() && b.variance.is_finite()) || a.df < 1.0 || b.df < 1.0 {
        return None;
    }
    let diff = b.value - a.value;
    let v = a.variance + b.variance;
    if v <= 0.0 {
        // No spread on either side: any difference is certain, none is none.
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        return Some(Test {
            diff,
            t,
            df: a.df + b.df,
            p,
        });
    }
    let t = diff / v.sqrt();
    let denom = a.variance * a.variance / a.df + b.variance * b.variance / b.df;
    let df = if denom > 0.0 {
        v * v / denom
    } else {
        a.df + b.df
    };
    Some(Test {
        diff,
        t,
        df,
        p: two_sided_p(t, df),
    })
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    statrs::function::beta::beta_reg(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

/// The tests of one site between two variants: N per game and μ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SiteComparison {
    /// Records per game, b − a.
    pub per_game: Option<Test>,
    /// Relative change of records per game, (b − a)/a.
    pub per_game_ratio: Option<f64>,
    /// Site means, b − a.
    pub mean: Option<Test>,
}

/// Compares a site of variant `a` with the same site of variant `b`.
pub fn compare(label: &str, a: &VariantStats, b: &VariantStats) -> SiteComparison {
    let (sa, sb) = (a.site(label), b.site(label));
    let (na, nb) = (per_game_count(sa, a.games), per_game_count(sb, b.games));
    let per_game = na.zip(nb).and_then(|(x, y)| welch(x, y));
    let per_game_ratio = na
        .zip(nb)
        .filter(|(x, _)| x.value > 0.0)
        .map(|(x, y)| (y.value - x.value) / x.value);
    let mean = sa
        .zip(sb)
        .and_then(|(x, y)| welch(mean(x, a.games), mean(y, b.games)));
    SiteComparison {
        per_game,
        per_game_ratio,
        mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::stats::PerGame;

    #[test]
    fn p_values_match_the_t_distribution() {
        // Reference values (R: 2 * pt(-|t|, df)).
        let cases = [
            (2.0, 10.0, 0.07338803),
            (1.0, 1.0, 0.5),
            (3.5, 4.0, 0.0248962),
            (0.0, 7.0, 1.0),
            (1.959964, 1e9, 0.05),
        ];
        for (t, df, p) in cases {
            let got = two_sided_p(t, df);
            assert!((got - p).abs() < 1e-5, "t {t} df {df}: {got} vs {p}");
        }
        assert_eq!(two_sided_p(f64::INFINITY, 3.0), 0.0);
    }

    #[test]
    fn welch_on_known_samples() {
        // a = 1..=5 (mean 3, var 2.5), b = 3,5,7,9,11 (mean 7, var 10): t = 4/sqrt(2.5) = 2.5298,
        // df = 6.25 / ((0.25 + 4) / 4) = 5.882; p = 0.04546 (R: t.test(a, b)).
        let a = Estimate {
            value: 3.0,
            variance: 2.5 / 5.0,
            df: 4.0,
        };
        let b = Estimate {
            value: 7.0,
            variance: 10.0 / 5.0,
            df: 4.0,
        };
        let t = welch(a, b).unwrap();
        assert!((t.t - 2.529822).abs() < 1e-5, "{t:?}");
        assert!((t.df - 5.882353).abs() < 1e-5, "{t:?}");
        assert!((t.p - 0.04546).abs() < 5e-5, "{t:?}");
        assert_eq!(t.stars(), "*");
        let same = Estimate {
            value: 1.0,
            variance: 0.0,
            df: 3.0,
        };
        assert_eq!(welch(same, same).unwrap().p, 1.0);
        let nan = Estimate {
            variance: f64::NAN,
            ..same
        };
        assert!(welch(nan, same).is_none());
    }

    #[test]
    fn per_game_estimates_use_game_sums() {
        // Games with 2, 4 and 6 records of values summing to 2, 4, 12.
        let site = SiteStats {
            site: "s".into(),
            location: String::new(),
            count: 12,
            mean: 18.0 / 12.0,
            mean_abs: 1.5,
            stddev: 1.0,
            min: 0,
            max: 3,
            exact: None,
            per_game: Some(PerGame {
                n: 12.0,
                n2: 4.0 + 16.0 + 36.0,
                s: 18.0,
                s2: 4.0 + 16.0 + 144.0,
                ns: 4.0 + 16.0 + 72.0,
            }),
            buckets: Vec::new(),
        };
        let n = per_game_count(Some(&site), 3).unwrap();
        assert_eq!(n.value, 4.0);
        // Sample variance of (2, 4, 6) is 4; of the mean 4/3.
        assert!((n.variance - 4.0 / 3.0).abs() < 1e-12);
        let m = mean(&site, 3);
        // Residuals s - 1.5 n: -1, -2, 3 → Σ² = 14; / (3·2·4²) = 14/96.
        assert!((m.variance - 14.0 / 96.0).abs() < 1e-12, "{m:?}");
        assert_eq!(m.df, 2.0);
        assert!(per_game_count(Some(&site), 0).is_none());
        assert_eq!(per_game_count(None, 4).unwrap().value, 0.0);
    }
}
