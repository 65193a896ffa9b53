//! `spar status TUNE.csv [--html FILE]`: where an SPSA tune stands, as text and as a
//! self-contained HTML page, from a [`TuneView`] that does not depend on where its rows
//! come from (a local `--csv` trajectory, see [`from_csv`], or a sharded run's records).
//!
//! Per parameter it shows the start, the current θ, the range, the distance travelled in
//! units of its `c_end`, the averaged θ of [`crate::tune::average`] and a **signal measure**:
//! whether θ moved over the last half of the run by more than the random walk of its own
//! steps would have. With K the last iteration, a = ⌊K / 2⌋ and s_k = θ_k − θ_{k−1} the
//! step of iteration k (r_k · c_k · (W − L) · flip, clipped):
//!
//! ```text
//! moved = θ_K − θ_a = s_{a+1} + … + s_K          walk = √(s_{a+1}² + … + s_K²)
//! z = moved / walk
//! ```
//!
//! If the results carried no information about the parameter (zero-mean W − L whatever its
//! flip), the steps' signs would be independent fair coins given their sizes, `moved` would
//! be a sum of independent zero-mean terms with variance `walk²`, and z would be about
//! standard normal (and |z| ≥ t has probability at most 2·e^(−t²/2) by Hoeffding's bound).
//! The verdict word:
//!
//! - `signal`: |z| ≥ [`Z_SIGNAL`] (2): it moves further than noise takes it;
//! - `noise`: |z| below that: it wanders without a direction, either converged (it moves
//!   around its optimum) or the games do not see it (`spar tune --probe` tells which);
//! - `at bound`: θ is within `c_end` of its min or max (the perturbations are clipped
//!   there; widen the range if it is pressing against it);
//! - `still`: not one step in the last half (W − L was 0 every time: the perturbation
//!   changes nothing the games see);
//! - `early`: fewer than [`MIN_ITERATIONS`] iterations.

use std::path::Path;

use crate::cluster::status::{human, Snapshot};
use crate::error::CliResult;
use crate::tune::average::{self, Averaged};
use crate::tune::spsa_params::SpsaParam;
use crate::tune::trajectory::Row;

/// |z| from which a parameter's motion counts as signal.
pub const Z_SIGNAL: f64 = 2.0;
/// Iterations before a verdict is given.
pub const MIN_ITERATIONS: u64 = 4;

/// Everything the status of a tune shows, whatever the source of its rows.
#[derive(Clone, Debug)]
pub struct TuneView {
    /// What the run is (`Tune run.csv`).
    pub title: String,
    /// The tuned parameters (start, range, `c_end`), in the rows' order.
    pub params: Vec<SpsaParam>,
    /// The trajectory: row 0 the start, then one row per iteration in order.
    pub rows: Vec<Row>,
    /// Iterations of the whole run (`--iterations`).
    pub iterations: u64,
    /// Game pairs per iteration.
    pub pairs_per_iteration: u64,
    /// Games per second, when known.
    pub games_per_second: Option<f64>,
    /// Seconds to the end at that rate, when known.
    pub eta_seconds: Option<f64>,
    /// Further lines shown after the totals (shards, the verification's verdict, …).
    pub extra_lines: Vec<String>,
    /// Whether the run is going on (the page reloads itself).
    pub live: bool,
}

impl TuneView {
    /// The last iteration done.
    pub fn done(&self) -> u64 {
        self.rows.last().map_or(0, |r| r.iteration)
    }

    /// Games played so far.
    pub fn games(&self) -> u64 {
        self.rows.last().map_or(0, |r| r.games)
    }

    /// The current θ.
    pub fn current(&self) -> Vec<f64> {
        self.rows.last().map_or_else(
            || self.params.iter().map(|p| p.start).collect(),
            |r| r.theta.clone(),
        )
    }
}

/// The verdict on a parameter's motion (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Fewer than [`MIN_ITERATIONS`] iterations.
    Early,
    /// No step at all in the last half.
    Still,
    /// Moves no further than its random walk.
    Noise,
    /// Moves further than noise would take it.
    Signal,
    /// Within `c_end` of its min or max.
    AtBound,
}

impl Verdict {
    /// The word shown.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Early => "early",
            Verdict::Still => "still",
            Verdict::Noise => "noise",
            Verdict::Signal => "signal",
            Verdict::AtBound => "at bound",
        }
    }
}

/// One parameter's motion over the last half of the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Motion {
    /// The iteration the window starts after (⌊K / 2⌋).
    pub from: u64,
    /// The last iteration K.
    pub to: u64,
    /// θ_K − θ_from.
    pub moved: f64,
    /// √Σ s_k² over the window.
    pub walk: f64,
    /// moved / walk (`None` when walk is 0 or the run is too short).
    pub z: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
}

/// The motion of parameter `i` (described by `p`) in `rows`.
pub fn motion(rows: &[Row], i: usize, p: &SpsaParam) -> Motion {
    let to = rows.last().map_or(0, |r| r.iteration);
    let from = to / 2;
    let window: Vec<f64> = rows
        .iter()
        .filter(|r| r.iteration >= from)
        .map(|r| r.theta[i])
        .collect();
    let moved = match (window.first(), window.last()) {
        (Some(a), Some(b)) => b - a,
        _ => 0.0,
    };
    let walk = window
        .windows(2)
        .map(|w| (w[1] - w[0]).powi(2))
        .sum::<f64>()
        .sqrt();
    let z = (walk > 0.0 && to >= MIN_ITERATIONS).then(|| moved / walk);
    let theta = window.last().copied().unwrap_or(p.start);
    let verdict = if to < MIN_ITERATIONS {
        Verdict::Early
    } else if theta - p.min < p.c_end || p.max - theta < p.c_end {
        Verdict::AtBound
    } else if walk == 0.0 {
        Verdict::Still
    } else if z.is_some_and(|z| z.abs() >= Z_SIGNAL) {
        Verdict::Signal
    } else {
        Verdict::Noise
    };
    Motion {
        from,
        to,
        moved,
        walk,
        z,
        verdict,
    }
}

/// A number for a table cell: up to two decimals, trailing zeros dropped.
pub(crate) fn short(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// A signed number with two decimals.
fn signed(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.2}")
    } else {
        "-".to_string()
    }
}

/// One parameter's cells, shared by the text, the page and the server's tune page.
pub(crate) struct Cells {
    pub(crate) name: String,
    pub(crate) start: String,
    pub(crate) current: String,
    pub(crate) min: String,
    pub(crate) max: String,
    pub(crate) delta: String,
    pub(crate) average: String,
    pub(crate) error: String,
    pub(crate) moved: String,
    pub(crate) walk: String,
    pub(crate) z: String,
    pub(crate) verdict: &'static str,
}

/// The column heads of the table (text and page).
pub(crate) const HEADS: [&str; 12] = [
    "parameter",
    "start",
    "current",
    "min",
    "max",
    "Δ/c_end",
    "average",
    "±",
    "moved",
    "walk",
    "z",
    "verdict",
];

/// Every parameter's cells of the table (`avg`: the averaged θ, when there is one).
pub(crate) fn cells(v: &TuneView, avg: Option<&Averaged>) -> Vec<Cells> {
    let current = v.current();
    v.params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let m = motion(&v.rows, i, p);
            let theta = current.get(i).copied().unwrap_or(p.start);
            Cells {
                name: p.name.clone(),
                start: short(p.start),
                current: format!("{theta:.2}"),
                min: short(p.min),
                max: short(p.max),
                delta: signed((theta - p.start) / p.c_end),
                average: avg.map_or("-".to_string(), |a| format!("{:.2}", a.mean[i])),
                error: avg
                    .and_then(|a| a.error[i])
                    .map_or("-".to_string(), |e| format!("{e:.2}")),
                moved: signed(m.moved),
                walk: format!("{:.2}", m.walk),
                z: m.z.map_or("-".to_string(), signed),
                verdict: m.verdict.word(),
            }
        })
        .collect()
}

/// The lines above the table: iterations, pace, state.
pub(crate) fn summary(v: &TuneView) -> Vec<String> {
    let (done, n) = (v.done(), v.iterations);
    let pct = if n > 0 {
        100.0 * done as f64 / n as f64
    } else {
        0.0
    };
    let mut lines = vec![format!(
        "Iterations: {done}/{n} ({pct:.1} %), {} games; {} pairs ({} games) per iteration, {} parameters",
        v.games(),
        v.pairs_per_iteration,
        2 * v.pairs_per_iteration,
        v.params.len()
    )];
    let mut speed = Vec::new();
    if let Some(r) = v.games_per_second {
        speed.push(format!("{r:.2} games/s"));
    }
    if done >= n {
        speed.push("Finished".to_string());
    } else if let Some(eta) = v.eta_seconds.filter(|_| v.live) {
        speed.push(format!("ETA {}", human(eta)));
    }
    if !speed.is_empty() {
        lines.push(speed.join("; "));
    }
    lines.extend(v.extra_lines.iter().cloned());
    lines
}

/// The legend of the signal columns.
pub(crate) fn legend(v: &TuneView) -> String {
    let to = v.done();
    // Before the first iteration there is no half to name (not "iterations 1..0").
    let half = if to == 0 {
        "Over the last half of the iterations (none yet): moved = θ_last − θ_middle".to_string()
    } else {
        format!(
            "Over the last half (iterations {}..{to}): moved = θ_{to} − θ_{}",
            to / 2 + 1,
            to / 2
        )
    };
    format!(
        "Δ/c_end: (current − start) / c_end. {half}, \
         walk = √Σ step² (how far a random walk of the same steps goes), z = moved / walk; \
         signal: |z| ≥ {Z_SIGNAL}, noise: below, at bound: within c_end of min or max, \
         still: no step, early: under {MIN_ITERATIONS} iterations."
    )
}

/// The text for the terminal.
pub fn lines(v: &TuneView) -> Vec<String> {
    let avg = average::average(&v.rows);
    let mut lines = vec![v.title.clone()];
    lines.extend(summary(v));
    let rows = cells(v, avg.as_ref());
    let name_w = rows
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(HEADS[0].len());
    let row = |c: [&str; 12]| {
        format!(
            "{:<name_w$}  {:>7} {:>8} {:>7} {:>7} {:>8} {:>8} {:>6} {:>8} {:>7} {:>6}  {}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]
        )
        .trim_end()
        .to_string()
    };
    lines.push(row(HEADS));
    for c in &rows {
        lines.push(row([
            &c.name, &c.start, &c.current, &c.min, &c.max, &c.delta, &c.average, &c.error,
            &c.moved, &c.walk, &c.z, c.verdict,
        ]));
    }
    if let Some(a) = &avg {
        lines.push(format!(
            "Average: θ over {}, ± a 95 % batch-means error.",
            a.window()
        ));
    }
    lines.push(legend(v));
    lines
}

/// What a tune's status shows of a verification SPRT whose verdict the run has not
/// recorded (it is being played, or it was stopped): its state
/// (`running`, …), where its own page is (`spar status RESULTS`), and its games, Elo, LLR
/// and ETA so far, indented.
/// A verification whose results do not read is one line saying why (the tune's own status
/// is still shown).
pub fn verification_so_far(
    snapshot: CliResult<Snapshot>,
    state: &str,
    results: &Path,
) -> Vec<String> {
    let mut lines = vec![format!(
        "Verification SPRT tuned vs start so far ({state}; `spar status {}` for its page):",
        results.display()
    )];
    match snapshot {
        Ok(s) => lines.extend(s.lines().into_iter().skip(1).map(|l| format!("  {l}"))),
        Err(e) => lines.push(format!("  its results do not read: {}", e.message)),
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::tune::status_page::html;

    fn param(name: &str) -> SpsaParam {
        SpsaParam {
            name: name.into(),
            start: 100.0,
            min: 0.0,
            max: 400.0,
            c_end: 4.0,
            r_end: 0.002,
        }
    }

    /// Rows from per-iteration steps of each parameter.
    fn walk_rows(steps: &[Vec<f64>]) -> Vec<Row> {
        let n = steps.len();
        let k = steps[0].len();
        let mut theta = vec![100.0; n];
        let mut rows = vec![Row {
            iteration: 0,
            games: 0,
            theta: theta.clone(),
            c: None,
            r: None,
        }];
        for it in 0..k {
            for (t, s) in theta.iter_mut().zip(steps) {
                *t += s[it];
            }
            rows.push(Row {
                iteration: it as u64 + 1,
                games: 4 * (it as u64 + 1),
                theta: theta.clone(),
                c: Some(vec![4.0; n]),
                r: Some(vec![0.002; n]),
            });
        }
        rows
    }

    #[test]
    fn drift_is_signal_and_a_fair_walk_is_noise() {
        // Alternating ±1 steps go nowhere; +1, +1, −1 repeated drifts by 1/3 per step.
        let noise: Vec<f64> = (0..300)
            .map(|k| if k % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let drift: Vec<f64> = (0..300)
            .map(|k| if k % 3 == 2 { -1.0 } else { 1.0 })
            .collect();
        let rows = walk_rows(&[noise, drift, vec![0.0; 300]]);
        let m = motion(&rows, 0, &param("a"));
        assert_eq!((m.from, m.to), (150, 300));
        assert_eq!(m.moved, 0.0);
        assert!((m.walk - 150f64.sqrt()).abs() < 1e-12);
        assert_eq!(m.verdict, Verdict::Noise);
        let m = motion(&rows, 1, &param("b"));
        // 150 steps: 100 up, 50 down; z = 50 / √150 ≈ 4.08.
        assert!((m.moved - 50.0).abs() < 1e-9, "{m:?}");
        assert!((m.z.unwrap() - 50.0 / 150f64.sqrt()).abs() < 1e-9);
        assert_eq!(m.verdict, Verdict::Signal);
        assert_eq!(motion(&rows, 2, &param("c")).verdict, Verdict::Still);
        // Near a bound.
        let mut p = param("b");
        p.max = 202.0;
        assert_eq!(motion(&rows, 1, &p).verdict, Verdict::AtBound);
        assert_eq!(motion(&rows[..3], 1, &param("b")).verdict, Verdict::Early);
    }

    fn view(rows: Vec<Row>, live: bool) -> TuneView {
        TuneView {
            title: "Tune <x>.csv".into(),
            params: vec![param("a"), param("b"), param("c")],
            rows,
            iterations: 400,
            pairs_per_iteration: 2,
            games_per_second: Some(12.5),
            eta_seconds: Some(125.0),
            extra_lines: vec!["shard 0: 5 blocks".into()],
            live,
        }
    }

    #[test]
    fn text_shows_values_and_verdicts() {
        let drift: Vec<f64> = (0..300)
            .map(|k| if k % 3 == 2 { -0.5 } else { 0.5 })
            .collect();
        let rows = walk_rows(&[vec![0.25; 300], drift, vec![0.0; 300]]);
        let text = lines(&view(rows, true));
        assert_eq!(text[0], "Tune <x>.csv");
        assert!(text[1].starts_with("Iterations: 300/400 (75.0 %), 1200 games; 2 pairs"));
        assert_eq!(text[2], "12.50 games/s; ETA 2m05s");
        assert_eq!(text[3], "shard 0: 5 blocks");
        let a = text.iter().find(|l| l.starts_with("a ")).unwrap();
        // 100 + 300 · 0.25 = 175: Δ = 75 / 4 = 18.75 c_end.
        assert!(a.contains(" 175.00 ") && a.contains(" +18.75 "), "{a}");
        assert!(a.ends_with("signal"), "{a}");
        let b = text.iter().find(|l| l.starts_with("b ")).unwrap();
        assert!(b.ends_with("signal") && b.contains(" 150.00 "), "{b}");
        assert!(text
            .iter()
            .any(|l| l.starts_with("c ") && l.ends_with("still")));
        assert!(text.last().unwrap().contains("z = moved / walk"));
    }

    #[test]
    fn the_page_is_self_contained_with_a_chart_per_parameter() {
        let rows = walk_rows(&[vec![0.25; 40], vec![-0.1; 40], vec![0.0; 40]]);
        let page = html(&view(rows.clone(), true));
        assert!(page.contains("http-equiv=\"refresh\""));
        assert_eq!(page.matches("<svg").count(), 3);
        assert!(page.contains("Tune &lt;x&gt;.csv"));
        for external in ["src=", "href=", "<script"] {
            assert!(!page.contains(external), "{external}");
        }
        assert_eq!(page.matches("url(").count(), page.matches("url(#").count());
        assert!(!page.contains("NaN") && !page.contains("inf"));
        // The right axis is in units of c_end: the start is 0 there.
        assert!(page.contains("c_end = 4 (right)"));
        let finished = html(&view(rows, false));
        assert!(!finished.contains("http-equiv"));
        assert!(finished.contains("Not running."));
    }
}
