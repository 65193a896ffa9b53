//! A report run's section of its page: the `track!` report of its variants as `spar
//! report` draws it — the summary table with its significance marks and each site's
//! histogram (the HTML report's content, [`crate::report::html::content`]) and the
//! terminal report ([`crate::report::terminal::render`]) —, from the `stats.json` the run
//! wrote. Every text in it is escaped by those renderers or here.

use std::path::Path;

use crate::html::esc;
use crate::report::stats::StatsFile;
use crate::report::{html, terminal};

/// The report's style, scoped to its section (the report's own page styles a whole page).
const STYLE: &str = ".report td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
.report td.site{font-family:monospace}\
.report .sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin-right:4px}\
.report section{border-top:1px solid #ddd;padding:12px 0}\
.report h3 small{color:#777;font-weight:normal;margin-left:8px}\
.report svg .grid{stroke:#ddd;stroke-width:1}.report svg .ylab{font-size:10px;text-anchor:end;fill:#555}\
.report svg .xlab{font-size:10px;text-anchor:end;fill:#444}.report svg .note{font-size:10px;text-anchor:end;fill:#888}\
.report .legend span{margin-right:16px}.report .muted{color:#777}";

/// The section of a served report's page (`Job::served_section`): its statistics from the
/// `stats.json` in `dir`, when written and readable.
pub fn served(id: i64, dir: &Path) -> String {
    let path = dir.join("stats.json");
    if !path.is_file() {
        return String::new();
    }
    StatsFile::read(&path).map_or(String::new(), |f| section(id, &f))
}

/// The report section of run `id`'s page from the statistics it wrote.
pub fn section(id: i64, file: &StatsFile) -> String {
    let mut b = format!(
        "<h2>Report</h2><style>{STYLE}</style><p>The <code>track!</code> sites of each \
         variant (<a href=\"/runs/{id}/files/report.html\">report.html</a>, its table \
         sortable; <a href=\"/runs/{id}/files/stats.json\">stats.json</a>, \
         <a href=\"/runs/{id}/files/stats.csv\">stats.csv</a>):</p>"
    );
    if file.variants.iter().all(|v| v.sites.is_empty()) {
        b.push_str(
            "<p class=\"err\">No site recorded anything: builtin engines record only in a \
             spar built with the <code>track</code> feature, external ones only when they \
             answer the <code>TrackFile</code> option with their statistics.</p>",
        );
    }
    b.push_str("<div class=\"report\" id=\"report\">");
    b.push_str(&html::content(&file.variants));
    b.push_str("</div>");
    b.push_str(&format!(
        "<h3>As <code>spar report</code> prints it</h3><pre id=\"report-text\">{}</pre>",
        esc(&terminal::render(&file.variants))
    ));
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_has_the_table_the_histograms_and_the_text_escaped() {
        let file = crate::report::stats::tests::sample_file();
        let s = section(7, &file);
        assert!(s.contains("id=\"summary\""));
        assert_eq!(s.matches("<svg").count(), 3);
        assert!(s.contains("dev, &quot;quoted&quot;"));
        assert!(!s.contains("\"quoted\""));
        assert!(s.contains("<pre id=\"report-text\">"));
        assert!(!s.contains("<script"));
        assert!(s.contains("/runs/7/files/report.html"));
    }
}
