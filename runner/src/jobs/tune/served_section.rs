//! A tune run's section of its page: the status of `spar status tune.csv` (the same
//! [`TuneView`], the same cells), every parameter's trajectory as inline SVG — all of them
//! together in units of c_end (θ − start) / c_end, as fishtest #2181 plots them, and one
//! chart each in absolute units with c_end on the right axis (the status page's chart) —,
//! the signal/noise verdicts, the averaged values, `tuned.txt` and the verification SPRT's
//! verdict when there is one.

use std::any::Any;
use std::fmt::Write;
use std::path::Path;

use super::status::{cells, legend, summary, TuneView, HEADS};
use super::status_page::chart;
use crate::html::chart::{open, thinned, Area, Plot, Range, COLOURS};
use crate::html::esc;
use crate::tune::average;

/// Points per line at most (longer runs are thinned evenly).
const POINTS: usize = 1000;
const W: f64 = 720.0;
const H: f64 = 260.0;
/// The plot's area: the labels left, the legend inside at the top, iterations below.
const AREA: Area = Area::inset(W, H, 56.0, 30.0, 16.0, 30.0);

/// The most bytes of `tuned.txt` shown.
const MAX_TUNED: u64 = 64 * 1024;

/// The section of a served tune's page (`Job::served_section`): its trajectories from the
/// view the run cache keeps (nothing when `view` is no tune's), and its `tuned.txt` in `dir`
/// when written.
pub fn served(dir: &Path, view: Option<&(dyn Any + Send + Sync)>) -> String {
    let Some(v) = view.and_then(|v| v.downcast_ref::<TuneView>()) else {
        return String::new();
    };
    section(v, tuned(dir).as_deref())
}

/// A tune run's `tuned.txt` (`None`: not written yet, not a regular file, or too long).
fn tuned(dir: &Path) -> Option<String> {
    let path = dir.join("tuned.txt");
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_TUNED {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The tune section of a run page from the tune's view and its `tuned.txt` (when
/// written).
pub fn section(v: &TuneView, tuned: Option<&str>) -> String {
    let avg = average::average(&v.rows);
    let mut b = String::from(
        "<h2>Tune</h2><style>#tune-params .signal{color:#080;font-weight:600}\
         #tune-params .at-bound{color:#b00;font-weight:600}</style>",
    );
    let _ = write!(
        b,
        "<pre id=\"tune-summary\">{}</pre>",
        esc(&summary(v).join("\n"))
    );
    let verification = v
        .extra_lines
        .iter()
        .find(|l| l.starts_with("Verification SPRT"));
    let _ = write!(
        b,
        "<p id=\"verification\">{}</p>",
        verification.map_or("No verification SPRT (yet).".to_string(), |l| esc(l))
    );
    b.push_str("<table id=\"tune-params\"><tr>");
    for h in HEADS {
        let _ = write!(b, "<th>{}</th>", esc(h));
    }
    b.push_str("</tr>");
    for c in cells(v, avg.as_ref()) {
        let _ = write!(b, "<tr data-param=\"{}\">", esc(&c.name));
        for (cell, field) in [
            (&c.name, "name"),
            (&c.start, "start"),
            (&c.current, "current"),
            (&c.min, "min"),
            (&c.max, "max"),
            (&c.delta, "delta"),
            (&c.average, "average"),
            (&c.error, "error"),
            (&c.moved, "moved"),
            (&c.walk, "walk"),
            (&c.z, "z"),
        ] {
            let _ = write!(b, "<td data-c=\"{field}\">{}</td>", esc(cell));
        }
        let _ = write!(
            b,
            "<td data-c=\"verdict\" class=\"{}\">{}</td></tr>",
            c.verdict.replace(' ', "-"),
            esc(c.verdict)
        );
    }
    b.push_str("</table>");
    match &avg {
        Some(a) => {
            let _ = write!(
                b,
                "<p>The averaged (final) values: θ over {}, ± a 95 % batch-means error \
                 (the column <em>average</em>; the shaded band in the charts).</p>",
                esc(&a.window())
            );
        }
        None => b.push_str("<p>No averaged values yet (no iteration done).</p>"),
    }
    let _ = write!(b, "<p>{}</p>", esc(&legend(v)));
    if let Some(t) = tuned {
        let _ = write!(
            b,
            "<p>The tuned values the run wrote (<code>tuned.txt</code>):</p><pre id=\"tuned\">{}</pre>",
            esc(t)
        );
    }
    b.push_str("<h3>Trajectories in units of c_end</h3>");
    b.push_str(&c_end_chart(v));
    b.push_str("<h3>Trajectories in absolute units</h3>");
    for i in 0..v.params.len() {
        b.push_str(&chart(v, i, avg.as_ref()));
    }
    b
}

/// Every parameter's (θ − start) / c_end over the iterations, in one chart.
pub fn c_end_chart(v: &TuneView) -> String {
    let last = v.done().max(1) as f64;
    let units = |i: usize, t: f64| (t - v.params[i].start) / v.params[i].c_end;
    let mut y = Range::new(-1.0, 1.0);
    for r in &v.rows {
        for (i, t) in r.theta.iter().enumerate().take(v.params.len()) {
            let u = units(i, *t);
            if u.is_finite() {
                y = y.with(u);
            }
        }
    }
    let plot = Plot {
        area: AREA,
        x: Range::new(0.0, last),
        y: y.padded(0.05),
    };
    let Area { x0, y0, y1, .. } = plot.area;
    let mut s = open(
        Some("c-end"),
        W,
        H,
        r#" role="img" font-family="sans-serif""#,
        Some("(θ − start) / c_end per iteration"),
    );
    s.push_str(&plot.area.frame("#fafafa", "#999"));
    for (u, it) in plot.y.ticks(4).zip(plot.x.ticks(4)) {
        let _ = write!(
            s,
            r##"{}<text x="{}" y="{:.1}" text-anchor="end" font-size="11">{u:.2}</text><text x="{:.1}" y="{}" text-anchor="middle" font-size="11">{}</text>"##,
            plot.rule(u, r##"stroke="#eee""##),
            x0 - 4.0,
            plot.py(u) + 4.0,
            plot.px(it),
            y1 + 16.0,
            it.round()
        );
    }
    s.push_str(&plot.rule(0.0, r##"stroke="#666" stroke-dasharray="6 4""##));
    for (i, p) in v.params.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let line = thinned(&v.rows, POINTS).filter_map(|r| {
            let u = units(i, *r.theta.get(i)?);
            u.is_finite().then_some((r.iteration as f64, u))
        });
        let _ = write!(
            s,
            r##"<polyline data-param="{n}" points="{}" fill="none" stroke="{colour}" stroke-width="1.5"><title>{n} (c_end = {c})</title></polyline><text x="{}" y="{}" font-size="12" fill="{colour}">{n}</text>"##,
            plot.points(line),
            x0 + 6.0 + 120.0 * (i % 5) as f64,
            y0 + 14.0 + 14.0 * (i / 5) as f64,
            n = esc(&p.name),
            c = super::status::short(p.c_end),
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::spsa_params::SpsaParam;
    use crate::tune::trajectory::Row;

    fn view() -> TuneView {
        let param = |name: &str, c_end: f64| SpsaParam {
            name: name.into(),
            start: 100.0,
            min: 0.0,
            max: 400.0,
            c_end,
            r_end: 0.002,
        };
        let rows = (0..=8u64)
            .map(|k| Row {
                iteration: k,
                games: 4 * k,
                theta: vec![100.0 + k as f64, 100.0 - 0.5 * k as f64],
                c: None,
                r: None,
            })
            .collect();
        TuneView {
            title: "Tune <t>.csv".into(),
            params: vec![param("a<b", 4.0), param("c", 2.0)],
            rows,
            iterations: 8,
            pairs_per_iteration: 2,
            games_per_second: None,
            eta_seconds: None,
            extra_lines: vec!["Verification SPRT tuned vs start: passed (H1: <x>)".into()],
            live: false,
        }
    }

    #[test]
    fn the_section_has_both_units_the_verdicts_and_the_verification() {
        let v = view();
        let s = section(&v, Some("a<b, 108\n"));
        // One chart in c_end units, one per parameter in absolute units.
        assert_eq!(s.matches("<svg").count(), 3);
        assert!(s.contains("id=\"c-end\""));
        assert!(s.contains("a&lt;b") && !s.contains("a<b"));
        assert!(s.contains("passed (H1: &lt;x&gt;)"));
        assert!(s.contains("<pre id=\"tuned\">a&lt;b, 108\n</pre>"));
        // θ of a moved 8 from 100 with c_end 4: +2.00 c_end; c moved −4 with c_end 2.
        assert!(s.contains("<td data-c=\"delta\">+2.00</td>"), "{s}");
        assert!(s.contains("<td data-c=\"delta\">-2.00</td>"), "{s}");
        assert!(s.contains("<td data-c=\"current\">108.00</td>"));
        for external in ["src=", "href=", "<script"] {
            assert!(!s.contains(external), "{external}");
        }
    }

    #[test]
    fn the_c_end_chart_draws_every_iteration_of_every_parameter() {
        let s = c_end_chart(&view());
        assert_eq!(s.matches("<polyline").count(), 2);
        let points = s
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(points.split(' ').count(), 9);
        assert!(!s.contains("NaN") && !s.contains("inf"));
    }
}
