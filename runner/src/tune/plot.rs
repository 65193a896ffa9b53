//! An SVG of an SPSA trajectory: one panel per parameter, θ against the iteration, with the
//! start value dashed. Plain SVG 1.1 written by hand (no dependency), viewable in any browser.

use std::fmt::Write;

use super::trajectory::Contents;
use crate::html::chart::{open, thinned, tick, Area, Plot, Range};
use crate::html::esc;

const WIDTH: f64 = 760.0;
const PANEL: f64 = 190.0;
/// The plot's area in the first panel: labels left, the name above, iterations below.
const AREA: Area = Area::inset(WIDTH, PANEL, 70.0, 34.0, 20.0, 36.0);
/// Most points drawn per line (longer runs are thinned evenly).
const MAX_POINTS: usize = 2000;

/// Renders the trajectory (at least a start row) as an SVG document.
pub fn svg(contents: &Contents, title: &str) -> String {
    let rows = &contents.rows;
    let n = contents.names.len();
    let height = 30.0 + PANEL * n as f64;
    let mut s = open(
        None,
        WIDTH,
        height,
        r#" font-family="sans-serif" font-size="12""#,
        None,
    );
    let _ = writeln!(
        s,
        r#"
<rect width="100%" height="100%" fill="white"/><text x="{}" y="20" font-size="15" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        esc(title)
    );
    let last_iter = rows.last().map_or(0, |r| r.iteration).max(1) as f64;
    for (p, name) in contents.names.iter().enumerate() {
        let y0 = 30.0 + PANEL * p as f64;
        let values: Vec<f64> = rows.iter().map(|r| r.theta[p]).collect();
        let mut range = Range::of(values.iter().copied());
        if !range.lo.is_finite() {
            range = Range::new(0.0, 1.0);
        }
        if range.hi - range.lo < 1.0 {
            let mid = (range.hi + range.lo) / 2.0;
            range = Range::new(mid - 0.5, mid + 0.5);
        }
        let plot = Plot {
            area: AREA.lower(y0),
            x: Range::new(0.0, last_iter),
            y: range.padded(0.05),
        };
        let Area { x0, x1, y1, .. } = plot.area;
        let step = (plot.y.hi - plot.y.lo) / 4.0;
        let start = values.first().copied().unwrap_or(0.0);
        let end = values.last().copied().unwrap_or(0.0);
        let _ = writeln!(
            s,
            r#"<text x="{x0}" y="{}" font-weight="bold">{}</text><text x="{}" y="{}" text-anchor="end">start {} → {}</text>"#,
            plot.area.y0 - 8.0,
            esc(name),
            x1,
            plot.area.y0 - 8.0,
            tick(start, step),
            tick(end, step)
        );
        let _ = writeln!(s, "{}", plot.area.frame("none", "#888"));
        for (v, it) in plot.y.ticks(4).zip(plot.x.ticks(4)) {
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" x2="{x1}" y1="{0}" y2="{0}" stroke="#eee"/><text x="{1}" y="{2}" text-anchor="end">{3}</text>"##,
                plot.py(v),
                x0 - 6.0,
                plot.py(v) + 4.0,
                tick(v, step)
            );
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                plot.px(it),
                y1 + 16.0,
                tick(it.round(), 5.0)
            );
        }
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" x2="{x1}" y1="{0}" y2="{0}" stroke="#999" stroke-dasharray="4 3"/>"##,
            plot.py(start)
        );
        let _ = writeln!(
            s,
            r##"<polyline points="{}" fill="none" stroke="#1f6fb4" stroke-width="1.5"/>"##,
            plot.points(thinned(rows, MAX_POINTS).map(|r| (r.iteration as f64, r.theta[p])))
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" text-anchor="middle" fill="#555">iteration</text>"##,
        WIDTH / 2.0,
        height - 4.0
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::super::trajectory::Row;
    use super::*;

    #[test]
    fn one_panel_per_parameter() {
        let rows = (0..5000)
            .map(|k| Row {
                iteration: k,
                games: 16 * k,
                theta: vec![75.0 + k as f64 / 100.0, 3.0],
                c: None,
                r: None,
            })
            .collect();
        let c = Contents {
            names: vec!["rfp_margin".into(), "a<b".into()],
            rows,
            torn: false,
        };
        let out = svg(&c, "run");
        assert!(out.starts_with("<svg") && out.trim_end().ends_with("</svg>"));
        assert_eq!(out.matches("<polyline").count(), 2);
        assert!(out.contains("rfp_margin") && out.contains("a&lt;b"));
        assert!(out.contains("start 75 → 125"), "{out}");
        let points = out.split("points=\"").nth(1).unwrap();
        let points = &points[..points.find('"').unwrap()];
        assert!(points.split(' ').count() <= MAX_POINTS + 1);
        assert!(!out.contains("NaN"));
    }
}
