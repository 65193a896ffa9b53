//! The self-contained HTML page of `spar status TUNE.csv --html FILE` (and of a cluster
//! tune's run directory): the table of [`super::status`] and one chart per parameter.

use std::fmt::Write;

use super::status::{cells, legend, short, summary, TuneView, HEADS};
use crate::html::chart::{self, Area, Plot, Range};
use crate::html::esc;
use crate::tune::average::{self, Averaged};

/// Points per chart line at most (longer runs are thinned evenly).
const POINTS: usize = 1000;

const W: f64 = 720.0;
const H: f64 = 240.0;
/// The plot's area: the θ labels left, c_end's right, the title above, iterations below.
const AREA: Area = Area::inset(W, H, 64.0, 34.0, 64.0, 30.0);

/// The chart of parameter `i`: θ over the iterations (left axis), the same line read in
/// units of c_end from the start (right axis), the start dashed, the averaging window's
/// mean ± error shaded, and min/max where they fall inside the view.
pub(crate) fn chart(v: &TuneView, i: usize, avg: Option<&Averaged>) -> String {
    let p = &v.params[i];
    let rows = &v.rows;
    let last = v.done().max(1) as f64;
    let mut y = Range::of(rows.iter().map(|r| r.theta[i])).with(p.start);
    let band = avg.and_then(|a| a.error[i].map(|e| (a.from, a.mean[i] - e, a.mean[i] + e)));
    if let Some((_, b0, b1)) = band {
        y = y.with(b0).with(b1);
    }
    // At least ±c_end around the start, so that noise of a fraction of c_end looks small.
    y = y.with(p.start - p.c_end).with(p.start + p.c_end);
    let plot = Plot {
        area: AREA,
        x: Range::new(0.0, last),
        y: y.padded(0.05),
    };
    let Area { x0, x1, y1, .. } = plot.area;
    let (lo, hi) = (plot.y.lo, plot.y.hi);
    let title = format!(
        "{}: θ (left), (θ − start) / c_end with c_end = {} (right)",
        p.name,
        short(p.c_end)
    );
    let mut s = chart::open(
        None,
        W,
        H,
        r#" role="img" font-family="sans-serif""#,
        Some(&title),
    );
    let _ = write!(
        s,
        r##"<text x="{}" y="20" text-anchor="middle" font-size="14">{}</text>{}"##,
        W / 2.0,
        esc(&title),
        plot.area.frame("#fafafa", "#999")
    );
    let step = (hi - lo) / 4.0;
    for (y, it) in plot.y.ticks(4).zip(plot.x.ticks(4)) {
        let units = (y - p.start) / p.c_end;
        let _ = write!(
            s,
            r##"{}<text x="{}" y="{:.1}" text-anchor="end" font-size="11">{}</text><text x="{}" y="{:.1}" font-size="11" fill="#555">{}</text>"##,
            plot.rule(y, r##"stroke="#eee""##),
            x0 - 4.0,
            plot.py(y) + 4.0,
            chart::tick(y, step),
            x1 + 4.0,
            plot.py(y) + 4.0,
            chart::tick(units, step / p.c_end),
        );
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{}" text-anchor="middle" font-size="11">{}</text>"##,
            plot.px(it),
            y1 + 16.0,
            it.round()
        );
    }
    s.push_str(&plot.area.clip(&format!("clip-tune-{i}")));
    if let Some((from, b0, b1)) = band {
        let _ = write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#9ecae1" fill-opacity="0.5"><title>average {:.2} ± {:.2}</title></rect>"##,
            plot.px(from as f64),
            plot.py(b1),
            (plot.px(last) - plot.px(from as f64)).max(1.0),
            (plot.py(b0) - plot.py(b1)).max(1.0),
            (b0 + b1) / 2.0,
            (b1 - b0) / 2.0
        );
    }
    for (bound, word) in [(p.min, "min"), (p.max, "max")] {
        if bound >= lo && bound <= hi {
            let _ = write!(
                s,
                r##"{}<text x="{}" y="{:.1}" font-size="11" fill="#b00">{word} {}</text>"##,
                plot.rule(bound, r##"stroke="#b00""##),
                x0 + 4.0,
                plot.py(bound) - 3.0,
                short(bound)
            );
        }
    }
    s.push_str(&plot.rule(p.start, r##"stroke="#666" stroke-dasharray="6 4""##));
    let _ = write!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#08519c" stroke-width="1.5"/></g></svg>"##,
        plot.points(chart::thinned(rows, POINTS).map(|r| (r.iteration as f64, r.theta[i])))
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
