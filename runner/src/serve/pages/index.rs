//! The index: the server's notices (its disk nearly full, runs whose end the database could
//! not record yet), running, queued, waiting for approval (when any) and finished runs
//! (verdict colours; a failed run's reason when it is known, `failed: disk full`), and the
//! new-run form.

use super::html::{esc, layout, Page};
use super::{rows, LIVE_SCRIPT, TABLE_HEAD};
use crate::serve::db::runs::{Run, PENDING};
use crate::serve::form_words::EMBEDDED;
use crate::serve::live::Live;

/// What the form had, to show again with its error.
#[derive(Default)]
pub struct FormState {
    pub kind: String,
    pub words: String,
    pub priority: String,
    pub throughput: String,
    pub note: String,
    /// The engine fields: empty (the words name the engines), `:spar`, or a registered name.
    pub engine: String,
    pub dev_rev: String,
    pub dev_bench: String,
    pub dev_words: String,
    pub base_rev: String,
    pub base_bench: String,
    pub base_words: String,
    pub error: Option<String>,
}

/// What the server has to say above the runs.
#[derive(Default)]
pub struct Notices {
    /// The data directory's free space is under `--min-free` (`Space::banner`).
    pub disk: Option<String>,
    /// Runs whose end the database could not record yet, each with what it will record.
    pub unrecorded: Vec<(i64, String)>,
}

impl Notices {
    /// The notices as HTML (nothing when there are none).
    fn html(&self) -> String {
        let mut out = String::new();
        if let Some(d) = &self.disk {
            out.push_str(&format!("<p class=\"err\" id=\"disk\">{}</p>", esc(d)));
        }
        for (id, what) in &self.unrecorded {
            out.push_str(&format!(
                "<p class=\"err\" id=\"unrecorded-{id}\"><a href=\"/runs/{id}\">Run {id}</a> \
                 {}: the database cannot record it yet (the disk is full); it is recorded once \
                 there is room, and the run is not started again.</p>",
                esc(what)
            ));
        }
        out
    }
}

/// The index page; `engines`: the registered engines' names, for the form.
pub fn page(
    page: &Page,
    runs: &[(Run, Live)],
    kinds: &[&str],
    engines: &[String],
    cores: usize,
    form: &FormState,
    notices: &Notices,
) -> String {
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
    let mut body = notices.html();
    body.push_str(&format!(
        "<p>{cores} cores shared among the running runs.</p>"
    ));
    body.push_str(&section("running", "Running", &["running"]));
    body.push_str(&section("queued", "Queued", &["queued"]));
    if runs.iter().any(|(r, _)| r.state == PENDING) {
        body.push_str(&section(
            "waiting",
            "Waiting for approval",
            &[PENDING.as_str()],
        ));
    }
    body.push_str(&section(
        "finished",
        "Finished",
        &["finished", "failed", "stopped"],
    ));
    body.push_str(&form_html(page, kinds, engines, form));
    layout(page, "Runs", &body, LIVE_SCRIPT)
}

/// The new-run form: the kind, the engine fields (OpenBench's dev and base), the words,
/// the priority, the throughput and the note.
pub fn form_html(page: &Page, kinds: &[&str], engines: &[String], form: &FormState) -> String {
    let csrf = page.csrf_field();
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
        "<h2 id=\"new\">New run</h2>{error}<form method=\"post\" action=\"/runs\">{csrf}\
         <p><label>kind <select name=\"kind\">{options}</select></label></p>\
         {engine_fields}\
         <p><label>words (as after <code>spar KIND</code>; quotes keep spaces)<br>\
         <textarea name=\"words\" rows=\"4\" placeholder=\"--engine name=dev option.rfp_margin=60 \
         --engine name=base --each nodes=2000 --elo0 0 --elo1 5\">{words}</textarea></label></p>\
         <p><label>priority <input name=\"priority\" value=\"{priority}\" size=\"6\"></label> \
         <label>throughput <input name=\"throughput\" value=\"{throughput}\" size=\"6\"></label></p>\
         <p><label>note <input name=\"note\" value=\"{note}\" size=\"60\"></label></p>\
         <p><button type=\"submit\">Submit</button></p></form>",
        engine_fields = engine_fields(engines, form),
        words = esc(&form.words),
        priority = esc(&form.priority),
        throughput = esc(&form.throughput),
        note = esc(&form.note),
    )
}

/// The engine fields: the engine (the words name them, spar's embedded engine, or a
/// registered one), and for dev and base the revision, the bench and the side's own words.
fn engine_fields(engines: &[String], form: &FormState) -> String {
    let mut choices = vec![
        (String::new(), "engines in the words".to_string()),
        (
            EMBEDDED.to_string(),
            "spar (embedded, no revision)".to_string(),
        ),
    ];
    choices.extend(engines.iter().map(|e| (e.clone(), e.clone())));
    let options: String = choices
        .iter()
        .map(|(value, text)| {
            let sel = if *value == form.engine {
                " selected"
            } else {
                ""
            };
            format!(
                "<option value=\"{}\"{sel}>{}</option>",
                esc(value),
                esc(text)
            )
        })
        .collect();
    let side = |side: &str, rev: &str, bench: &str, words: &str| {
        format!(
            "<p>{side}: <label>revision <input name=\"{side}_rev\" value=\"{}\" size=\"20\" \
             placeholder=\"branch, tag or sha\"></label> \
             <label>bench <input name=\"{side}_bench\" value=\"{}\" size=\"10\"></label> \
             <label>its words <input name=\"{side}_words\" value=\"{}\" size=\"30\" \
             placeholder=\"option.Hash=16\"></label></p>",
            esc(rev),
            esc(bench),
            esc(words),
        )
    };
    format!(
        "<fieldset id=\"engine-fields\"><legend>engines (dev against base)</legend>\
         <p><label>engine <select name=\"engine\">{options}</select></label> \
         (<a href=\"/engines\">register one</a>; \"engines in the words\": \
         the words carry the <code>--engine</code>s)</p>{dev}{base}</fieldset>",
        dev = side("dev", &form.dev_rev, &form.dev_bench, &form.dev_words),
        base = side("base", &form.base_rev, &form.base_bench, &form.base_words),
    )
}
