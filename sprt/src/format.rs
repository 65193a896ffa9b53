//! Result lines in the formats of cutechess-cli and fastchess, so scripts that parse those
//! tools parse spar too. Non-finite numbers print as `inf`, `-inf` and `nan`, as both
//! tools do.
//!
//! ```
//! use sprt::{format, Trinomial};
//!
//! let counts = Trinomial::new(136, 111, 96);
//! assert_eq!(format::cutechess_score(&counts, "dev", "base"), "Score of dev vs base: 136 - 96 - 111  [0.558] 343");
//! assert_eq!(
//!     format::cutechess_elo(&counts.estimate()),
//!     "Elo difference: 40.7 +/- 30.4, LOS: 99.6 %, DrawRatio: 32.4 %"
//! );
//! ```

use crate::counts::{Pentanomial, Trinomial};
use crate::elo::Estimate;
use crate::sprt::Sprt;

/// `x` with `decimals` digits after the point; `inf`, `-inf` or `nan` when not finite.
pub fn number(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{x:.decimals$}")
    }
}

/// cutechess: `Score of A vs B: W - L - D  [0.509] N` (score with 3 decimals).
pub fn cutechess_score(counts: &Trinomial, first: &str, second: &str) -> String {
    let score = counts.points() / counts.games() as f64;
    format!(
        "Score of {first} vs {second}: {} - {} - {}  [{}] {}",
        counts.wins,
        counts.losses,
        counts.draws,
        number(score, 3),
        counts.games()
    )
}

/// cutechess: `Elo difference: 6.6 +/- 4.7, LOS: 99.7 %, DrawRatio: 29.3 %` (one decimal).
pub fn cutechess_elo(estimate: &Estimate) -> String {
    format!(
        "Elo difference: {} +/- {}, LOS: {} %, DrawRatio: {} %",
        number(estimate.elo, 1),
        number(estimate.elo_error, 1),
        number(estimate.los * 100.0, 1),
        number(estimate.draw_ratio * 100.0, 1)
    )
}

/// fastchess: `Elo: 0.92 +/- 1.69, nElo: 1.28 +/- 2.36` (two decimals).
pub fn fastchess_elo(estimate: &Estimate) -> String {
    format!(
        "Elo: {} +/- {}, nElo: {} +/- {}",
        number(estimate.elo, 2),
        number(estimate.elo_error, 2),
        number(estimate.nelo, 2),
        number(estimate.nelo_error, 2)
    )
}

/// fastchess: `LOS: 93.20 %, DrawRatio: 51.09 %` and, for pentanomial counts,
/// `, PairsRatio: 1.02`. The draw ratio is the estimate's (pair draws for pentanomial).
pub fn fastchess_los(estimate: &Estimate, pair_ratio: Option<f64>) -> String {
    let mut line = format!(
        "LOS: {} %, DrawRatio: {} %",
        number(estimate.los * 100.0, 2),
        number(estimate.draw_ratio * 100.0, 2)
    );
    if let Some(ratio) = pair_ratio {
        line += &format!(", PairsRatio: {}", number(ratio, 2));
    }
    line
}

/// fastchess: `Games: 343, Wins: 136, Losses: 96, Draws: 111, Points: 191.5 (55.83 %)`.
pub fn fastchess_games(counts: &Trinomial) -> String {
    let points = counts.points();
    format!(
        "Games: {}, Wins: {}, Losses: {}, Draws: {}, Points: {} ({} %)",
        counts.games(),
        counts.wins,
        counts.losses,
        counts.draws,
        number(points, 1),
        number(points / counts.games() as f64 * 100.0, 2)
    )
}

/// fastchess: `Ptnml(0-2): [LL, LD, WL+DD, WD, WW]`.
pub fn fastchess_ptnml(counts: &Pentanomial) -> String {
    let [a, b, c, d, e] = counts.0;
    format!("Ptnml(0-2): [{a}, {b}, {c}, {d}, {e}]")
}

/// fastchess: `LLR: 2.25 (76.4%) (-2.94, 2.94) [0.00, 2.00]` — the LLR, its progress toward
/// the bound on its side, the bounds and the Elo hypotheses.
pub fn fastchess_llr(sprt: &Sprt, llr: f64) -> String {
    format!(
        "LLR: {} ({}%) ({}, {}) [{}, {}]",
        number(llr, 2),
        number(sprt.fraction(llr) * 100.0, 1),
        number(sprt.lower_bound(), 2),
        number(sprt.upper_bound(), 2),
        number(sprt.elo0(), 2),
        number(sprt.elo1(), 2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Model;

    #[test]
    fn fastchess_lines() {
        let pairs = Pentanomial::new([365, 16618, 36229, 16974, 390]);
        let estimate = pairs.estimate();
        assert_eq!(
            fastchess_elo(&estimate),
            "Elo: 1.00 +/- 0.92, nElo: 1.96 +/- 1.81"
        );
        assert_eq!(
            fastchess_los(&estimate, Some(pairs.pair_ratio())),
            "LOS: 98.31 %, DrawRatio: 51.33 %, PairsRatio: 1.02"
        );
        assert_eq!(
            fastchess_ptnml(&pairs),
            "Ptnml(0-2): [365, 16618, 36229, 16974, 390]"
        );
        let sprt = Sprt::new(0.0, 2.0, 0.05, 0.05, Model::Normalized).unwrap();
        let llr = sprt.llr_pentanomial(&pairs).unwrap();
        assert_eq!(
            fastchess_llr(&sprt, llr),
            "LLR: 2.25 (76.4%) (-2.94, 2.94) [0.00, 2.00]"
        );
        assert_eq!(
            fastchess_llr(&sprt, -1.4722),
            "LLR: -1.47 (-50.0%) (-2.94, 2.94) [0.00, 2.00]"
        );
    }

    #[test]
    fn non_finite_numbers() {
        let empty = Trinomial::default();
        assert_eq!(
            cutechess_score(&empty, "a", "b"),
            "Score of a vs b: 0 - 0 - 0  [nan] 0"
        );
        assert_eq!(
            cutechess_elo(&empty.estimate()),
            "Elo difference: nan +/- nan, LOS: nan %, DrawRatio: nan %"
        );
        let wins = Trinomial::new(5, 0, 0).estimate();
        assert_eq!(fastchess_elo(&wins), "Elo: inf +/- nan, nElo: inf +/- nan");
        assert_eq!(number(-0.0, 2), "-0.00");
    }
}
