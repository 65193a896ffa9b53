//! The pages of a watched branch: an engine's watch settings (its form, the push token shown
//! once, the unwatch button) and its progression (the Elo line along the commits, the
//! table of the commits with a search box, the bisects and anchor tests).

use super::html::{esc, num, time, Page};
use crate::serve::db::watch::Watch;
use crate::serve::watch::progression::{self, Progression};

/// What the settings form had (its fields as text), to show again with its error.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct WatchForm {
    pub branch: String,
    pub each: String,
    pub extra: String,
    pub elo0: String,
    pub elo1: String,
    pub anchor: String,
    pub anchor_games: String,
    pub anchor_every: String,
    pub poll: String,
    pub rotate_token: String,
}

impl WatchForm {
    /// The form filled with settings `w` (a new watch's defaults when `None`).
    pub fn of(w: Option<&Watch>) -> WatchForm {
        let Some(w) = w else {
            return WatchForm {
                branch: "main".into(),
                elo0: "-3".into(),
                elo1: "1".into(),
                poll: crate::serve::watch::settings::DEFAULT_POLL.to_string(),
                ..WatchForm::default()
            };
        };
        let words = |v: &[String]| shell_words::join(v);
        let count = |n: u64| if n == 0 { String::new() } else { n.to_string() };
        WatchForm {
            branch: w.branch.clone(),
            each: words(&w.each),
            extra: words(&w.extra),
            elo0: w.elo0.to_string(),
            elo1: w.elo1.to_string(),
            anchor: w.anchor.clone(),
            anchor_games: count(w.anchor_games),
            anchor_every: count(w.anchor_every),
            poll: w.poll_secs.to_string(),
            rotate_token: String::new(),
        }
    }
}

/// The settings page of engine `engine`: its watch now (`watch`), the form (`form`), the
/// push token made by this request (shown once), a refusal's message.
pub fn settings(
    page: &Page,
    engine: &str,
    watch: Option<&Watch>,
    form: &WatchForm,
    token: Option<&str>,
    error: Option<&str>,
) -> String {
    let csrf = page.csrf_field();
    let n = esc(engine);
    let mut b = String::new();
    if let Some(e) = error {
        b.push_str(&format!("<p class=\"err\" id=\"error\">{}</p>", esc(e)));
    }
    if let Some(t) = token {
        b.push_str(&format!(
            "<div id=\"token\"><p>The push token (shown <b>this once</b>; keep it in your \
             forge's webhook):</p><pre id=\"push-token\">{t}</pre><pre>curl -X POST -H \
             'Authorization: Bearer {t}' https://SERVER/api/engines/{n}/push</pre></div>",
            t = esc(t),
        ));
    }
    b.push_str(&match watch {
        Some(w) if w.active => format!(
            "<p id=\"watching\">Branch <code>{}</code> is watched (a look every {} s, last \
             {} UTC). <a href=\"/engines/{n}/progression\">Its progression</a>.</p>\
             <form method=\"post\" action=\"/engines/{n}/unwatch\">{csrf}\
             <button type=\"submit\">Unwatch</button></form>",
            esc(&w.branch),
            w.poll_secs,
            time(Some(w.last_poll).filter(|t| *t > 0)),
        ),
        Some(w) => format!(
            "<p id=\"watching\">Not watched (branch <code>{}</code> was until {} UTC; \
             <a href=\"/engines/{n}/progression\">its progression</a> stays).</p>",
            esc(&w.branch),
            time(Some(w.updated)),
        ),
        None => "<p id=\"watching\">Not watched.</p>".to_string(),
    });
    let field = |name: &str, label: &str, value: &str, size: u32, hint: &str| {
        format!(
            "<p><label>{label} <input name=\"{name}\" value=\"{}\" size=\"{size}\"></label> \
             {hint}</p>",
            esc(value)
        )
    };
    b.push_str(&format!(
        "<h2>Watch settings</h2><p>Each new commit of the branch gets an SPRT against its \
         parent with the bounds below; a push of several commits also a test of its tip \
         against its base, and a bisect of the push when that test fails (docs/serve.md, \
         \"Watched branches\").</p>\
         <form method=\"post\" action=\"/engines/{n}/watch\" id=\"watch-form\">{csrf}{}{}{}{}{}{}{}{}{}\
         <p><label><input type=\"checkbox\" name=\"rotate_token\" value=\"on\"> a new push \
         token (the old one stops working)</label></p>\
         <p><button type=\"submit\">Watch</button></p></form>",
        field("branch", "branch", &form.branch, 20, ""),
        field("each", "test words for both sides", &form.each, 40, "(tc=8+0.08, nodes=2000)"),
        field("extra", "extra words", &form.extra, 40, "(--book NAME …)"),
        field("elo0", "elo0", &form.elo0, 6, ""),
        field("elo1", "elo1", &form.elo1, 6, "(fishtest's non-regression: -3, 1)"),
        field("anchor", "anchor (a tag or commit)", &form.anchor, 20, "(empty: none)"),
        field("anchor_games", "anchor games", &form.anchor_games, 8, ""),
        field("anchor_every", "an anchor test every", &form.anchor_every, 5, "commits"),
        field("poll", "a look every", &form.poll, 8, "seconds"),
    ));
    super::html::layout(page, &format!("Watch {engine}"), &b, "")
}

/// The progression page: the chart, the bisects and anchor tests, and the commits that
/// match the search `q` (all of them when it is empty).
pub fn progression(page: &Page, p: &Progression, q: &str) -> String {
    let n = esc(&p.engine);
    let br = esc(&p.branch);
    let mut b = format!(
        "<p>Branch <code>{br}</code> of engine {n}: the cumulative Elo along its commits (each \
         commit's Elo against its parent, summed; the band ±1.96·√(sum of the variances)); \
         red points failed their test (H0), <b>▼ found</b> marks a commit a bisect found, \
         diamonds the anchor tests. <a href=\"/engines/{n}/watch\">Watch settings</a> · \
         <a href=\"/api/engines/{n}/progression?branch={u}\">JSON</a></p>",
        u = esc(&url(&p.branch))
    );
    if p.branches.len() > 1 {
        let links: Vec<String> = p
            .branches
            .iter()
            .map(|x| {
                format!(
                    "<a href=\"/engines/{n}/progression?branch={}\">{}</a>",
                    esc(&url(x)),
                    esc(x)
                )
            })
            .collect();
        b.push_str(&format!(
            "<p id=\"branches\">Branches: {}</p>",
            links.join(" · ")
        ));
    }
    if p.points.is_empty() {
        b.push_str("<p id=\"no-commits\">No commit tested yet.</p>");
    } else {
        b.push_str(&format!("<figure>{}</figure>", progression::svg(p)));
    }
    if !p.runs.is_empty() {
        b.push_str(
            "<h2>Batch tests, bisects and anchor tests</h2><table id=\"watch-runs\">\
             <tr><th>run</th><th>role</th><th>range</th><th>found</th></tr>",
        );
        for r in &p.runs {
            b.push_str(&format!(
                "<tr class=\"{role}\"><td>{run}</td><td>{role}</td><td><code>{}..{}</code></td>\
                 <td class=\"found\">{}</td></tr>",
                esc(short(&r.base)),
                esc(short(&r.tip)),
                r.found
                    .as_deref()
                    .map_or("–".into(), |f| format!("<code>{}</code>", esc(short(f)))),
                role = esc(&r.role),
                run = r.run_id.map_or("refused".into(), |id| {
                    format!("<a href=\"/runs/{id}\">{id}</a>")
                }),
            ));
        }
        b.push_str("</table>");
    }
    b.push_str(&format!(
        "<h2>Commits</h2><form method=\"get\" action=\"/engines/{n}/progression\">\
         <input type=\"hidden\" name=\"branch\" value=\"{br}\">\
         <label>search <input name=\"q\" value=\"{}\" placeholder=\"sha, subject or author\">\
         </label> <button type=\"submit\">Search</button></form>",
        esc(q)
    ));
    let shown: Vec<_> = p
        .points
        .iter()
        .filter(|x| progression::matches(&x.commit, q))
        .collect();
    b.push_str(
        "<table id=\"commits\"><tr><th>#</th><th>commit</th><th>subject</th><th>author</th>\
         <th>Elo</th><th>games</th><th>verdict</th><th>sum</th><th>test</th></tr>",
    );
    for x in shown.iter().rev() {
        let c = &x.commit;
        let class = match x.verdict.as_deref() {
            Some("H0") => "H0",
            Some("H1") => "H1",
            _ => "",
        };
        let found = x.found_by.map_or(String::new(), |id| {
            format!(" <a class=\"found\" href=\"/runs/{id}\">found by run {id}</a>")
        });
        b.push_str(&format!(
            "<tr class=\"{class}\" id=\"commit-{sha}\"><td>{pos}</td><td><code>{short}</code></td>\
             <td>{subject}</td><td>{author}</td><td>{elo} ± {err}</td><td>{games}</td>\
             <td>{verdict}{found}</td><td>{sum} ± {band}</td><td>{run}</td></tr>",
            sha = esc(&c.sha),
            pos = c.position,
            short = esc(short(&c.sha)),
            subject = esc(&c.subject),
            author = esc(&c.author),
            elo = num(x.elo, 1),
            err = num(x.error, 1),
            games = x.games.map_or("–".into(), |g| g.to_string()),
            verdict = esc(x.verdict.as_deref().or(x.state.as_deref()).unwrap_or("–")),
            sum = num(Some(x.cumulative), 1),
            band = num(Some(x.band), 1),
            run = c.run_id.map_or("refused".into(), |id| format!(
                "<a href=\"/runs/{id}\">run {id}</a>"
            )),
        ));
    }
    b.push_str("</table>");
    if shown.is_empty() && !p.points.is_empty() {
        b.push_str("<p>No commit matches.</p>");
    }
    super::html::layout(page, &format!("Progression of {}", p.engine), &b, "")
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(10)]
}

/// A branch name as a URL's query value (percent-encoded but for the plain characters).
fn url(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
