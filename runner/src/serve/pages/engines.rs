//! The engines page (the registered engines, their cached builds, the registration form)
//! and the part of a run's page about its registered engines: the dev and base commits,
//! their benches, the commit list and the diff base..dev.

use super::html::{esc, layout, time, Page};
use crate::serve::db::engines::{Engine, RunEngine};
use crate::serve::engines::Diff;

/// What the registration form had, to show again with its error.
#[derive(Default)]
pub struct EngineForm {
    pub name: String,
    pub repo: String,
    pub build: String,
    pub error: Option<String>,
    /// Why an engine's edit or removal was refused (shown at the top).
    pub change_error: Option<String>,
}

/// The engines page: each engine with its builds (sha, bench), and the form.
pub fn page(page: &Page, engines: &[(Engine, Vec<(String, u64)>)], form: &EngineForm) -> String {
    let csrf = page.csrf_field();
    let mut b = String::from(
        "<p>A run names a registered engine in its engine words: \
         <code>--engine name=dev engine=NAME rev=BRANCH bench=N</code>; the server builds the \
         revision (cached by commit) and refuses a bench that differs.</p>",
    );
    if let Some(e) = &form.change_error {
        b.push_str(&format!("<p class=\"err\" id=\"error\">{}</p>", esc(e)));
    }
    if engines.is_empty() {
        b.push_str("<p>No engine is registered.</p>");
    } else {
        b.push_str(
            "<table id=\"engines\"><tr><th>name</th><th>repository</th><th>build</th>\
             <th>registered</th><th>owner</th><th>builds (sha: bench)</th><th>change</th></tr>",
        );
        for (e, builds) in engines {
            let list: Vec<String> = builds
                .iter()
                .map(|(sha, bench)| {
                    format!("<code>{}</code>: {bench}", esc(&sha[..12.min(sha.len())]))
                })
                .collect();
            b.push_str(&format!(
                "<tr id=\"engine-{n}\"><td>{n}</td><td><code>{repo}</code></td><td>{build}</td>\
                 <td>{created} UTC</td><td class=\"owner\">{owner}</td><td>{list}</td>\
                 <td>{change}</td></tr>",
                owner = e.owner.as_deref().map_or("–".into(), esc),
                change = change_forms(page, e),
                n = esc(&e.name),
                repo = esc(&e.repo),
                build = esc(&e.build),
                created = time(Some(e.created)),
                list = if list.is_empty() {
                    "–".into()
                } else {
                    list.join("<br>")
                },
            ));
        }
        b.push_str("</table>");
    }
    let error = form.error.as_ref().map_or(String::new(), |e| {
        format!("<p class=\"err\" id=\"error\">{}</p>", esc(e))
    });
    let option = |v: &str, text: &str| {
        let sel = if form.build == v { " selected" } else { "" };
        format!("<option value=\"{v}\"{sel}>{text}</option>")
    };
    b.push_str(&format!(
        "<h2 id=\"register\">Register an engine</h2>{error}\
         <form method=\"post\" action=\"/engines\">{csrf}\
         <p><label>name <input name=\"name\" value=\"{name}\" size=\"20\"></label></p>\
         <p><label>git repository (a path on the server, or a URL) \
         <input name=\"repo\" value=\"{repo}\" size=\"60\"></label></p>\
         <p><label>build <select name=\"build\">{make}{spar}</select></label></p>\
         <p><button type=\"submit\">Register</button></p></form>",
        name = esc(&form.name),
        repo = esc(&form.repo),
        make = option("make", "make -j EXE=NAME, then ./NAME bench (OpenBench)"),
        spar = option("spar", "spar (the git= builder, then spar bench)"),
    ));
    layout(page, "Engines", &b, "")
}

/// An engine's edit form (repository, build) and remove button (its owner's or an
/// admin's), the change that waits for an approver with its approve button; a removed
/// engine's date; the links to its watch settings and its progression.
fn change_forms(page: &Page, e: &Engine) -> String {
    let csrf = page.csrf_field();
    let n = esc(&e.name);
    let watch = format!(
        "<p class=\"watch-links\"><a href=\"/engines/{n}/watch\">watch</a> · \
         <a href=\"/engines/{n}/progression\">progression</a></p>"
    );
    if e.removed.is_some() {
        return format!("removed {} UTC{watch}", time(e.removed));
    }
    let pending = e.pending.as_ref().map_or(String::new(), |p| {
        format!(
            "<p class=\"pending\" id=\"pending-{n}\">{by} asks to change it to \
             <code>{repo}</code> (build {build}) on {at} UTC: it waits for an approver or an \
             admin.</p><form method=\"post\" action=\"/engines/{n}/approve\">{csrf}\
             <button type=\"submit\">Approve the change</button></form>",
            by = esc(&p.by),
            repo = esc(&p.repo),
            build = esc(&p.build),
            at = time(Some(p.at)),
        )
    });
    let option = |v: &str| {
        let sel = if e.build == v { " selected" } else { "" };
        format!("<option{sel}>{v}</option>")
    };
    format!(
        "<form method=\"post\" action=\"/engines/{n}/edit\">{csrf}\
         <input name=\"repo\" value=\"{repo}\" size=\"30\" aria-label=\"repository\"> \
         <select name=\"build\" aria-label=\"build\">{make}{spar}</select> \
         <button type=\"submit\">Change</button></form>\
         <form method=\"post\" action=\"/engines/{n}/remove\">{csrf}\
         <button type=\"submit\">Remove</button></form>{pending}{watch}",
        repo = esc(&e.repo),
        make = option("make"),
        spar = option("spar"),
    )
}

/// The run page's section on its registered engines: before they are built, that they
/// wait for their build (`building`: the run is queued, so the builder builds them now or
/// next; otherwise they are built once the run is approved or resumed) and the builder's
/// log so far (`log`).
pub fn run_section(rows: &[RunEngine], diff: Option<&Diff>, building: bool, log: &str) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut b = String::from("<h2>Engines</h2>");
    if rows.iter().any(|r| r.sha.is_empty()) {
        b.push_str(if building {
            "<p id=\"building\">Building: the server builds these engines (then checks \
             their benches) before the run plays.</p>"
        } else {
            "<p id=\"building\">Not built yet: the server builds these engines once the run \
             is queued (approved, or resumed).</p>"
        });
    }
    if !log.is_empty() {
        b.push_str(&format!("<pre id=\"build-log\">{}</pre>", esc(log)));
    }
    b.push_str(
        "<table id=\"engines\"><tr><th>engine</th><th>registered</th>\
         <th>revision</th><th>commit</th><th>bench</th></tr>",
    );
    for r in rows {
        b.push_str(&format!(
            "<tr><td>{variant}</td><td>{engine}</td><td>{rev}</td>\
             <td><code class=\"sha\">{sha}</code></td><td class=\"bench\">{bench}</td></tr>",
            variant = esc(&r.variant),
            engine = esc(&r.engine),
            rev = esc(&r.rev),
            sha = if r.sha.is_empty() {
                "not built yet".into()
            } else {
                esc(&r.sha)
            },
            bench = if r.sha.is_empty() {
                "–".into()
            } else {
                r.bench.to_string()
            },
        ));
    }
    b.push_str("</table>");
    let Some(d) = diff else {
        return b;
    };
    if let Some(why) = &d.none {
        b.push_str(&format!("<p>{}</p>", esc(why)));
        return b;
    }
    let (dev, base) = (&rows[0], &rows[1]);
    b.push_str(&format!(
        "<h2>Commits</h2><p><code>git log --oneline {base}..{dev}</code> ({dv} over \
         {bv}):</p><pre id=\"log\">{log}</pre>\
         <h2>Diff</h2><p><code>git diff {base}..{dev}</code>:</p><pre id=\"diffstat\">{stat}</pre>\
         <pre id=\"diff\">{diff}</pre>{cut}",
        base = esc(&base.sha[..12.min(base.sha.len())]),
        dev = esc(&dev.sha[..12.min(dev.sha.len())]),
        dv = esc(&dev.variant),
        bv = esc(&base.variant),
        log = if d.log.trim().is_empty() {
            "(no commit)".to_string()
        } else {
            esc(&d.log)
        },
        stat = esc(&d.stat),
        diff = esc(&d.diff),
        cut = if d.truncated {
            "<p class=\"err\">The diff is longer: cut here.</p>"
        } else {
            ""
        },
    ));
    b
}
