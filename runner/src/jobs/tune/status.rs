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

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use super::verdict::{verdict_line, verify_files};
use crate::cluster::status::{human, Snapshot};
use crate::error::{CliError, CliResult};
use crate::files::run_record;
use crate::tune::average::{self, Averaged};
use crate::tune::spsa_params::SpsaParam;
use crate::tune::trajectory::{self, Row};

/// |z| from which a parameter's motion counts as signal.
pub const Z_SIGNAL: f64 = 2.0;
/// Iterations before a verdict is given.
pub const MIN_ITERATIONS: u64 = 4;
/// Points per chart line at most (longer runs are thinned evenly).
const POINTS: usize = 1000;

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
fn short(v: f64) -> String {
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

/// One parameter's cells, shared by the text and the page.
struct Cells {
    name: String,
    start: String,
    current: String,
    min: String,
    max: String,
    delta: String,
    average: String,
    error: String,
    moved: String,
    walk: String,
    z: String,
    verdict: &'static str,
}

const HEADS: [&str; 12] = [
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

fn cells(v: &TuneView, avg: Option<&Averaged>) -> Vec<Cells> {
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

fn summary(v: &TuneView) -> Vec<String> {
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
fn legend(v: &TuneView) -> String {
    let to = v.done();
    format!(
        "Δ/c_end: (current − start) / c_end. Over the last half (iterations {}..{to}): moved = θ_{to} − θ_{}, \
         walk = √Σ step² (how far a random walk of the same steps goes), z = moved / walk; \
         signal: |z| ≥ {Z_SIGNAL}, noise: below, at bound: within c_end of min or max, \
         still: no step, early: under {MIN_ITERATIONS} iterations.",
        to / 2 + 1,
        to / 2
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

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const W: f64 = 720.0;
const H: f64 = 240.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 64.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 30.0;

/// A tick label with as many decimals as a spacing of `step` needs.
fn tick(v: f64, step: f64) -> String {
    let decimals = if step >= 5.0 {
        0
    } else if step >= 0.5 {
        1
    } else {
        2
    };
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

/// The chart of parameter `i`: θ over the iterations (left axis), the same line read in
/// units of c_end from the start (right axis), the start dashed, the averaging window's
/// mean ± error shaded, and min/max where they fall inside the view.
fn chart(v: &TuneView, i: usize, avg: Option<&Averaged>) -> String {
    let p = &v.params[i];
    let rows = &v.rows;
    let last = v.done().max(1) as f64;
    let mut lo = p.start;
    let mut hi = p.start;
    for r in rows {
        lo = lo.min(r.theta[i]);
        hi = hi.max(r.theta[i]);
    }
    let band = avg.and_then(|a| a.error[i].map(|e| (a.from, a.mean[i] - e, a.mean[i] + e)));
    if let Some((_, b0, b1)) = band {
        lo = lo.min(b0);
        hi = hi.max(b1);
    }
    // At least ±c_end around the start, so that noise of a fraction of c_end looks small.
    lo = lo.min(p.start - p.c_end);
    hi = hi.max(p.start + p.c_end);
    let pad = 0.05 * (hi - lo);
    let (lo, hi) = (lo - pad, hi + pad);
    let (x0, x1, y0, y1) = (LEFT, W - RIGHT, TOP, H - BOTTOM);
    let px = |it: f64| x0 + (x1 - x0) * it / last;
    let py = |t: f64| y1 - (y1 - y0) * (t - lo) / (hi - lo);
    let mut s = String::new();
    let title = format!(
        "{}: θ (left), (θ − start) / c_end with c_end = {} (right)",
        p.name,
        short(p.c_end)
    );
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" font-family="sans-serif"><title>{t}</title><text x="{}" y="20" text-anchor="middle" font-size="14">{t}</text><rect x="{x0}" y="{y0}" width="{}" height="{}" fill="#fafafa" stroke="#999"/>"##,
        W / 2.0,
        x1 - x0,
        y1 - y0,
        t = esc(&title)
    );
    let step = (hi - lo) / 4.0;
    for t in 0..=4 {
        let y = lo + step * t as f64;
        let units = (y - p.start) / p.c_end;
        let _ = write!(
            s,
            r##"<line x1="{x0}" x2="{x1}" y1="{0:.1}" y2="{0:.1}" stroke="#eee"/><text x="{1}" y="{2:.1}" text-anchor="end" font-size="11">{3}</text><text x="{4}" y="{2:.1}" font-size="11" fill="#555">{5}</text>"##,
            py(y),
            x0 - 4.0,
            py(y) + 4.0,
            tick(y, step),
            x1 + 4.0,
            tick(units, step / p.c_end),
        );
        let it = last * t as f64 / 4.0;
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{}" text-anchor="middle" font-size="11">{}</text>"##,
            px(it),
            y1 + 16.0,
            it.round()
        );
    }
    let clip = format!("clip-tune-{i}");
    let _ = write!(
        s,
        r##"<clipPath id="{clip}"><rect x="{x0}" y="{y0}" width="{}" height="{}"/></clipPath><g clip-path="url(#{clip})">"##,
        x1 - x0,
        y1 - y0
    );
    if let Some((from, b0, b1)) = band {
        let _ = write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#9ecae1" fill-opacity="0.5"><title>average {:.2} ± {:.2}</title></rect>"##,
            px(from as f64),
            py(b1),
            (px(last) - px(from as f64)).max(1.0),
            (py(b0) - py(b1)).max(1.0),
            (b0 + b1) / 2.0,
            (b1 - b0) / 2.0
        );
    }
    for (bound, word) in [(p.min, "min"), (p.max, "max")] {
        if bound >= lo && bound <= hi {
            let _ = write!(
                s,
                r##"<line x1="{x0}" x2="{x1}" y1="{0:.1}" y2="{0:.1}" stroke="#b00"/><text x="{1}" y="{2:.1}" font-size="11" fill="#b00">{word} {3}</text>"##,
                py(bound),
                x0 + 4.0,
                py(bound) - 3.0,
                short(bound)
            );
        }
    }
    let _ = write!(
        s,
        r##"<line x1="{x0}" x2="{x1}" y1="{0:.1}" y2="{0:.1}" stroke="#666" stroke-dasharray="6 4"/>"##,
        py(p.start)
    );
    let stride = rows.len().div_ceil(POINTS).max(1);
    let pts: Vec<String> = rows
        .iter()
        .enumerate()
        .filter(|(k, _)| k % stride == 0 || k + 1 == rows.len())
        .map(|(_, r)| format!("{:.1},{:.1}", px(r.iteration as f64), py(r.theta[i])))
        .collect();
    let _ = write!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#08519c" stroke-width="1.5"/></g></svg>"##,
        pts.join(" ")
    );
    s
}

/// The self-contained page (inline SVG and CSS, no script, no external asset), reloading
/// itself every [`crate::cluster::html::REFRESH_SECS`] seconds while `live`.
pub fn html(v: &TuneView) -> String {
    let avg = average::average(&v.rows);
    let mut page = crate::cluster::html::page_start(
        &v.title,
        v.live,
        "td:first-child{text-align:left}.signal{color:#080;font-weight:bold}.bound{color:#b00;font-weight:bold}\
         pre{background:#f4f4f4;padding:1em}svg{display:block;margin:1em 0}",
        if v.done() >= v.iterations {
            "Finished."
        } else {
            "Not running."
        },
        &summary(v).join("\n"),
    );
    page.push_str("<h2>Parameters</h2><table><tr>");
    for h in HEADS {
        let _ = write!(page, "<th>{}</th>", esc(h));
    }
    page.push_str("</tr>");
    for c in cells(v, avg.as_ref()) {
        let class = match c.verdict {
            "signal" => " class=\"signal\"",
            "at bound" => " class=\"bound\"",
            _ => "",
        };
        let _ = write!(page, "<tr>");
        for cell in [
            &c.name, &c.start, &c.current, &c.min, &c.max, &c.delta, &c.average, &c.error,
            &c.moved, &c.walk, &c.z,
        ] {
            let _ = write!(page, "<td>{}</td>", esc(cell));
        }
        let _ = write!(page, "<td{class}>{}</td></tr>", esc(c.verdict));
    }
    page.push_str("</table>");
    if let Some(a) = &avg {
        let _ = write!(
            page,
            "<p>Average: θ over {}, ± a 95 % batch-means error (the shaded band in the charts).</p>",
            esc(&a.window())
        );
    }
    let _ = write!(page, "<p>{}</p>", esc(&legend(v)));
    page.push_str("<h2>Trajectories</h2>");
    for i in 0..v.params.len() {
        page.push_str(&chart(v, i, avg.as_ref()));
    }
    page.push_str("</body></html>\n");
    page
}

/// Whether `path` looks like a tune trajectory: its first line starts `iteration,games`.
pub fn is_trajectory(path: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(64).read_to_end(&mut head).is_err() {
        return false;
    }
    head.starts_with(b"iteration,games")
}

/// Whether `path` is a tune's trajectory: its header, or an empty file whose run record is
/// a tune's (a tune stopped before it wrote its first line).
pub fn is_tune(path: &Path) -> bool {
    is_trajectory(path)
        || (is_empty(path)
            && run_record::read("--csv", path)
                .ok()
                .flatten()
                .and_then(|r| {
                    r.get("command")
                        .and_then(Value::as_str)
                        .map(|c| c == "tune")
                })
                .unwrap_or(false))
}

/// Whether the file at `path` holds nothing (white space at most).
fn is_empty(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() == 0)
}

/// The session extras `spar tune` keeps in the run record: when the current session
/// started (Unix seconds) and the games played before it.
pub const SESSION_KEY: &str = "session";

/// The `session` value of a run record: `{"started": unix seconds, "games": games before}`.
pub fn session_record(games_before: u64) -> Value {
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    serde_json::json!({ "started": started, "games": games_before })
}

/// Parses one `params` entry of a tune's run record: `name start min max c_end r_end`
/// (the name may hold spaces: UCI option names do).
fn parse_record_param(text: &str) -> Option<SpsaParam> {
    let words: Vec<&str> = text.split(' ').collect();
    if words.len() < 6 {
        return None;
    }
    let (name, numbers) = words.split_at(words.len() - 5);
    let n: Vec<f64> = numbers
        .iter()
        .map(|w| w.parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect::<Option<_>>()?;
    Some(SpsaParam {
        name: name.join(" "),
        start: n[0],
        min: n[1],
        max: n[2],
        c_end: n[3],
        r_end: n[4],
    })
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

/// The view of a local tune's `--csv` trajectory and its run record (`CSV.run.json`, for
/// the parameters' ranges and step sizes, the number of iterations and the start of the
/// current session). The run is live while a `spar tune` holds the CSV's lock; games/s is
/// that of the current session (games since it started over the time from its start to
/// the CSV's last write), and the ETA the remaining games at that rate. The verification
/// SPRT's verdict, when the record has one, is one of the extra lines.
pub fn from_csv(path: &Path) -> CliResult<TuneView> {
    // An empty trajectory (no header yet) is a tune at its start: the record names it.
    let contents = if is_empty(path) {
        None
    } else {
        Some(trajectory::read(path).map_err(CliError::usage)?)
    };
    let record_path: PathBuf = run_record::path_for(path);
    let missing = || {
        CliError::usage(format!(
            "{}: its run record {} is missing or not a tune's; spar status needs it for the parameters' ranges and steps (`spar tune --plot {}` draws the trajectory without it)",
            path.display(),
            record_path.display(),
            path.display()
        ))
    };
    let record = run_record::read("--csv", path)
        .map_err(|_| missing())?
        .ok_or_else(missing)?;
    if record.get("command").and_then(Value::as_str) != Some("tune") {
        return Err(missing());
    }
    let fields = record
        .get("fields")
        .and_then(Value::as_object)
        .ok_or_else(missing)?;
    let params: Vec<SpsaParam> = fields
        .get("params")
        .and_then(Value::as_array)
        .ok_or_else(missing)?
        .iter()
        .map(|v| v.as_str().and_then(parse_record_param))
        .collect::<Option<_>>()
        .ok_or_else(missing)?;
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    let contents = contents.unwrap_or_else(|| trajectory::Contents {
        names: names.iter().map(|n| n.to_string()).collect(),
        rows: Vec::new(),
        torn: false,
    });
    if names != contents.names {
        return Err(CliError::usage(format!(
            "{}: its run record {} tunes [{}], the CSV [{}]; the two are of different runs",
            path.display(),
            record_path.display(),
            names.join(", "),
            contents.names.join(", ")
        )));
    }
    let count = |key: &str| fields.get(key).and_then(Value::as_u64).ok_or_else(missing);
    let iterations = count("iterations")?;
    let pairs_per_iteration = count("pairs-per-iteration")?;
    let rows = contents.rows;
    let last_games = rows.last().map_or(0, |r| r.games);
    let done = rows.last().map_or(0, |r| r.iteration);
    let written = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_secs_f64());
    let session = record.get(SESSION_KEY);
    let started = session
        .and_then(|s| s.get("started"))
        .and_then(Value::as_f64);
    let games_before = session.and_then(|s| s.get("games")).and_then(Value::as_u64);
    let games_per_second = match (started, games_before, written) {
        (Some(s), Some(g), Some(w)) if w > s && last_games > g => {
            Some((last_games - g) as f64 / (w - s))
        }
        _ => None,
    };
    // Live while the tune plays its iterations or, after them, its verification.
    let live =
        crate::files::lock::is_held(path) && (done < iterations || record.get("verify").is_none());
    let remaining = 2 * pairs_per_iteration * iterations.saturating_sub(done);
    let eta_seconds = games_per_second
        .filter(|_| live)
        .map(|r| remaining as f64 / r);
    let mut extra_lines = Vec::new();
    if let Some(w) = written.filter(|_| !rows.is_empty()) {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(w, |d| d.as_secs_f64());
        extra_lines.push(format!("Last row written {} ago", human(now - w)));
    }
    // The verification SPRT's verdict, once the run has one; before that, how far it got.
    if let Some(v) = record.get("verify") {
        extra_lines.push(verdict_line(v));
    } else {
        let results = verify_files(path).results;
        if results.is_file() {
            let state = if crate::files::lock::is_held(&results) {
                "running"
            } else {
                "stopped: the same command with --resume continues it"
            };
            let snapshot = crate::cluster::status::of_csv(&results);
            extra_lines.extend(verification_so_far(snapshot, state, &results));
        }
    }
    if done < iterations && !live {
        extra_lines.push(format!(
            "Not running (no spar tune holds {}): continue it with the same command and --resume",
            path.display()
        ));
    }
    Ok(TuneView {
        title: format!("Tune {}", path.display()),
        params,
        rows,
        iterations,
        pairs_per_iteration,
        games_per_second,
        eta_seconds,
        extra_lines,
        live,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn record_params_with_spaces_in_names() {
        let p = parse_record_param("Move Overhead 10 0 100 5 0.002").unwrap();
        assert_eq!(p.name, "Move Overhead");
        assert_eq!(
            (p.start, p.min, p.max, p.c_end, p.r_end),
            (10.0, 0.0, 100.0, 5.0, 0.002)
        );
        assert!(parse_record_param("x 1 2 3").is_none());
        assert!(parse_record_param("x 1 2 3 y 5").is_none());
        assert_eq!(short(75.0), "75");
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(-0.001), "0");
    }
}
