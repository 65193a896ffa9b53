//! The self-contained HTML page of `spar status TUNE.csv --html FILE` (and of a cluster
//! tune's run directory): the table of [`super::status`] and one chart per parameter.

use std::fmt::Write;

use super::status::{cells, legend, short, summary, TuneView, HEADS};
use crate::tune::average::{self, Averaged};

/// Points per chart line at most (longer runs are thinned evenly).
const POINTS: usize = 1000;

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
pub(crate) fn chart(v: &TuneView, i: usize, avg: Option<&Averaged>) -> String {
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
