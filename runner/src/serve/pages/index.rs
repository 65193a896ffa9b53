//! The index: running, queued and finished runs (verdict colours), and the new-run form.

use super::html::{esc, layout};
use super::{rows, LIVE_SCRIPT, TABLE_HEAD};
use crate::serve::db::runs::Run;
use crate::serve::live::Live;

/// What the form had, to show again with its error.
#[derive(Default)]
pub struct FormState {
    pub kind: String,
    pub words: String,
    pub priority: String,
    pub throughput: String,
    pub note: String,
    pub error: Option<String>,
}

/// The index page.
pub fn page(runs: &[(Run, Live)], kinds: &[&str], cores: usize, form: &FormState) -> String {
    let section = |id: &str, title: &str, states: &[&str]| {
        let these: Vec<(Run, Live)> = runs
            .iter()
            .filter(|(r, _)| states.contains(&r.state.as_str()))
            .cloned()
            .collect();
        // An empty section keeps an empty table (hidden until the live script moves a
        // row into it).
        let (none, hidden) = match these.is_empty() {
            true => ("<p>None.</p>", " hidden"),
            false => ("", ""),
        };
        format!(
            "<section id=\"{id}\"><h2>{title}</h2>{none}<div{hidden}>{TABLE_HEAD}{}</table></div>\
             </section>",
            rows(&these)
        )
    };
    let mut body = format!("<p>{cores} cores shared among the running runs.</p>");
    body.push_str(&section("running", "Running", &["running"]));
    body.push_str(&section("queued", "Queued", &["queued"]));
    body.push_str(&section(
        "finished",
        "Finished",
        &["finished", "failed", "stopped"],
    ));
    body.push_str(&form_html(kinds, form));
    layout("Runs", &body, LIVE_SCRIPT)
}

/// The new-run form.
pub fn form_html(kinds: &[&str], form: &FormState) -> String {
    let options: String = kinds
        .iter()
        .map(|k| {
            let sel = if *k == form.kind { " selected" } else { "" };
            format!("<option{sel}>{}</option>", esc(k))
        })
        .collect();
    let error = form.error.as_ref().map_or(String::new(), |e| {
        format!("<p class=\"err\" id=\"error\">{}</p>", esc(e))
    });
    format!(
        "<h2 id=\"new\">New run</h2>{error}<form method=\"post\" action=\"/runs\">\
         <p><label>kind <select name=\"kind\">{options}</select></label></p>\
         <p><label>words (as after <code>spar KIND</code>; quotes keep spaces)<br>\
         <textarea name=\"words\" rows=\"4\" placeholder=\"--engine name=dev option.rfp_margin=60 \
         --engine name=base --each nodes=2000 --elo0 0 --elo1 5\">{words}</textarea></label></p>\
         <p><label>priority <input name=\"priority\" value=\"{priority}\" size=\"6\"></label> \
         <label>throughput <input name=\"throughput\" value=\"{throughput}\" size=\"6\"></label></p>\
         <p><label>note <input name=\"note\" value=\"{note}\" size=\"60\"></label></p>\
         <p><button type=\"submit\">Submit</button></p></form>",
        words = esc(&form.words),
        priority = esc(&form.priority),
        throughput = esc(&form.throughput),
        note = esc(&form.note),
    )
}
