//! The progression of a watched branch: the commits along its first-parent line, each with
//! its commit test's numbers (Elo against its parent, ±, games, verdict), the cumulative
//! Elo (the sum of each commit's Elo against its parent) with its band (±1.96·√(sum of the
//! variances), each variance the square of the test's 95 % error over 1.96), the anchor
//! tests (the tip against the anchor, at the tip's position), the failed tests and the
//! commits the bisects found. The numbers are the run cache's (`serve::cache`), never a
//! read of a run's files in a request. [`svg`] draws it with `html::chart`.

use serde::Serialize;

use crate::html::chart::{self, Area, Plot, Range};
use crate::html::esc;
use crate::serve::db::watch::{WatchCommit, WatchRun};
use crate::serve::state::AppState;

/// The two-sided 95 % quantile of the normal law.
const Z95: f64 = 1.96;

/// A commit's point on the line.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Point {
    #[serde(flatten)]
    pub commit: WatchCommit,
    /// Its test's state, Elo against its parent, its 95 % error, games and verdict.
    pub state: Option<String>,
    pub elo: Option<f64>,
    pub error: Option<f64>,
    pub games: Option<u64>,
    pub verdict: Option<String>,
    /// The sum of the Elo of the commits up to this one, and the band's half width.
    pub cumulative: f64,
    pub band: f64,
    /// The bisect (or, for a push of one commit, the test) that found this commit.
    pub found_by: Option<i64>,
}

/// An anchor test: the tip at `position` against the anchor.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AnchorPoint {
    pub position: i64,
    pub tip: String,
    pub run_id: Option<i64>,
    pub elo: Option<f64>,
    pub error: Option<f64>,
    pub games: Option<u64>,
}

/// A watched branch's progression.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Progression {
    pub engine: String,
    pub branch: String,
    /// The branches the engine has a history of (the newest first).
    pub branches: Vec<String>,
    /// Every commit, along the line.
    pub points: Vec<Point>,
    pub anchors: Vec<AnchorPoint>,
    /// The batch tests, bisects and anchor tests.
    pub runs: Vec<WatchRun>,
}

/// The numbers of run `id` (state, Elo, error, games, verdict) from the run cache.
fn numbers(st: &AppState, id: i64) -> Option<(String, crate::live::Live)> {
    let run = st.store.blocking(|db| db.get(id)).ok().flatten()?;
    if run.deleted {
        return None;
    }
    let live = st.cache.live(&st.store, &run);
    Some((run.state.as_str().to_string(), live))
}

/// The progression of `engine`'s `branch` (`None`: the branch watched now, else the one
/// with the newest history).
pub fn of(st: &AppState, engine: &str, branch: Option<&str>) -> Result<Progression, String> {
    let (watch, branches) = st
        .store
        .blocking(|db| Ok::<_, String>((db.watch(engine)?, db.watched_branches(engine)?)))?;
    let branch = branch
        .map(String::from)
        .or(watch.map(|(w, _)| w.branch))
        .or(branches.first().cloned())
        .unwrap_or_default();
    let (commits, runs) = st.store.blocking(|db| {
        Ok::<_, String>((
            db.watch_commits(engine, &branch, None)?,
            db.watch_runs(Some((engine, &branch)), false)?,
        ))
    })?;
    let mut points = Vec::with_capacity(commits.len());
    for c in commits {
        let mut p = Point {
            commit: c,
            ..Point::default()
        };
        if let Some((state, live)) = p.commit.run_id.and_then(|id| numbers(st, id)) {
            p.state = Some(state);
            p.elo = live.elo;
            p.error = live.elo_error;
            p.games = live.games;
            p.verdict = live.verdict;
        }
        p.found_by = runs
            .iter()
            .find(|r| r.found.as_deref() == Some(p.commit.sha.as_str()))
            .and_then(|r| r.run_id);
        points.push(p);
    }
    accumulate(&mut points);
    let anchors = runs
        .iter()
        .filter(|r| r.role == super::watcher::ANCHOR)
        .map(|r| {
            let live = r.run_id.and_then(|id| numbers(st, id)).map(|(_, l)| l);
            AnchorPoint {
                position: r.position,
                tip: r.tip.clone(),
                run_id: r.run_id,
                elo: live.as_ref().and_then(|l| l.elo),
                error: live.as_ref().and_then(|l| l.elo_error),
                games: live.as_ref().and_then(|l| l.games),
            }
        })
        .collect();
    Ok(Progression {
        engine: engine.to_string(),
        branch,
        branches,
        points,
        anchors,
        runs,
    })
}

/// Sets each point's cumulative Elo (the sum of the Elo of the commits up to it; a commit
/// without numbers adds nothing) and its band's half width (1.96·√(sum of the variances),
/// each variance `(error / 1.96)²` of a test's 95 % error).
pub fn accumulate(points: &mut [Point]) {
    let (mut sum, mut var) = (0.0, 0.0);
    for p in points {
        sum += p.elo.unwrap_or(0.0);
        var += p.error.map_or(0.0, |e| (e / Z95).powi(2));
        p.cumulative = sum;
        p.band = Z95 * var.sqrt();
    }
}

/// Whether a commit matches the search `q` (its sha, subject or author, any case).
pub fn matches(c: &WatchCommit, q: &str) -> bool {
    let q = q.trim().to_lowercase();
    q.is_empty()
        || c.sha.starts_with(&q)
        || c.subject.to_lowercase().contains(&q)
        || c.author.to_lowercase().contains(&q)
}

const W: f64 = 760.0;
const H: f64 = 300.0;

/// The chart: the cumulative Elo along the commits with its band, each commit a point
/// linking to its test (red: its test failed), the commits found by a bisect marked with a
/// link to it, and the anchor tests as diamonds linking to theirs.
pub fn svg(p: &Progression) -> String {
    let area = Area::inset(W, H, 56.0, 14.0, 16.0, 34.0);
    let n = p.points.len();
    let x = Range::new(0.0, (n.max(1)) as f64);
    let y = Range::of(
        p.points
            .iter()
            .flat_map(|q| [q.cumulative - q.band, q.cumulative + q.band])
            .chain(p.anchors.iter().filter_map(|a| a.elo))
            .chain([0.0]),
    );
    let y = if y.hi - y.lo < 1.0 {
        Range::new(y.lo - 1.0, y.hi + 1.0)
    } else {
        y.padded(0.08)
    };
    let plot = Plot { area, x, y };
    let mut s = chart::open(
        Some("progression-chart"),
        W,
        H,
        r#" role="img""#,
        Some(&format!(
            "Cumulative Elo of {} along {}",
            p.engine, p.branch
        )),
    );
    s.push_str(&area.frame("#fff", "#888"));
    let step = (y.hi - y.lo) / 4.0;
    for v in y.ticks(4) {
        s.push_str(&plot.rule(v, r##"stroke="#eee""##));
        s.push_str(&format!(
            r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#444">{}</text>"##,
            area.x0 - 4.0,
            plot.py(v) + 4.0,
            esc(&chart::tick(v, step))
        ));
    }
    s.push_str(&plot.rule(0.0, r##"stroke="#666" stroke-dasharray="4 3""##));
    s.push_str(&format!(
        r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="#444">commits along {} (Elo: the sum of each commit's against its parent, ±95 %)</text>"##,
        (area.x0 + area.x1) / 2.0,
        H - 8.0,
        esc(&p.branch)
    ));
    s.push_str(&area.clip("progression-clip"));
    let at = |k: usize| (k + 1) as f64;
    let mut line = vec![(0.0, 0.0, 0.0)];
    line.extend(
        p.points
            .iter()
            .enumerate()
            .map(|(k, q)| (at(k), q.cumulative - q.band, q.cumulative + q.band)),
    );
    s.push_str(&format!(
        r##"<polygon class="band" points="{}" fill="#0072b2" fill-opacity="0.15" stroke="none"/>"##,
        plot.band(&line)
    ));
    let cum: Vec<(f64, f64)> = std::iter::once((0.0, 0.0))
        .chain(
            p.points
                .iter()
                .enumerate()
                .map(|(k, q)| (at(k), q.cumulative)),
        )
        .collect();
    s.push_str(&format!(
        r##"<polyline id="progression-line" points="{}" fill="none" stroke="{}" stroke-width="2"/>"##,
        plot.points(cum),
        chart::COLOURS[0]
    ));
    s.push_str("</g>");
    for (k, q) in p.points.iter().enumerate() {
        let (cx, cy) = (plot.px(at(k)), plot.py(q.cumulative));
        let failed = q.verdict.as_deref() == Some("H0");
        let colour = if failed { "#d00" } else { chart::COLOURS[0] };
        let title = format!(
            "{} {}: {} Elo{}",
            &q.commit.sha[..q.commit.sha.len().min(10)],
            q.commit.subject,
            q.elo.map_or("–".into(), |e| format!("{e:+.1}")),
            if failed { " (failed: H0)" } else { "" }
        );
        let dot = format!(
            r##"<circle class="point{}" data-sha="{}" cx="{cx:.1}" cy="{cy:.1}" r="4" fill="{colour}"><title>{}</title></circle>"##,
            if failed { " failed" } else { "" },
            esc(&q.commit.sha),
            esc(&title)
        );
        s.push_str(&link(q.commit.run_id, &dot));
        if let Some(run) = q.found_by {
            let mark = format!(
                r##"<text class="found" data-sha="{}" x="{cx:.1}" y="{:.1}" font-size="12" text-anchor="middle" fill="#d00">▼ found<title>{}</title></text>"##,
                esc(&q.commit.sha),
                area.y0 + 12.0,
                esc(&format!(
                    "{} was found by run {run}",
                    &q.commit.sha[..q.commit.sha.len().min(10)]
                ))
            );
            s.push_str(&format!(
                r##"<line x1="{cx:.1}" x2="{cx:.1}" y1="{:.1}" y2="{:.1}" stroke="#d00" stroke-dasharray="2 2"/>"##,
                area.y0 + 14.0,
                area.y1
            ));
            s.push_str(&link(Some(run), &mark));
        }
    }
    for a in &p.anchors {
        let Some(elo) = a.elo else { continue };
        let k = p
            .points
            .iter()
            .position(|q| q.commit.position == a.position);
        let px = plot.px(k.map_or(n as f64, at));
        let py = plot.py(elo);
        let diamond = format!(
            r##"<path class="anchor" d="M{px:.1},{:.1} l5,5 l-5,5 l-5,-5 z" fill="{}"><title>{}</title></path>"##,
            py - 5.0,
            chart::COLOURS[1],
            esc(&format!(
                "the tip {} against the anchor: {elo:+.1} ± {}",
                &a.tip[..a.tip.len().min(10)],
                a.error.map_or("–".into(), |e| format!("{e:.1}"))
            ))
        );
        s.push_str(&link(a.run_id, &diamond));
    }
    s.push_str("</svg>");
    s
}

/// `inner` as a link to run `run`'s page (as it is without a run).
fn link(run: Option<i64>, inner: &str) -> String {
    match run {
        Some(id) => format!(r#"<a href="/runs/{id}">{inner}</a>"#),
        None => inner.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(k: i64, elo: f64, err: f64, verdict: &str) -> Point {
        Point {
            commit: WatchCommit {
                sha: format!("{k:040}"),
                subject: format!("<b>commit {k}</b>"),
                position: k,
                run_id: Some(k + 10),
                ..WatchCommit::default()
            },
            elo: Some(elo),
            error: Some(err),
            verdict: Some(verdict.into()),
            ..Point::default()
        }
    }

    #[test]
    fn the_chart_links_every_point_marks_failures_and_finds_and_escapes_subjects() {
        let mut p = Progression {
            engine: "e".into(),
            branch: "main".into(),
            points: vec![point(1, 2.0, 4.0, "H1"), point(2, -300.0, 40.0, "H0")],
            anchors: vec![AnchorPoint {
                position: 2,
                tip: "f".repeat(40),
                run_id: Some(99),
                elo: Some(-290.0),
                error: Some(30.0),
                games: Some(100),
            }],
            ..Progression::default()
        };
        p.points[1].found_by = Some(42);
        let s = svg(&p);
        assert!(s.contains(r#"<a href="/runs/11">"#) && s.contains(r#"<a href="/runs/12">"#));
        assert!(s.contains(r#"<a href="/runs/42">"#) && s.contains("▼ found"));
        assert!(s.contains(r#"<a href="/runs/99">"#) && s.contains("class=\"anchor\""));
        assert!(s.contains("class=\"point failed\""));
        assert!(s.contains("&lt;b&gt;commit 2&lt;/b&gt;") && !s.contains("<b>commit"));
        assert!(s.contains("id=\"progression-line\""));
    }

    #[test]
    fn the_sum_adds_the_elo_and_the_band_the_variances() {
        let mut ps = vec![
            point(1, 2.0, 3.0, "H1"),
            Point::default(),
            point(3, -10.0, 4.0, "H0"),
        ];
        accumulate(&mut ps);
        let got: Vec<(f64, f64)> = ps.iter().map(|p| (p.cumulative, p.band)).collect();
        assert_eq!(got[0], (2.0, 3.0));
        assert_eq!(got[1], (2.0, 3.0));
        assert_eq!(got[2].0, -8.0);
        assert!((got[2].1 - 5.0).abs() < 1e-9, "{got:?}");
    }

    #[test]
    fn commits_are_searched_by_sha_subject_and_author() {
        let c = WatchCommit {
            sha: "abcdef".into(),
            subject: "Faster Search".into(),
            author: "Ann".into(),
            ..WatchCommit::default()
        };
        assert!(matches(&c, "abc") && matches(&c, "search") && matches(&c, "ann"));
        assert!(matches(&c, " ") && !matches(&c, "def") && !matches(&c, "bob"));
    }
}
