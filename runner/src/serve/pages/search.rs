//! The search: filters in the URL (`/search?kind=sprt&state=finished&q=rfp`), so a search
//! can be shared.

use super::html::{esc, layout};
use super::{rows, LIVE_SCRIPT, TABLE_HEAD};
use crate::serve::db::runs::{Filter, Run, STATES};
use crate::serve::live::Live;

/// The search page.
pub fn page(f: &Filter, kinds: &[&str], runs: &[(Run, Live)]) -> String {
    let select = |name: &str, values: &[&str], chosen: Option<&str>| {
        let mut s = format!("<select name=\"{name}\"><option value=\"\">any</option>");
        for v in values {
            let sel = if Some(*v) == chosen { " selected" } else { "" };
            s.push_str(&format!("<option{sel}>{}</option>", esc(v)));
        }
        s + "</select>"
    };
    let mut body = format!(
        "<form method=\"get\" action=\"/search\"><label>kind {}</label> \
         <label>state {}</label> <label>text <input name=\"q\" value=\"{}\"></label> \
         <button type=\"submit\">Search</button></form>",
        select("kind", kinds, f.kind.as_deref()),
        select("state", STATES, f.state.as_deref()),
        esc(f.q.as_deref().unwrap_or("")),
    );
    if runs.is_empty() {
        body.push_str("<p>No run matches.</p>");
    } else {
        body.push_str(&format!(
            "<p>{} run{}.</p>{TABLE_HEAD}{}</table>",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" },
            rows(runs)
        ));
    }
    layout("Search", &body, LIVE_SCRIPT)
}
