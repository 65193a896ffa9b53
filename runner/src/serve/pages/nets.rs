//! The nets page (each net: name, sha, size, uploader, date, the engines it is the default
//! of, the runs that used it; the upload form, the default-net form, a remove button per
//! net) and the run page's section on the nets its sides used.

use super::html::{esc, layout, time, Page};
use crate::serve::db::nets::{Net, RunNet};
use crate::serve::nets::EMBEDDED;

/// A net as the page and the API show it: the row, the engines it is the default of, and
/// the runs that used its file.
pub struct Listed {
    pub net: Net,
    pub default_for: Vec<String>,
    pub runs: Vec<i64>,
}

/// What the page's forms had, to show again with a refusal.
#[derive(Default)]
pub struct NetsForm {
    pub name: String,
    pub engine: String,
    pub error: Option<String>,
}

/// The first 12 characters of a sha.
pub fn short(sha: &str) -> &str {
    &sha[..12.min(sha.len())]
}

fn engine_options(engines: &[String], chosen: &str) -> String {
    std::iter::once(EMBEDDED.to_string())
        .chain(engines.iter().cloned())
        .map(|e| {
            let sel = if e == chosen { " selected" } else { "" };
            let text = if e == EMBEDDED {
                "embedded (spar's own engine)".to_string()
            } else {
                esc(&e)
            };
            format!("<option value=\"{v}\"{sel}>{text}</option>", v = esc(&e))
        })
        .collect()
}

/// The nets page. `engines`: the registered engines' names; the session's CSRF token goes
/// in the upload form's action too (a multipart form's token travels in the query).
pub fn page(page: &Page, nets: &[Listed], engines: &[String], form: &NetsForm) -> String {
    let csrf = page.csrf_field();
    let mut b = String::from(
        "<p>A run uses a net by name in an engine's words: <code>--engine name=dev \
         net=NAME</code> (the server gives the engine <code>option.EvalFile=</code> of the \
         stored file); a side that names no net gets its engine's default net. A net a run \
         used is never removed.</p>",
    );
    if let Some(e) = &form.error {
        b.push_str(&format!("<p class=\"err\" id=\"error\">{}</p>", esc(e)));
    }
    if nets.is_empty() {
        b.push_str("<p>No net is uploaded.</p>");
    } else {
        b.push_str(
            "<table id=\"nets\"><tr><th>name</th><th>sha256</th><th>size</th><th>engine</th>\
             <th>uploaded by</th><th>date</th><th>default of</th><th>runs</th><th></th></tr>",
        );
        for l in nets {
            let n = &l.net;
            let runs: Vec<String> = l
                .runs
                .iter()
                .map(|id| format!("<a href=\"/runs/{id}\">{id}</a>"))
                .collect();
            b.push_str(&format!(
                "<tr id=\"net-{name}\"><td>{name}</td><td><code title=\"{sha}\">{short}</code>\
                 </td><td>{size}</td><td>{engine}</td><td>{by}</td><td>{date} UTC</td>\
                 <td class=\"default\">{default}</td><td class=\"runs\">{runs}</td><td>\
                 <form method=\"post\" action=\"/nets/{name}/remove\">{csrf}\
                 <button type=\"submit\">Remove</button></form></td></tr>",
                name = esc(&n.name),
                sha = esc(&n.sha),
                short = esc(short(&n.sha)),
                size = n.size,
                engine = esc(&n.engine),
                by = esc(n.uploader.as_deref().unwrap_or("–")),
                date = time(Some(n.created)),
                default = esc(&l.default_for.join(", ")),
                runs = if runs.is_empty() {
                    "–".into()
                } else {
                    runs.join(" ")
                },
            ));
        }
        b.push_str("</table>");
    }
    let action = match page.csrf() {
        Some(c) => format!("/nets?csrf={}", esc(c)),
        None => "/nets".into(),
    };
    b.push_str(&format!(
        "<h2 id=\"upload\">Upload a net</h2>\
         <form method=\"post\" action=\"{action}\" enctype=\"multipart/form-data\">{csrf}\
         <p><label>name <input name=\"name\" value=\"{name}\" size=\"30\"></label></p>\
         <p><label>engine <select name=\"engine\">{options}</select></label></p>\
         <p><label>file <input type=\"file\" name=\"file\"></label></p>\
         <p><button type=\"submit\">Upload</button></p></form>",
        name = esc(&form.name),
        options = engine_options(engines, &form.engine),
    ));
    let choices: String = std::iter::once("<option value=\"\">none</option>".to_string())
        .chain(
            nets.iter()
                .map(|l| format!("<option value=\"{n}\">{n}</option>", n = esc(&l.net.name))),
        )
        .collect();
    b.push_str(&format!(
        "<h2 id=\"default\">Default net of an engine</h2>\
         <p>An approver or admin sets it; a run of that engine that names no net gets it.</p>\
         <form method=\"post\" action=\"/nets/default\">{csrf}\
         <label>engine <select name=\"engine\">{options}</select></label> \
         <label>net <select name=\"net\">{choices}</select></label> \
         <button type=\"submit\">Set</button></form>",
        options = engine_options(engines, ""),
    ));
    layout(page, "Nets", &b, "")
}

/// The run page's section on the nets its sides used.
pub fn run_section(rows: &[RunNet]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut b = String::from(
        "<h2>Nets</h2><table id=\"run-nets\"><tr><th>engine</th><th>net</th><th>sha256</th>\
         <th>how</th></tr>",
    );
    for r in rows {
        b.push_str(&format!(
            "<tr><td>{variant}</td><td><a href=\"/nets#net-{net}\">{net}</a></td>\
             <td><code class=\"sha\">{sha}</code></td><td>{how}</td></tr>",
            variant = esc(&r.variant),
            net = esc(&r.net),
            sha = esc(&r.sha),
            how = if r.how == "default" {
                "its engine's default"
            } else {
                "net= in its words"
            },
        ));
    }
    b.push_str("</table>");
    b
}
