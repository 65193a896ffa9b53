//! Constrained maximum-likelihood estimates of a discrete distribution, the core of the
//! generalized SPRT (fishtest's `LLRcalc.py`; M. Van den Bergh, "Comments on normalized
//! Elo" and "Support of the MLE for multinomial distributions").
//!
//! Given observed frequencies p̂ᵢ of the outcomes aᵢ, the MLE under one linear constraint
//! Σ pᵢ φᵢ = 0 is pᵢ = p̂ᵢ / (1 + x φᵢ), where x solves the secular equation
//! Σ p̂ᵢ φᵢ / (1 + x φᵢ) = 0 on the interval where every 1 + x φᵢ > 0. That function is
//! strictly decreasing there, from +∞ to −∞, so the root is bracketed and found by
//! Brent's method; the bracket is widened toward the poles until it holds, so very
//! lopsided or very large samples do not break it.

/// Brent's root finder on [a, b] with f(a), f(b) of opposite signs. Returns `None` if they
/// are not (or are NaN). Stops when the bracket is narrower than `2·eps·|x| + xtol`.
pub(crate) fn brent(
    mut f: impl FnMut(f64) -> f64,
    a: f64,
    b: f64,
    fa: f64,
    fb: f64,
    xtol: f64,
) -> Option<f64> {
    if fa.is_nan() || fb.is_nan() || (fa > 0.0) == (fb > 0.0) && fa != 0.0 && fb != 0.0 {
        return None;
    }
    if fa == 0.0 {
        return Some(a);
    }
    if fb == 0.0 {
        return Some(b);
    }
    let (mut a, mut b, mut fa, mut fb) = (a, b, fa, fb);
    let (mut c, mut fc) = (a, fa);
    let mut d = b - a;
    let mut e = d;
    for _ in 0..200 {
        if (fb > 0.0) == (fc > 0.0) {
            c = a;
            fc = fa;
            d = b - a;
            e = d;
        }
        if fc.abs() < fb.abs() {
            a = b;
            b = c;
            c = a;
            fa = fb;
            fb = fc;
            fc = fa;
        }
        let tol = 2.0 * f64::EPSILON * b.abs() + 0.5 * xtol;
        let m = 0.5 * (c - b);
        if m.abs() <= tol || fb == 0.0 {
            return Some(b);
        }
        if e.abs() >= tol && fa.abs() > fb.abs() {
            // Inverse quadratic interpolation, or the secant step when only two points differ.
            let s = fb / fa;
            let (mut p, mut q);
            if a == c {
                p = 2.0 * m * s;
                q = 1.0 - s;
            } else {
                let qa = fa / fc;
                let r = fb / fc;
                p = s * (2.0 * m * qa * (qa - r) - (b - a) * (r - 1.0));
                q = (qa - 1.0) * (r - 1.0) * (s - 1.0);
            }
            if p > 0.0 {
                q = -q;
            } else {
                p = -p;
            }
            if 2.0 * p < (3.0 * m * q - (tol * q).abs()).min((e * q).abs()) {
                e = d;
                d = p / q;
            } else {
                d = m;
                e = m;
            }
        } else {
            d = m;
            e = m;
        }
        a = b;
        fa = fb;
        b += if d.abs() > tol { d } else { tol.copysign(m) };
        fb = f(b);
        if fb.is_nan() {
            return None;
        }
    }
    Some(b)
}

/// Solves Σ p̂ᵢ φᵢ / (1 + x φᵢ) = 0 for x in (−1/max φ, −1/min φ). `None` when the φᵢ do
/// not take both signs (no distribution meets the constraint) or are not finite.
pub(crate) fn secular<const N: usize>(phi: &[f64; N], freqs: &[f64; N]) -> Option<f64> {
    let lo_phi = phi.iter().copied().fold(f64::INFINITY, f64::min);
    let hi_phi = phi.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(lo_phi < 0.0 && hi_phi > 0.0 && lo_phi.is_finite() && hi_phi.is_finite()) {
        return None;
    }
    let f = |x: f64| -> f64 {
        let mut sum = 0.0;
        for i in 0..N {
            sum += freqs[i] * phi[i] / (1.0 + x * phi[i]);
        }
        sum
    };
    let pole_lo = -1.0 / hi_phi;
    let pole_hi = -1.0 / lo_phi;
    let width = pole_hi - pole_lo;
    // Move each end toward its pole until f has the sign it takes next to that pole.
    let mut step = 1e-3 * width;
    let mut lo = pole_lo + step;
    let mut f_lo = f(lo);
    while f_lo <= 0.0 && step > 0.0 {
        step *= 1e-3;
        let next = pole_lo + step;
        if next <= pole_lo {
            break;
        }
        lo = next;
        f_lo = f(lo);
    }
    let mut step = 1e-3 * width;
    let mut hi = pole_hi - step;
    let mut f_hi = f(hi);
    while f_hi >= 0.0 && step > 0.0 {
        step *= 1e-3;
        let next = pole_hi - step;
        if next >= pole_hi {
            break;
        }
        hi = next;
        f_hi = f(hi);
    }
    // If a pole is closer than the float resolution, the best we can do is stop next to it.
    if f_lo <= 0.0 {
        return Some(lo);
    }
    if f_hi >= 0.0 {
        return Some(hi);
    }
    brent(f, lo, hi, f_lo, f_hi, 1e-15 * width.min(1.0))
}

/// Mean and variance of a distribution over `values`.
pub(crate) fn mean_variance<const N: usize>(values: &[f64; N], probs: &[f64; N]) -> (f64, f64) {
    let mut mean = 0.0;
    for i in 0..N {
        mean += probs[i] * values[i];
    }
    let mut variance = 0.0;
    for i in 0..N {
        variance += probs[i] * (values[i] - mean) * (values[i] - mean);
    }
    (mean, variance)
}

/// The MLE of a distribution over `values` with expectation `s`, given observed frequencies.
pub(crate) fn mle_expected<const N: usize>(
    values: &[f64; N],
    freqs: &[f64; N],
    s: f64,
) -> Option<[f64; N]> {
    let phi = values.map(|a| a - s);
    let x = secular(&phi, freqs)?;
    let mut p = [0.0; N];
    for i in 0..N {
        p[i] = freqs[i] / (1.0 + x * phi[i]);
    }
    Some(p)
}

/// The MLE of a distribution over `values` with t-value (μ − reference)/σ equal to `t`,
/// given observed frequencies: the fixed-point iteration of fishtest's `MLE_t_value`,
/// started from the uniform distribution and run to convergence.
///
/// For very large |t| the first linearization around the uniform distribution can have no
/// solution; then `t` is approached in steps, each iteration starting from the previous
/// solution.
pub(crate) fn mle_t_value<const N: usize>(
    values: &[f64; N],
    freqs: &[f64; N],
    reference: f64,
    t: f64,
) -> Option<[f64; N]> {
    let uniform = [1.0 / N as f64; N];
    if let Some(p) = t_value_iteration(values, freqs, reference, t, uniform) {
        return Some(p);
    }
    const STEPS: u32 = 32;
    let mut p = uniform;
    for k in 1..=STEPS {
        p = t_value_iteration(
            values,
            freqs,
            reference,
            t * f64::from(k) / f64::from(STEPS),
            p,
        )?;
    }
    Some(p)
}

fn t_value_iteration<const N: usize>(
    values: &[f64; N],
    freqs: &[f64; N],
    reference: f64,
    t: f64,
    start: [f64; N],
) -> Option<[f64; N]> {
    let mut p = start;
    for _ in 0..100 {
        let (mu, var) = mean_variance(values, &p);
        let sigma = var.sqrt();
        let mut phi = [0.0; N];
        for i in 0..N {
            let z = (mu - values[i]) / sigma;
            phi[i] = values[i] - reference - t * sigma * (1.0 + z * z) / 2.0;
        }
        let x = secular(&phi, freqs)?;
        let mut change: f64 = 0.0;
        for i in 0..N {
            let next = freqs[i] / (1.0 + x * phi[i]);
            change = change.max((next - p[i]).abs());
            p[i] = next;
        }
        if change < 1e-14 {
            break;
        }
    }
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brent_finds_roots() {
        let f = |x: f64| x * x - 2.0;
        let root = brent(f, 0.0, 2.0, f(0.0), f(2.0), 1e-15).unwrap();
        assert!((root - 2f64.sqrt()).abs() < 1e-14);
        assert!(brent(f, 2.0, 3.0, f(2.0), f(3.0), 1e-15).is_none());
    }

    #[test]
    fn mle_expected_meets_its_constraint() {
        let values = [0.0, 0.5, 1.0];
        let freqs = [0.2, 0.5, 0.3];
        for s in [0.01, 0.3, 0.5, 0.55, 0.99] {
            let p = mle_expected(&values, &freqs, s).unwrap();
            let (mu, _) = mean_variance(&values, &p);
            assert!((mu - s).abs() < 1e-12, "s {s} mu {mu}");
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn mle_t_value_meets_its_constraint() {
        let values = [0.0, 0.25, 0.5, 0.75, 1.0];
        let freqs = [0.05, 0.2, 0.5, 0.2, 0.05];
        for t in [-0.3, 0.0, 0.02, 0.4, 3.0, -5.0] {
            let p = mle_t_value(&values, &freqs, 0.5, t).unwrap();
            let (mu, var) = mean_variance(&values, &p);
            assert!(((mu - 0.5) / var.sqrt() - t).abs() < 1e-9, "t {t}");
        }
    }

    #[test]
    fn secular_survives_lopsided_samples() {
        let values = [0.0, 0.5, 1.0];
        let total = 1e12 + 2e-3;
        let freqs = [1e-3 / total, 1e-3 / total, 1e12 / total];
        let p = mle_expected(&values, &freqs, 0.5).unwrap();
        assert!(p.iter().all(|x| x.is_finite() && *x > 0.0));
    }
}
