//! `spar status --html FILE`: one self-contained page (inline SVG and CSS, no script, no
//! external asset) with the LLR against its bounds and the Elo ± error over games, the
//! pentanomial counts and the shard table. While the run is live the page reloads itself
//! every [`REFRESH_SECS`] seconds (a `<meta http-equiv="refresh">`).

use std::fmt::Write;

use sprt::{Pentanomial, Sample};

use super::status::{human, Snapshot};
use crate::html::chart::{self, Area, Plot, Range};
use crate::html::esc;
use crate::job::StatusView;
use crate::play::tally::Tally;
use crate::summary;

/// Seconds between reloads of a live page.
pub const REFRESH_SECS: u32 = 10;

/// Points per chart at most.
const POINTS: usize = 200;

/// One point of the history: games, LLR, Elo, Elo error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Games so far.
    pub games: f64,
    /// The LLR (0 without an SPRT).
    pub llr: f64,
    /// Elo.
    pub elo: f64,
    /// Half-width of its 95 % interval.
    pub error: f64,
}

/// The history over games, in pair order, at up to [`POINTS`] points.
pub fn history(s: &Snapshot) -> Vec<Point> {
    let n = s.pairs.len();
    if n == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(POINTS).max(1);
    let mut t = Tally::default();
    let mut out = Vec::new();
    for (i, p) in s.pairs.iter().enumerate() {
        t.add_pair(*p);
        if (i + 1) % step != 0 && i + 1 != n {
            continue;
        }
        let sample = match &s.sprt {
            Some(sp) => summary::sample(&t, sp),
            None => Sample::Pentanomial(t.pairs),
        };
        let e = sample.estimate();
        let llr = s
            .sprt
            .as_ref()
            .and_then(|sp| sp.llr(&sample).ok())
            .unwrap_or(0.0);
        if e.elo.is_finite() && e.elo_error.is_finite() {
            out.push(Point {
                games: 2.0 * (i + 1) as f64,
                llr,
                elo: e.elo,
                error: e.elo_error,
            });
        }
    }
    out
}

/// A line chart: `series` of (x, y) polylines with colours, a shaded band, and dashed
/// horizontal lines.
struct Chart<'a> {
    title: &'a str,
    lines: Vec<(&'a str, Vec<(f64, f64)>)>,
    band: Vec<(f64, f64, f64)>,
    rules: Vec<(&'a str, f64, String)>,
}

/// The fraction of the x-axis before which values do not set the y-range.
const SCALE_FROM: f64 = 0.25;

const W: f64 = 640.0;
const H: f64 = 260.0;
const PAD: f64 = 48.0;

impl Chart<'_> {
    fn svg(&self) -> String {
        let xs = self.lines.iter().flat_map(|(_, l)| l.iter().map(|p| p.0));
        let x_max = xs.fold(1.0f64, f64::max);
        // The y-range comes from the later three quarters of the run: the first games' error
        // band is hundreds of Elo wide and would flatten the converged estimate into a
        // line. What lies outside is clipped at the plot's edge.
        let ys_from = |from: f64| -> Vec<f64> {
            let mut ys: Vec<f64> = self
                .lines
                .iter()
                .flat_map(|(_, l)| l.iter().filter(|p| p.0 >= from).map(|p| p.1))
                .collect();
            ys.extend(
                self.band
                    .iter()
                    .filter(|b| b.0 >= from)
                    .flat_map(|b| [b.1, b.2]),
            );
            ys
        };
        let mut ys = ys_from(SCALE_FROM * x_max);
        if ys.is_empty() {
            ys = ys_from(0.0);
        }
        ys.extend(self.rules.iter().map(|r| r.1));
        let mut y = Range::of(ys);
        if !y.is_finite() {
            y = Range::new(-1.0, 1.0);
        }
        if y.hi - y.lo < 1e-9 {
            y = Range::new(y.lo - 1.0, y.hi + 1.0);
        }
        let plot = Plot {
            area: Area {
                x0: PAD,
                y0: PAD,
                x1: W - PAD,
                y1: H - PAD,
            },
            x: Range::new(0.0, x_max),
            y: y.padded(0.05),
        };
        let (lo, hi) = (plot.y.lo, plot.y.hi);
        let mut s = chart::open(None, W, H, r#" role="img""#, Some(self.title));
        s.push_str(&plot.area.frame("#fafafa", "#999"));
        let _ = write!(
            s,
            r##"<text x="{}" y="20" text-anchor="middle" font-size="14">{}</text>"##,
            W / 2.0,
            esc(self.title)
        );
        for (label, y) in [(lo, lo), (hi, hi), ((lo + hi) / 2.0, (lo + hi) / 2.0)] {
            let _ = write!(
                s,
                r##"<text x="{}" y="{}" text-anchor="end" font-size="11">{:.1}</text>"##,
                PAD - 4.0,
                plot.py(y) + 4.0,
                label
            );
        }
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end" font-size="11">{} games</text><text x="{PAD}" y="{}" font-size="11">0</text>"##,
            W - PAD,
            H - PAD + 16.0,
            x_max,
            H - PAD + 16.0
        );
        // Everything drawn from the data stays inside the plot area.
        let clip = format!("clip{:x}", {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            self.title.hash(&mut h);
            h.finish()
        });
        s.push_str(&plot.area.clip(&clip));
        if !self.band.is_empty() {
            let _ = write!(
                s,
                r##"<polygon points="{}" fill="#9ecae1" fill-opacity="0.5" stroke="none"/>"##,
                plot.band(&self.band)
            );
        }
        for (colour, y, label) in &self.rules {
            let _ = write!(
                s,
                r##"{}<text x="{}" y="{:.1}" font-size="11" fill="{colour}">{}</text>"##,
                plot.rule(*y, &format!(r#"stroke="{colour}" stroke-dasharray="6 4""#)),
                W - PAD + 2.0,
                plot.py(*y) + 4.0,
                esc(label)
            );
        }
        for (colour, line) in &self.lines {
            let _ = write!(
                s,
                r##"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"##,
                plot.points(line.iter().copied())
            );
        }
        s.push_str("</g></svg>");
        s
    }
}

/// The start of a status page (a match's or a tune's): the head with the shared style rules
/// followed by `css`, reloading itself every [`REFRESH_SECS`] seconds while `live`; the
/// title; the state (`Live: …` while live, else `state`); `summary` as preformatted text.
pub fn page_start(title: &str, live: bool, css: &str, state: &str, summary: &str) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{}<title>{}</title>\
         <style>body{{font-family:sans-serif;margin:2em;color:#222}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}th{{background:#eee}}\
         {css}</style></head><body>",
        if live {
            format!("<meta http-equiv=\"refresh\" content=\"{REFRESH_SECS}\">")
        } else {
            String::new()
        },
        esc(title)
    );
    let _ = write!(page, "<h1>{}</h1>", esc(title));
    let _ = write!(
        page,
        "<p>{}</p><pre>{}</pre>",
        if live {
            format!("Live: this page reloads every {REFRESH_SECS} s.")
        } else {
            state.to_string()
        },
        esc(summary)
    );
    page
}

/// A snapshot's text and page (a match, an SPRT, a datagen run).
impl StatusView for Snapshot {
    fn lines(&self) -> Vec<String> {
        Snapshot::lines(self)
    }

    fn page(&self) -> String {
        render(self)
    }
}

/// The page.
pub fn render(s: &Snapshot) -> String {
    let live = !s.finished();
    let points = history(s);
    let tally = s.tally();
    let mut page = page_start(
        &s.title,
        live,
        ".bad{color:#b00;font-weight:bold}pre{background:#f4f4f4;padding:1em}",
        "Finished.",
        &s.lines()[1..]
            .iter()
            .filter(|l| !l.starts_with("shard "))
            .cloned()
            .collect::<Vec<_>>()
            .join("\n"),
    );
    if s.games_done.is_none() {
        if let Some(sp) = &s.sprt {
            let chart = Chart {
                title: "LLR against its bounds",
                lines: vec![("#08519c", points.iter().map(|p| (p.games, p.llr)).collect())],
                band: Vec::new(),
                rules: vec![
                    ("#b00", sp.lower_bound(), format!("{:.2}", sp.lower_bound())),
                    ("#080", sp.upper_bound(), format!("{:.2}", sp.upper_bound())),
                ],
            };
            page.push_str(&chart.svg());
        }
        let chart = Chart {
            title: "Elo ± 95 % error",
            lines: vec![("#08519c", points.iter().map(|p| (p.games, p.elo)).collect())],
            band: points
                .iter()
                .map(|p| (p.games, p.elo - p.error, p.elo + p.error))
                .collect(),
            rules: vec![("#666", 0.0, "0".to_string())],
        };
        page.push_str(&chart.svg());
        page.push_str(&ptnml_table(&tally.pairs));
    }
    if !s.shards.is_empty() {
        let unit = if s.games_done.is_some() {
            "games"
        } else {
            "pairs"
        };
        let _ = write!(
            page,
            "<h2>Shards</h2><table><tr><th>shard</th><th>{unit}</th><th>last record</th><th>state</th><th>flags</th></tr>"
        );
        for sh in &s.shards {
            let flags = match (&sh.failed, sh.stalled, sh.paused) {
                (Some(f), _, _) => format!("<span class=\"bad\">failed: {}</span>", esc(f)),
                (None, true, _) => "<span class=\"bad\">stalled</span>".to_string(),
                (None, false, Some(k)) => super::status::paused_text(k),
                _ => String::new(),
            };
            let _ = write!(
                page,
                "<tr><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{flags}</td></tr>",
                sh.index,
                sh.done,
                sh.share.map_or(String::new(), |t| format!("/{t}")),
                sh.age
                    .map_or("none".to_string(), |a| format!("{} ago", human(a))),
                esc(sh.state.as_deref().unwrap_or(""))
            );
        }
        page.push_str("</table>");
    }
    page.push_str("</body></html>\n");
    page
}

fn ptnml_table(p: &Pentanomial) -> String {
    let [a, b, c, d, e] = p.0;
    format!(
        "<h2>Pentanomial counts</h2><table><tr><th>0</th><th>0.5</th><th>1</th><th>1.5</th><th>2</th></tr>\
         <tr><td>{a}</td><td>{b}</td><td>{c}</td><td>{d}</td><td>{e}</td></tr></table>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::game::Termination;
    use crate::play::tally::GameSummary;
    use engine::types::GameResult;

    fn snapshot(pairs: usize) -> Snapshot {
        let g = |first_is_white, outcome| GameSummary {
            first_is_white,
            outcome,
            termination: Termination::Checkmate,
        };
        let sprt = sprt::Sprt::new(0.0, 5.0, 0.05, 0.05, sprt::Model::Normalized).unwrap();
        Snapshot {
            title: "Run <x>".into(),
            pairs: (0..pairs)
                .map(|i| {
                    if i % 3 == 0 {
                        [g(true, GameResult::WhiteWins), g(false, GameResult::Draw)]
                    } else {
                        [g(true, GameResult::Draw), g(false, GameResult::WhiteWins)]
                    }
                })
                .collect(),
            uncounted: None,
            games_done: None,
            total: None,
            sprt: Some(sprt),
            elapsed: Some(10.0),
            shards: Vec::new(),
            conflicts: 0,
            running: None,
        }
    }

    #[test]
    fn the_elo_scale_follows_the_later_games_not_the_first_error_band() {
        // ±600 after 2 games, then a band narrowing to 10 ± 5 over 1000 games.
        let band: Vec<(f64, f64, f64)> = (1..=100)
            .map(|i| {
                let x = 10.0 * i as f64;
                let half = if i == 1 {
                    600.0
                } else {
                    5.0 + 100.0 / i as f64
                };
                (x, 10.0 - half, 10.0 + half)
            })
            .collect();
        let chart = Chart {
            title: "Elo",
            lines: vec![("#000", band.iter().map(|b| (b.0, 10.0)).collect())],
            band,
            rules: vec![("#888", 0.0, "0".to_string())],
        };
        let svg = chart.svg();
        let labels: Vec<f64> = svg
            .split(r#"text-anchor="end" font-size="11">"#)
            .skip(1)
            .filter_map(|t| t.split('<').next()?.parse().ok())
            .collect();
        assert_eq!(labels.len(), 3, "{svg}");
        assert!(
            labels.iter().all(|y| y.abs() < 60.0),
            "the scale is readable: {labels:?}"
        );
        assert!(
            svg.contains("clip-path="),
            "the first band is clipped, not drawn outside"
        );
    }

    #[test]
    fn the_page_is_self_contained_with_both_charts() {
        let page = render(&snapshot(20));
        assert!(page.contains("http-equiv=\"refresh\""), "live: refreshes");
        let decided = render(&snapshot(1000));
        assert!(!decided.contains("http-equiv"), "decided: no refresh");
        assert_eq!(page.matches("<svg").count(), 2);
        assert!(page.contains("Run &lt;x&gt;"));
        for external in ["src=", "href=", "<script"] {
            assert!(!page.contains(external), "{external}");
        }
        // Only references inside the page (the charts' clip paths).
        assert_eq!(page.matches("url(").count(), page.matches("url(#").count());
        assert!(history(&snapshot(1000)).len() <= POINTS);
        assert!(history(&snapshot(0)).is_empty());
    }
}
