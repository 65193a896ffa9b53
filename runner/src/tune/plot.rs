//! An SVG of an SPSA trajectory: one panel per parameter, θ against the iteration, with the
//! start value dashed. Plain SVG 1.1 written by hand (no dependency), viewable in any browser.

use std::fmt::Write;

use super::trajectory::Contents;

const WIDTH: f64 = 760.0;
const PANEL: f64 = 190.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 36.0;
/// Most points drawn per line (longer runs are thinned evenly).
const MAX_POINTS: usize = 2000;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A label for an axis value, with as many decimals as a tick spacing of `step` needs.
fn label(v: f64, step: f64) -> String {
    let decimals = if step >= 5.0 {
        0
    } else if step >= 0.5 {
        1
    } else {
        2
    };
    format!("{v:.decimals$}")
}

/// Renders the trajectory (at least a start row) as an SVG document.
pub fn svg(contents: &Contents, title: &str) -> String {
    let rows = &contents.rows;
    let n = contents.names.len();
    let height = 30.0 + PANEL * n as f64;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{}" y="20" font-size="15" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
    let last_iter = rows.last().map_or(0, |r| r.iteration).max(1) as f64;
    let stride = rows.len().div_ceil(MAX_POINTS).max(1);
    for (p, name) in contents.names.iter().enumerate() {
        let y0 = 30.0 + PANEL * p as f64;
        let values: Vec<f64> = rows.iter().map(|r| r.theta[p]).collect();
        let (mut lo, mut hi) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if hi - lo < 1.0 {
            let mid = (hi + lo) / 2.0;
            (lo, hi) = (mid - 0.5, mid + 0.5);
        }
        let pad = (hi - lo) * 0.05;
        (lo, hi) = (lo - pad, hi + pad);
        let (px0, px1) = (LEFT, WIDTH - RIGHT);
        let (py0, py1) = (y0 + TOP, y0 + PANEL - BOTTOM);
        let x = |it: f64| px0 + (px1 - px0) * it / last_iter;
        let y = |v: f64| py1 - (py1 - py0) * (v - lo) / (hi - lo);
        let start = values.first().copied().unwrap_or(0.0);
        let end = values.last().copied().unwrap_or(0.0);
        let _ = writeln!(
            s,
            r#"<text x="{LEFT}" y="{}" font-weight="bold">{}</text><text x="{}" y="{}" text-anchor="end">start {} → {}</text>"#,
            y0 + TOP - 8.0,
            escape(name),
            px1,
            y0 + TOP - 8.0,
            label(start, (hi - lo) / 4.0),
            label(end, (hi - lo) / 4.0)
        );
        let _ = writeln!(
            s,
            r##"<rect x="{px0}" y="{py0}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
            px1 - px0,
            py1 - py0
        );
        for t in 0..=4 {
            let v = lo + (hi - lo) * t as f64 / 4.0;
            let _ = writeln!(
                s,
                r##"<line x1="{px0}" x2="{px1}" y1="{0}" y2="{0}" stroke="#eee"/><text x="{1}" y="{2}" text-anchor="end">{3}</text>"##,
                y(v),
                px0 - 6.0,
                y(v) + 4.0,
                label(v, (hi - lo) / 4.0)
            );
            let it = last_iter * t as f64 / 4.0;
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                x(it),
                py1 + 16.0,
                label(it.round(), 5.0)
            );
        }
        let _ = writeln!(
            s,
            r##"<line x1="{px0}" x2="{px1}" y1="{0}" y2="{0}" stroke="#999" stroke-dasharray="4 3"/>"##,
            y(start)
        );
        let mut points = String::new();
        for (i, r) in rows.iter().enumerate() {
            if i % stride == 0 || i + 1 == rows.len() {
                let _ = write!(points, "{:.1},{:.1} ", x(r.iteration as f64), y(r.theta[p]));
            }
        }
        let _ = writeln!(
            s,
            r##"<polyline points="{}" fill="none" stroke="#1f6fb4" stroke-width="1.5"/>"##,
            points.trim_end()
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
        assert_eq!(label(224.44, 0.6), "224.4");
        assert_eq!(label(3.0, 0.125), "3.00");
        let points = out.split("points=\"").nth(1).unwrap();
        let points = &points[..points.find('"').unwrap()];
        assert!(points.split(' ').count() <= MAX_POINTS + 1);
        assert!(!out.contains("NaN"));
    }
}
