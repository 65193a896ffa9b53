//! The averaged θ of an SPSA run (Polyak–Ruppert averaging) with an error bar per
//! parameter that accounts for the autocorrelation of the iterates.
//!
//! The last iterate θ_K of SPSA carries the noise of the last few iterations' steps. The
//! mean of the iterates over the last part of the run has far less of it, and under
//! OpenBench's slowly decaying gains (α = 0.602 < 1) it converges at the best possible rate
//! (Polyak and Juditsky, 1992). spar averages the **last quarter** of the iterations done:
//! with K the last iteration of the trajectory and m = ⌈K / 4⌉,
//!
//! ```text
//! θ̄ = (θ_{K−m+1} + … + θ_K) / m
//! ```
//!
//! (θ_k is θ after iteration k, the CSV's row k; a run with no iteration gives its start).
//!
//! Successive iterates are strongly correlated (each is the previous one plus a small
//! step), so the spread of the iterates says nothing about the error of their mean. The
//! error bar comes from **batch means**: the m iterates are cut into B = min(8, ⌊m / 2⌋)
//! contiguous batches of (nearly) equal size, with means μ_1 … μ_B, and
//!
//! ```text
//! se(θ̄) = sd(μ_1, …, μ_B) / √B          error = t_{0.975, B−1} · se(θ̄)
//! ```
//!
//! the half-width of a 95 % interval (Student's t with B − 1 degrees of freedom). Batches
//! far longer than the correlation time of the iterates are nearly independent, which is
//! what the formula assumes; when they are not (a short run, or one still drifting over
//! the window), the batch means spread out and the error bar widens accordingly. With
//! fewer than 4 iterates in the window there is no error bar.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::trajectory::Row;

/// The fraction of the iterations done that is averaged (the last quarter).
pub const TAIL: f64 = 0.25;
/// The most batches of the batch-means error.
pub const BATCHES: usize = 8;

/// The averaged θ of a trajectory beside its last iterate.
#[derive(Clone, Debug, PartialEq)]
pub struct Averaged {
    /// First iteration averaged (1-based; 0 when the run has no iteration).
    pub from: u64,
    /// Last iteration averaged (the trajectory's last).
    pub to: u64,
    /// Per parameter: θ after the last iteration.
    pub last: Vec<f64>,
    /// Per parameter: the mean of θ over iterations `from..=to`.
    pub mean: Vec<f64>,
    /// Per parameter: the half-width of the mean's 95 % interval (batch means); `None`
    /// with fewer than 4 iterates.
    pub error: Vec<Option<f64>>,
    /// Number of batches the error comes from (0: none).
    pub batches: usize,
}

impl Averaged {
    /// The averaged values rounded to integers, as `(name, value)` for
    /// [`super::report`]'s forms.
    pub fn rounded(&self, names: &[String]) -> Vec<(String, i64)> {
        names
            .iter()
            .zip(&self.mean)
            .map(|(n, &v)| (n.clone(), v.round() as i64))
            .collect()
    }

    /// What was averaged, in words: `iterations 76..100 (the last 25 %)`.
    pub fn window(&self) -> String {
        if self.to == 0 {
            "no iteration yet: the start values".to_string()
        } else {
            format!(
                "iterations {}..{} (the last {} %, {} iterates)",
                self.from,
                self.to,
                (TAIL * 100.0).round(),
                self.to - self.from + 1
            )
        }
    }
}

/// The averaged θ of `rows` (a trajectory: row 0 the start, then one row per iteration,
/// in order). `None` when there are no rows.
pub fn average(rows: &[Row]) -> Option<Averaged> {
    let last = rows.last()?;
    let k = last.iteration;
    let (from, window): (u64, Vec<&Row>) = if k == 0 {
        (0, vec![last])
    } else {
        let m = ((k as f64 * TAIL).ceil() as u64).clamp(1, k);
        let from = k - m + 1;
        (from, rows.iter().filter(|r| r.iteration >= from).collect())
    };
    let n = last.theta.len();
    let m = window.len();
    let batches = if m >= 4 { BATCHES.min(m / 2) } else { 0 };
    let t = (batches >= 2).then(|| {
        StudentsT::new(0.0, 1.0, (batches - 1) as f64)
            .map(|d| d.inverse_cdf(0.975))
            .unwrap_or(f64::NAN)
    });
    let mut mean = Vec::with_capacity(n);
    let mut error = Vec::with_capacity(n);
    for i in 0..n {
        let values: Vec<f64> = window.iter().map(|r| r.theta[i]).collect();
        mean.push(values.iter().sum::<f64>() / m as f64);
        error.push(t.map(|t| t * batch_means_se(&values, batches)));
    }
    Some(Averaged {
        from,
        to: k,
        last: last.theta.clone(),
        mean,
        error,
        batches,
    })
}

/// The standard error of the mean of `values` from `batches` (≥ 2) contiguous batches.
fn batch_means_se(values: &[f64], batches: usize) -> f64 {
    let m = values.len();
    let means: Vec<f64> = (0..batches)
        .map(|j| {
            let batch = &values[j * m / batches..(j + 1) * m / batches];
            batch.iter().sum::<f64>() / batch.len() as f64
        })
        .collect();
    let b = batches as f64;
    let grand = means.iter().sum::<f64>() / b;
    let var = means.iter().map(|x| (x - grand).powi(2)).sum::<f64>() / (b - 1.0);
    (var / b).sqrt()
}

/// A number with two decimals, trailing zeros kept (aligned columns).
fn num(v: f64) -> String {
    format!("{v:.2}")
}

/// The small table printed at the end of a tune (and by `spar status`): per parameter its
/// start, the last iterate, the average ± its error.
pub fn table(names: &[String], start: &[f64], a: &Averaged) -> Vec<String> {
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(9);
    let mut lines = vec![
        format!(
            "Averaged θ over {}; ± is a 95 % batch-means error:",
            a.window()
        ),
        format!(
            "{:<width$}  {:>9}  {:>9}  {:>9}  {:>8}",
            "parameter", "start", "last", "average", "±"
        ),
    ];
    for (i, name) in names.iter().enumerate() {
        let err = a.error[i].map_or("-".to_string(), num);
        lines.push(format!(
            "{name:<width$}  {:>9}  {:>9}  {:>9}  {:>8}",
            num(start.get(i).copied().unwrap_or(f64::NAN)),
            num(a.last[i]),
            num(a.mean[i]),
            err
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(values: &[[f64; 2]]) -> Vec<Row> {
        values
            .iter()
            .enumerate()
            .map(|(k, v)| Row {
                iteration: k as u64,
                games: 4 * k as u64,
                theta: v.to_vec(),
                c: (k > 0).then(|| vec![1.0, 1.0]),
                r: (k > 0).then(|| vec![0.002, 0.002]),
            })
            .collect()
    }

    #[test]
    fn the_last_quarter_is_averaged() {
        // 100 iterations: θ_k = k for the first, constant 7 for the second.
        let r = rows(
            &(0..=100)
                .map(|k| [k as f64, 7.0])
                .collect::<Vec<[f64; 2]>>(),
        );
        let a = average(&r).unwrap();
        assert_eq!((a.from, a.to), (76, 100));
        // Mean of 76..=100.
        assert!((a.mean[0] - 88.0).abs() < 1e-12, "{:?}", a.mean);
        assert_eq!(a.mean[1], 7.0);
        assert_eq!(a.last, vec![100.0, 7.0]);
        assert_eq!(a.batches, 8);
        // A constant parameter has no error; a line has batch means 3.125 apart.
        assert_eq!(a.error[1], Some(0.0));
        let e = a.error[0].unwrap();
        assert!(e > 1.0 && e < 10.0, "{e}");
        assert_eq!(a.rounded(&["x".into(), "y".into()])[0], ("x".into(), 88));
        assert_eq!(
            a.window(),
            "iterations 76..100 (the last 25 %, 25 iterates)"
        );
        // 101 iterations: ⌈101/4⌉ = 26 iterates.
        let r = rows(&(0..=101).map(|k| [k as f64, 0.0]).collect::<Vec<_>>());
        assert_eq!(average(&r).unwrap().from, 76);
    }

    #[test]
    fn batch_means_error_matches_a_hand_computation() {
        // 8 iterates → 4 batches of 2: means 1.5, 3.5, 5.5, 7.5 (iterates 1..=8 averaged of
        // 32 iterations: 25..=32 hold 1..=8).
        let mut values: Vec<[f64; 2]> = vec![[0.0, 0.0]; 25];
        values.extend((1..=8).map(|v| [v as f64, 0.0]));
        let a = average(&rows(&values)).unwrap();
        assert_eq!((a.from, a.to, a.batches), (25, 32, 4));
        assert!((a.mean[0] - 4.5).abs() < 1e-12);
        // sd of the batch means = √(Σ(μ−4.5)²/3) = √(20/3); se = that / 2; t(3) = 3.182446.
        let se = (20.0f64 / 3.0).sqrt() / 2.0;
        let e = a.error[0].unwrap();
        assert!(
            (e - 3.182_446 * se).abs() < 1e-4,
            "{e} vs {}",
            3.182446 * se
        );
    }

    #[test]
    fn autocorrelated_iterates_get_a_wider_error_than_independent_ones() {
        // An AR(1) walk around 50 with correlation 0.95 against independent noise of the
        // same marginal spread: the batch-means error of the walk is the wider.
        let mut rng = engine::rng::SplitMix64::new(11);
        let mut normal = || {
            // Sum of 12 uniforms − 6: close enough to a standard normal here.
            (0..12)
                .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
                .sum::<f64>()
                - 6.0
        };
        let phi: f64 = 0.95;
        let mut x = 0.0;
        let mut values = vec![[50.0, 50.0]];
        for _ in 0..4000 {
            x = phi * x + (1.0 - phi * phi).sqrt() * normal();
            values.push([50.0 + x, 50.0 + normal()]);
        }
        let a = average(&rows(&values)).unwrap();
        let (walk, iid) = (a.error[0].unwrap(), a.error[1].unwrap());
        assert!(walk > 2.0 * iid, "walk {walk} iid {iid}");
        // The independent one is close to the textbook 1.96 · 1 / √1000 (t with 7 df is
        // wider, and 8 batches are a rough estimate).
        assert!(iid > 0.02 && iid < 0.2, "{iid}");
    }

    #[test]
    fn short_runs_and_the_start() {
        assert!(average(&[]).is_none());
        let a = average(&rows(&[[3.0, 4.0]])).unwrap();
        assert_eq!((a.from, a.to), (0, 0));
        assert_eq!(a.mean, vec![3.0, 4.0]);
        assert_eq!(a.error, vec![None, None]);
        assert!(a.window().contains("start"));
        // 4 iterations: one iterate averaged, no error bar.
        let a = average(&rows(&[
            [0.0, 0.0],
            [1.0, 1.0],
            [2.0, 2.0],
            [3.0, 3.0],
            [4.5, 4.0],
        ]))
        .unwrap();
        assert_eq!((a.from, a.to), (4, 4));
        assert_eq!(a.mean, vec![4.5, 4.0]);
        assert_eq!(a.error, vec![None, None]);
        let t = table(&["rfp_margin".into(), "b".into()], &[0.0, 0.0], &a);
        assert_eq!(t.len(), 4);
        assert!(t[2].starts_with("rfp_margin") && t[2].ends_with("4.50         -"));
    }
}
