//! The search: filters in the URL (`/search?kind=sprt&verdict=H1&engine=stash&q=rfp`), so
//! a search can be shared.

use super::html::{esc, layout, Page};
use super::{rows, LIVE_SCRIPT, TABLE_HEAD};
use crate::serve::db::runs::{Filter, Run, STATES, VERDICTS};
use crate::serve::live::Live;

/// The search page: the form with the filter `f` filled in, then the runs that match, or
/// the `error` of a bad filter.
pub fn page(
    page: &Page,
    f: &Filter,
    kinds: &[&str],
    engines: &[String],
    runs: &[(Run, Live)],
    error: Option<&str>,
) -> String {
    let select = |name: &str, values: &[&str], chosen: Option<&str>| {
        let mut s = format!("<select name=\"{name}\"><option value=\"\">any</option>");
        for v in values {
            let sel = if Some(*v) == chosen { " selected" } else { "" };
            s.push_str(&format!("<option{sel}>{}</option>", esc(v)));
        }
        s + "</select>"
    };
    let text = |name: &str, label: &str, value: &Option<String>, extra: &str| {
        format!(
            "<label>{label} <input name=\"{name}\" value=\"{}\"{extra}></label> ",
            esc(value.as_deref().unwrap_or(""))
        )
    };
    let engine_names: Vec<&str> = engines.iter().map(String::as_str).collect();
    let mut body = format!(
        "<form method=\"get\" action=\"/search\"><label>kind {}</label> \
         <label>state {}</label> <label>verdict {}</label> <label>engine {}</label> \
         {}{}{}{}{}<button type=\"submit\">Search</button></form>",
        select("kind", kinds, f.kind.as_deref()),
        select("state", STATES, f.state.as_deref()),
        select("verdict", VERDICTS, f.verdict.as_deref()),
        select("engine", &engine_names, f.engine.as_deref()),
        text(
            "branch",
            "branch",
            &f.branch,
            " size=\"12\" placeholder=\"branch, tag or sha\""
        ),
        text("author", "author", &f.author, " size=\"10\""),
        text("from", "from", &f.from, " type=\"date\""),
        text("to", "to", &f.to, " type=\"date\""),
        text(
            "q",
            "text",
            &f.q,
            " placeholder=\"in the words or the note\""
        ),
    );
    if let Some(e) = error {
        body.push_str(&format!("<p class=\"err\">{}</p>", esc(e)));
    } else if runs.is_empty() {
        body.push_str("<p>No run matches.</p>");
    } else {
        body.push_str(&format!(
            "<p>{} run{}.</p>{TABLE_HEAD}{}</table>",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" },
            rows(runs)
        ));
    }
    layout(page, "Search", &body, LIVE_SCRIPT)
}
