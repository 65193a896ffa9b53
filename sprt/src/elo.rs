//! Estimates from counts: score, logistic Elo with a 95 % interval, LOS, draw ratio and
//! normalized Elo, computed the way fastchess does (pentanomial counts use the variance of
//! the pair score), plus the Elo ↔ score conversions of the three Elo models.

use std::f64::consts::LN_10;

use statrs::function::erf::erf;

use crate::counts::{Pentanomial, Sample, Trinomial};

/// The 97.5 % quantile of the standard normal distribution (two-sided 95 % interval),
/// exact to double precision.
pub const Z_975: f64 = 1.959_963_984_540_054;

/// Normalized Elo per unit of t-value: 800 / ln 10 (fishtest's `nelo_divided_by_nt`).
pub const NELO_PER_T: f64 = 800.0 / LN_10;

/// Expected score of a logistic Elo difference: 1 / (1 + 10^(−elo/400)).
pub fn elo_to_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Logistic Elo difference of an expected score: −400 · log10(1/score − 1).
/// A score of 1 gives +∞, 0 gives −∞, NaN gives NaN.
pub fn score_to_elo(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// Win, draw and loss probabilities of a BayesElo difference with the given drawelo.
pub fn bayeselo_to_wdl(bayeselo: f64, drawelo: f64) -> [f64; 3] {
    let win = 1.0 / (1.0 + 10f64.powf((-bayeselo + drawelo) / 400.0));
    let loss = 1.0 / (1.0 + 10f64.powf((bayeselo + drawelo) / 400.0));
    [win, 1.0 - win - loss, loss]
}

/// Expected score of a BayesElo difference with the given drawelo.
pub fn bayeselo_to_score(bayeselo: f64, drawelo: f64) -> f64 {
    let [win, draw, _] = bayeselo_to_wdl(bayeselo, drawelo);
    win + 0.5 * draw
}

/// The drawelo of win and loss probabilities (BayesElo model):
/// 200 · log10((1 − L)/L · (1 − W)/W).
pub fn drawelo(win: f64, loss: f64) -> f64 {
    200.0 * ((1.0 - loss) / loss * (1.0 - win) / win).log10()
}

/// Point estimates and 95 % error bars of a sample.
///
/// Degenerate samples give explicit non-finite values instead of panicking: no games →
/// everything NaN; all draws (zero variance, score ½) → Elo 0, error 0, LOS and nElo NaN;
/// all wins → Elo +∞, LOS 1, errors NaN.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Number of games.
    pub games: u64,
    /// Mean score per game of the tested engine, 0..=1.
    pub score: f64,
    /// Variance of the score of one sampling unit (a game, or a pair whose score is
    /// scaled to 0..=1).
    pub unit_variance: f64,
    /// Standard error of `score`.
    pub score_error: f64,
    /// Logistic Elo difference.
    pub elo: f64,
    /// Half-width of the 95 % interval in Elo: (elo(s + z·se) − elo(s − z·se)) / 2.
    pub elo_error: f64,
    /// Likelihood of superiority as a fraction: Φ((s − ½)/se).
    pub los: f64,
    /// Share of drawn games (trinomial) or of pairs scoring exactly 1 point (pentanomial).
    pub draw_ratio: f64,
    /// Normalized Elo (fastchess): (s − ½)/σ · 800/ln 10, with σ the per-game standard
    /// deviation (√(2·pair variance) for pentanomial counts).
    pub nelo: f64,
    /// Half-width of the 95 % interval of the normalized Elo.
    pub nelo_error: f64,
}

impl Estimate {
    /// The logistic Elo interval (lower, upper) at 95 %.
    pub fn elo_interval(&self) -> (f64, f64) {
        let half = Z_975 * self.score_error;
        (
            score_to_elo(self.score - half),
            score_to_elo(self.score + half),
        )
    }
}

/// Builds the estimate from a score, the variance of one unit and the number of units.
/// `sigma_factor` turns the unit variance into the per-game variance used by nElo
/// (1 for games, 2 for pairs).
fn estimate(
    games: u64,
    units: f64,
    score: f64,
    variance: f64,
    sigma_factor: f64,
    draw_ratio: f64,
) -> Estimate {
    let variance_per_unit = variance / units;
    let score_error = variance_per_unit.sqrt();
    let upper = score + Z_975 * score_error;
    let lower = score - Z_975 * score_error;
    let nelo = |s: f64| (s - 0.5) / (sigma_factor * variance).sqrt() * NELO_PER_T;
    Estimate {
        games,
        score,
        unit_variance: variance,
        score_error,
        elo: score_to_elo(score),
        elo_error: (score_to_elo(upper) - score_to_elo(lower)) / 2.0,
        los: (1.0 - erf(-(score - 0.5) / (2.0 * variance_per_unit).sqrt())) / 2.0,
        draw_ratio,
        nelo: nelo(score),
        nelo_error: (nelo(upper) - nelo(lower)) / 2.0,
    }
}

impl Trinomial {
    /// Estimates from single games (game-level variance).
    pub fn estimate(&self) -> Estimate {
        let games = self.games() as f64;
        let w = self.wins as f64 / games;
        let d = self.draws as f64 / games;
        let l = self.losses as f64 / games;
        let score = w + 0.5 * d;
        let variance =
            w * (1.0 - score).powi(2) + d * (0.5 - score).powi(2) + l * (0.0 - score).powi(2);
        estimate(self.games(), games, score, variance, 1.0, d)
    }
}

impl Pentanomial {
    /// Estimates from game pairs (pair-level variance, so correlated openings count right).
    pub fn estimate(&self) -> Estimate {
        let pairs = self.pairs() as f64;
        let [ll, ld, wl_dd, wd, ww] = self.0.map(|n| n as f64 / pairs);
        let score = ww + 0.75 * wd + 0.5 * wl_dd + 0.25 * ld;
        let variance = ww * (1.0 - score).powi(2)
            + wd * (0.75 - score).powi(2)
            + wl_dd * (0.5 - score).powi(2)
            + ld * (0.25 - score).powi(2)
            + ll * (0.0 - score).powi(2);
        estimate(self.games(), pairs, score, variance, 2.0, wl_dd)
    }

    /// Share of pairs scoring exactly 1 point (WL, LW or DD).
    pub fn pair_draw_ratio(&self) -> f64 {
        self.0[2] as f64 / self.pairs() as f64
    }

    /// fastchess's `PairsRatio`: pairs won (WW, WD) over pairs lost (LD, LL).
    /// +∞ when no pair was lost, NaN when no pair was won or lost.
    pub fn pair_ratio(&self) -> f64 {
        (self.0[3] + self.0[4]) as f64 / (self.0[0] + self.0[1]) as f64
    }
}

impl Sample {
    /// Estimates of the sample (see [`Trinomial::estimate`] and [`Pentanomial::estimate`]).
    pub fn estimate(&self) -> Estimate {
        match self {
            Sample::Trinomial(t) => t.estimate(),
            Sample::Pentanomial(p) => p.estimate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_is_the_975_quantile() {
        // Python (libm erfc): 0.5 * math.erfc(-1.959963984540054 / math.sqrt(2)) == 0.975 exactly;
        // statrs's erfc is accurate to about 1e-12.
        let p = 0.5 * statrs::function::erf::erfc(-Z_975 / std::f64::consts::SQRT_2);
        assert!((p - 0.975).abs() < 1e-11, "{p}");
    }

    #[test]
    fn elo_and_score_round_trip() {
        for elo in [-800.0, -100.0, -1.0, 0.0, 3.5, 400.0] {
            assert!((score_to_elo(elo_to_score(elo)) - elo).abs() < 1e-9);
        }
        assert_eq!(score_to_elo(1.0), f64::INFINITY);
        assert_eq!(score_to_elo(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn bayeselo_zero_is_even() {
        let d = drawelo(0.3, 0.3);
        assert!((bayeselo_to_score(0.0, d) - 0.5).abs() < 1e-12);
        let [w, dr, l] = bayeselo_to_wdl(0.0, d);
        assert!((w - 0.3).abs() < 1e-12 && (l - 0.3).abs() < 1e-12 && (dr - 0.4).abs() < 1e-12);
    }
}
