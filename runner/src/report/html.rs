//! The HTML form of a report: one self-contained page (inline CSS, SVG and a few lines of
//! script; nothing is fetched) with a sortable summary table and, per site, an SVG histogram
//! with the variants overlaid.

use std::fmt::Write;

use super::bins::Scale;
use super::compare::{self, Test};
use super::stats::{SiteStats, VariantStats};
use super::terminal::{group_digits, histograms, labels, real};
use crate::html::chart::{self, open};
use crate::html::esc;

/// Colours of the variants: the charts' first four.
const COLOURS: &[&str] = chart::COLOURS.split_at(4).0;

fn num_cell(value: f64, text: &str) -> String {
    let key = if value.is_finite() {
        value.to_string()
    } else {
        String::new()
    };
    format!("<td class=\"n\" data-v=\"{key}\">{}</td>", esc(text))
}

fn test_cells(t: Option<Test>, diff_text: String) -> String {
    match t {
        Some(t) => format!(
            "{}{}",
            num_cell(t.diff, &format!("{diff_text}{}", t.stars())),
            num_cell(t.p, &format!("{:.4}", t.p))
        ),
        None => format!(
            "{}{}",
            num_cell(f64::NAN, &diff_text),
            num_cell(f64::NAN, "-")
        ),
    }
}

/// An SVG histogram of one site, variants overlaid (fractions of each variant's records).
fn svg(sites: &[Option<&SiteStats>], names: &[&str]) -> String {
    let (scale, bins, fractions) = histograms(sites);
    let (w, h, left, bottom, top_pad) = (760.0, 220.0, 52.0, 64.0, 12.0);
    let plot_w = w - left - 12.0;
    let plot_h = h - bottom - top_pad;
    let top = fractions
        .iter()
        .flat_map(|f| f.iter().copied())
        .fold(0.0, f64::max)
        .max(1e-12);
    let n = bins.len().max(1) as f64;
    let bw = plot_w / n;
    let mut s = open(None, w, h, " role=\"img\"", None);
    // Axes and gridlines at 0, 50 and 100 % of the tallest bar.
    for k in 0..=2 {
        let frac = top * k as f64 / 2.0;
        let y = top_pad + plot_h - plot_h * k as f64 / 2.0;
        let _ = write!(
            s,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"ylab\">{:.1}%</text>",
            left + plot_w,
            left - 4.0,
            y + 3.5,
            100.0 * frac
        );
    }
    for (vi, f) in fractions.iter().enumerate() {
        let colour = COLOURS[vi % COLOURS.len()];
        for (i, &frac) in f.iter().enumerate() {
            if frac <= 0.0 {
                continue;
            }
            let bh = (plot_h * frac / top).max(1.0);
            let x = left + i as f64 * bw;
            // The first variant filled, the others as outlines over it.
            let (fill, stroke) = if vi == 0 { (0.55, 0.8) } else { (0.12, 2.0) };
            let _ = write!(
                s,
                "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{bh:.2}\" fill=\"{colour}\" fill-opacity=\"{fill}\" \
                 stroke=\"{colour}\" stroke-width=\"{stroke}\"><title>{} {}: {:.2}%</title></rect>",
                x + 0.5,
                top_pad + plot_h - bh,
                (bw - 1.0).max(0.5),
                esc(names[vi]),
                esc(&bins[i].label()),
                100.0 * frac
            );
        }
    }
    // X labels: at most ~24, rotated.
    let step = (bins.len() as f64 / 24.0).ceil().max(1.0) as usize;
    for (i, b) in bins.iter().enumerate().step_by(step) {
        let x = left + (i as f64 + 0.5) * bw;
        let y = top_pad + plot_h + 10.0;
        let _ = write!(
            s,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" class=\"xlab\" transform=\"rotate(-40 {x:.1} {y:.1})\">{}</text>",
            esc(&b.label())
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"note\">{}</text></svg>",
        left + plot_w,
        h - 4.0,
        match scale {
            Scale::Exact => "one bin per value",
            Scale::Log2 => "bins: powers of 2 on each side of 0",
        }
    );
    s
}

const STYLE: &str = "
body { font: 14px/1.4 system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin-top: 28px; }
h3 { font-size: 15px; margin: 0 0 6px; font-family: ui-monospace, monospace; }
h3 small { color: #777; font-weight: normal; margin-left: 8px; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { padding: 2px 8px; border-bottom: 1px solid #e4e4e4; }
th { background: #f4f4f4; text-align: left; }
#summary th { cursor: pointer; user-select: none; }
#summary th:hover { background: #e6eef8; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { white-space: nowrap; }
td.site { font-family: ui-monospace, monospace; }
.sw { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; margin-right: 4px; }
section { border-top: 1px solid #ddd; padding: 12px 0; }
svg .grid { stroke: #ddd; stroke-width: 1; } svg .ylab { font-size: 10px; text-anchor: end; fill: #555; }
svg .xlab { font-size: 10px; text-anchor: end; fill: #444; } svg .note { font-size: 10px; text-anchor: end; fill: #888; }
.legend span { margin-right: 16px; } .muted { color: #777; }
";

const SCRIPT: &str = "
document.querySelectorAll('#summary th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = document.querySelector('#summary tbody');
    var rows = Array.prototype.slice.call(body.rows);
    var asc = th.dataset.dir !== 'asc';
    document.querySelectorAll('#summary th').forEach(function (h) { delete h.dataset.dir; });
    th.dataset.dir = asc ? 'asc' : 'desc';
    rows.sort(function (a, b) {
      var x = a.cells[col], y = b.cells[col];
      var u = x.dataset.v, v = y.dataset.v;
      var r;
      if (u !== undefined && v !== undefined) {
        var p = u === '' ? -Infinity : parseFloat(u), q = v === '' ? -Infinity : parseFloat(v);
        r = p < q ? -1 : p > q ? 1 : 0;
      } else {
        r = x.textContent.localeCompare(y.textContent);
      }
      return asc ? r : -r;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
";

/// The whole page.
pub fn render(variants: &[VariantStats], title: &str) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n",
        esc(title)
    );
    let _ = writeln!(s, "<h1>{}</h1>", esc(title));
    s.push_str(&content(variants));
    let _ = write!(s, "<script>{SCRIPT}</script>\n</body></html>\n");
    s
}

/// The page's content without its head, title and script (for a page that embeds it, as
/// `spar serve`'s report run page does): the legend, the summary table with its
/// significance marks, and each site's histogram. Every text in it is escaped.
pub fn content(variants: &[VariantStats]) -> String {
    let labels = labels(variants);
    let mut s = String::new();
    let _ = write!(s, "<p class=\"legend\">");
    for (i, v) in variants.iter().enumerate() {
        let _ = write!(
            s,
            "<span><span class=\"sw\" style=\"background:{}\"></span>{}{}</span>",
            COLOURS[i % COLOURS.len()],
            esc(&v.name),
            if v.games > 0 {
                format!(" <span class=\"muted\">({} games)</span>", v.games)
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(s, "<span class=\"muted\">{} sites</span></p>", labels.len());
    if variants.len() >= 2 {
        let _ = writeln!(
            s,
            "<p class=\"muted\">Δ = {} − {}; Welch's t-test with games as the independent units: \
             * p &lt; 0.05, ** p &lt; 0.01, *** p &lt; 0.001. Histograms show each variant's share of its records.</p>",
            esc(&variants[1].name),
            esc(&variants[0].name)
        );
    }

    // Summary table.
    let _ = write!(
        s,
        "<h2>Summary</h2><table id=\"summary\"><thead><tr><th>site</th><th>variant</th><th>N</th><th>N/game</th>\
         <th>μ</th><th>|μ|</th><th>σ</th><th>LO</th><th>HI</th>"
    );
    if variants.len() >= 2 {
        s.push_str("<th>Δ N/game</th><th>p</th><th>Δ μ</th><th>p</th>");
    }
    s.push_str("</tr></thead><tbody>\n");
    for label in &labels {
        let cmp =
            (variants.len() >= 2).then(|| compare::compare(label, &variants[0], &variants[1]));
        for (vi, v) in variants.iter().enumerate() {
            let site = v.site(label);
            let per_game = compare::per_game_count(site, v.games).map(|e| e.value);
            let _ = write!(
                s,
                "<tr><td class=\"site\"><a href=\"#site-{}\">{}</a></td><td><span class=\"sw\" style=\"background:{}\"></span>{}</td>",
                anchor(label),
                esc(label),
                COLOURS[vi % COLOURS.len()],
                esc(&v.name)
            );
            let count = site.map_or(0, |x| x.count);
            s.push_str(&num_cell(count as f64, &group_digits(count)));
            s.push_str(&num_cell(
                per_game.unwrap_or(f64::NAN),
                &per_game.map_or("-".into(), real),
            ));
            match site {
                Some(x) => {
                    s.push_str(&num_cell(x.mean, &real(x.mean)));
                    s.push_str(&num_cell(x.mean_abs, &real(x.mean_abs)));
                    s.push_str(&num_cell(x.stddev, &real(x.stddev)));
                    s.push_str(&num_cell(x.min as f64, &x.min.to_string()));
                    s.push_str(&num_cell(x.max as f64, &x.max.to_string()));
                }
                None => {
                    for _ in 0..5 {
                        s.push_str(&num_cell(f64::NAN, "-"));
                    }
                }
            }
            if let Some(c) = &cmp {
                let pg_text = match (c.per_game_ratio, c.per_game) {
                    (Some(r), _) => format!("{:+.1}%", 100.0 * r),
                    (None, Some(t)) => format!("{:+}", real(t.diff)),
                    _ => "-".into(),
                };
                s.push_str(&test_cells(c.per_game, pg_text));
                let mu_text = c.mean.map_or("-".into(), |t| {
                    let r = real(t.diff);
                    if t.diff >= 0.0 {
                        format!("+{r}")
                    } else {
                        r
                    }
                });
                s.push_str(&test_cells(c.mean, mu_text));
            }
            s.push_str("</tr>\n");
        }
    }
    s.push_str("</tbody></table>\n<h2>Sites</h2>\n");

    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    for label in &labels {
        let sites: Vec<Option<&SiteStats>> = variants.iter().map(|v| v.site(label)).collect();
        let location = sites
            .iter()
            .flatten()
            .map(|x| x.location.as_str())
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let _ = writeln!(
            s,
            "<section id=\"site-{}\"><h3>{}<small>{}</small></h3>{}</section>",
            anchor(label),
            esc(label),
            esc(location),
            svg(&sites, &names)
        );
    }
    s
}

/// An id-safe form of a label.
fn anchor(label: &str) -> String {
    label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_is_self_contained_and_escaped() {
        let file = crate::report::stats::tests::sample_file();
        let page = render(&file.variants, "spar <report>");
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<title>spar &lt;report&gt;</title>"));
        assert!(page.contains("dev, &quot;quoted&quot;"));
        assert_eq!(page.matches("<svg").count(), 3);
        assert!(page.contains("id=\"summary\""));
        assert!(page.contains("<rect"));
        for external in ["src=", "href=\"http", "@import", "url("] {
            assert!(!page.contains(external), "{external}");
        }
        assert_eq!(anchor("rfp/margin x"), "rfp-margin-x");
    }
}
