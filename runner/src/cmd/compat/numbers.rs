//! The numbers of the tools' reports, computed and printed as each tool does: cutechess-cli's
//! Elo class and SPRT (ported from its elo.cpp and sprt.cpp), C++/fmt's and Qt's number
//! formats (fastchess's Elo, nElo and LOS are sprt's estimates, the same formulas).

use sprt::Decision;

/// `{:.Ng}` of fmt/printf: `digits` significant digits, no trailing zeros.
pub(super) fn g_digits(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return sprt::format::number(x, 0);
    }
    let exp = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - exp).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `x` with `decimals` digits as C++ streams and fmt print it on x86-64 Linux: a NaN
/// keeps its sign (`-nan` for 0/0), infinities are `inf`/`-inf`.
pub(super) fn fixed(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        if x.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else {
        sprt::format::number(x, decimals)
    }
}

/// Qt's `QString::arg(x, 0, 'f', decimals)`: as C's `%.Nf`, but a zero (even -0.0) has no
/// sign, and NaN is `nan`.
pub(super) fn qt_fixed(x: f64, decimals: usize) -> String {
    sprt::format::number(if x == 0.0 { 0.0 } else { x }, decimals)
}

/// Qt's `QString::arg(x, 0, 'g', 3)`: three significant digits, no trailing zeros.
pub fn g3(x: f64) -> String {
    if !x.is_finite() {
        return sprt::format::number(x, 0);
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let exp = x.abs().log10().floor() as i32;
    if !(-5..3).contains(&exp) {
        let s = format!("{x:.2e}");
        // Rust writes 1.23e5; Qt writes 1.23e+05.
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    g_digits(x, 3)
}

/// cutechess-cli's SPRT (projects/lib/src/sprt.cpp): a trinomial test whose Elo bounds
/// are scaled by the draw Elo estimated from the sample (with half a game added to each
/// outcome).
pub(super) struct CutechessSprt {
    pub(super) llr: f64,
    pub(super) lower: f64,
    pub(super) upper: f64,
    pub(super) decision: Decision,
}

impl CutechessSprt {
    pub(super) fn status(
        wins: u64,
        losses: u64,
        draws: u64,
        elo0: f64,
        elo1: f64,
        alpha: f64,
        beta: f64,
    ) -> CutechessSprt {
        let (w, l, d) = (wins as f64 + 0.5, losses as f64 + 0.5, draws as f64 + 0.5);
        // Probabilities of the sample, its BayesElo and draw Elo.
        let count = w + l + d;
        let (pw, pl) = (w / count, l / count);
        let draw_elo = 200.0 * ((1.0 - pl) / pl * (1.0 - pw) / pw).log10();
        let x = 10f64.powf(-draw_elo / 400.0);
        let scale = 4.0 * x / ((1.0 + x) * (1.0 + x));
        // Win/loss/draw probabilities of a BayesElo at that draw Elo.
        let probs = |belo: f64| {
            let pw = 1.0 / (1.0 + 10f64.powf((draw_elo - belo) / 400.0));
            let pl = 1.0 / (1.0 + 10f64.powf((draw_elo + belo) / 400.0));
            (pw, pl, 1.0 - pw - pl)
        };
        let (w0, l0, d0) = probs(elo0 / scale);
        let (w1, l1, d1) = probs(elo1 / scale);
        let llr = w * (w1 / w0).ln() + l * (l1 / l0).ln() + d * (d1 / d0).ln();
        let lower = (beta / (1.0 - alpha)).ln();
        let upper = ((1.0 - beta) / alpha).ln();
        let decision = if llr >= upper {
            Decision::H1
        } else if llr <= lower {
            Decision::H0
        } else {
            Decision::Continue
        };
        CutechessSprt {
            llr,
            lower,
            upper,
            decision,
        }
    }
}

/// cutechess's `Elo` class: the score's mean and deviation from W/L/D, its Elo
/// difference, error margin (its own inverse-erf approximation) and LOS.
pub(super) struct CutechessElo {
    pub(super) wins: f64,
    pub(super) losses: f64,
    pub(super) draws: f64,
    pub(super) mu: f64,
    pub(super) stdev: f64,
}

impl CutechessElo {
    pub(super) fn new(wins: u64, losses: u64, draws: u64) -> CutechessElo {
        let (wins, losses, draws) = (wins as f64, losses as f64, draws as f64);
        let n = wins + losses + draws;
        let (w, l, d) = (wins / n, losses / n, draws / n);
        let mu = w + d / 2.0;
        let dev = w * (1.0 - mu).powi(2) + l * (0.0 - mu).powi(2) + d * (0.5 - mu).powi(2);
        CutechessElo {
            wins,
            losses,
            draws,
            mu,
            stdev: dev.sqrt() / n.sqrt(),
        }
    }

    pub(super) fn diff_of(p: f64) -> f64 {
        -400.0 * (1.0 / p - 1.0).log10()
    }

    pub(super) fn diff(&self) -> f64 {
        Self::diff_of(self.mu)
    }

    pub(super) fn erf_inv(x: f64) -> f64 {
        // cutechess's own truncated π, kept so that its error margins come out the same.
        #[allow(clippy::approx_constant)]
        let pi = 3.1415926535897;
        let a = 8.0 * (pi - 3.0) / (3.0 * pi * (4.0 - pi));
        let y = (1.0 - x * x).ln();
        let z = 2.0 / (pi * a) + y / 2.0;
        let ret = ((z * z - y / a).sqrt() - z).sqrt();
        if x < 0.0 {
            -ret
        } else {
            ret
        }
    }

    pub(super) fn phi_inv(p: f64) -> f64 {
        std::f64::consts::SQRT_2 * Self::erf_inv(2.0 * p - 1.0)
    }

    pub(super) fn error_margin(&self) -> f64 {
        let lo = self.mu + Self::phi_inv(0.025) * self.stdev;
        let hi = self.mu + Self::phi_inv(0.975) * self.stdev;
        (Self::diff_of(hi) - Self::diff_of(lo)) / 2.0
    }

    pub(super) fn los(&self) -> f64 {
        let x = (self.wins - self.losses) / (2.0 * (self.wins + self.losses)).sqrt();
        100.0 * (0.5 + 0.5 * erf(x))
    }

    pub(super) fn draw_ratio(&self) -> f64 {
        self.draws / (self.wins + self.losses + self.draws)
    }
}

/// The error function (Abramowitz–Stegun 7.1.26 is too coarse for one decimal of LOS near
/// 50 %; this is the series/continued-fraction pair, good to 1e-15).
fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let t = x.abs();
    let v = if t < 2.5 {
        // Taylor series.
        let mut sum = t;
        let mut term = t;
        let mut k = 0.0;
        loop {
            k += 1.0;
            term *= -t * t / k;
            let add = term / (2.0 * k + 1.0);
            sum += add;
            if add.abs() < 1e-17 {
                break;
            }
        }
        2.0 / std::f64::consts::PI.sqrt() * sum
    } else {
        // Continued fraction of erfc.
        let mut f = 0.0;
        for k in (1..60).rev() {
            f = (k as f64 / 2.0) / (t + f);
        }
        1.0 - (-t * t).exp() / std::f64::consts::PI.sqrt() / (t + f)
    };
    if x < 0.0 {
        -v
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qt_g3_numbers() {
        assert_eq!(g3(2.9444389791664403), "2.94");
        assert_eq!(g3(-2.9444389791664403), "-2.94");
        assert_eq!(g3(0.0123456), "0.0123");
        assert_eq!(g3(12.5), "12.5");
        assert_eq!(g3(1.5), "1.5");
        assert_eq!(g3(0.0), "0");
    }

    #[test]
    fn cutechess_elo_matches_its_formulas() {
        // 136 - 96 - 111: cutechess prints 40.7 +/- 30.4, LOS 99.6 %, DrawRatio 32.4 %.
        let e = CutechessElo::new(136, 96, 111);
        assert_eq!(format!("{:.1}", e.diff()), "40.7");
        assert_eq!(format!("{:.1}", e.error_margin()), "30.4");
        assert_eq!(format!("{:.1}", e.los()), "99.6");
        assert_eq!(format!("{:.1}", e.draw_ratio() * 100.0), "32.4");
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-14);
        assert!((erf(3.0) - 0.999_977_909_503_001_4).abs() < 1e-14);
    }
}
