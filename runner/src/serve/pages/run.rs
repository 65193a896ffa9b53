//! A run's page: its state and live numbers, `spar status`'s lines and page, the
//! equivalent command line, the downloads, the note, the actions (POST forms), and a
//! failure's last stderr lines.

use super::html::{esc, layout, num, time, Page};
use super::{elo, llr, LIVE_SCRIPT};
use crate::job::Numbers;
use crate::serve::db::runs::{Run, State, PENDING};
use crate::serve::live::Live;

/// The page of `run`, with its `live` numbers, its `files` (name, bytes), its `command`
/// line, the cores its child has now, and its own `sections` (HTML, may be empty): its
/// registered engines' commits and diff, then its kind's (a tune's trajectories, a
/// report's tables). `page`: the caller's account links and CSRF field.
#[allow(clippy::too_many_arguments)]
pub fn page(
    page: &Page,
    run: &Run,
    live: &Live,
    files: &[(String, u64)],
    command: &str,
    cores: Option<usize>,
    has_status_page: bool,
    sections: &str,
) -> String {
    let csrf = page.csrf_field();
    let id = run.id;
    let verdict = live.verdict.as_deref().unwrap_or("");
    let verdict_text = live.verdict.as_deref().unwrap_or("–");
    let mut b = format!(
        "<table id=\"run\" data-id=\"{id}\" data-state=\"{state}\" class=\"{verdict}\">\
         <tr><th>kind</th><td>{kind}</td></tr>\
         <tr><th>state</th><td data-f=\"state\">{state}</td></tr>\
         <tr><th>verdict</th><td data-f=\"verdict\">{verdict_text}</td></tr>\
         <tr><th>words</th><td class=\"words\">{words}</td></tr>\
         <tr><th>priority / throughput</th><td>{priority} / {throughput}</td></tr>\
         <tr><th>cores now</th><td data-f=\"cores\">{cores}</td></tr>\
         <tr><th>games</th><td data-f=\"games\">{games}</td></tr>{numbers}\
         <tr><th>created / started / finished</th><td>{created} / {started} / {finished} UTC</td></tr>\
         <tr><th>exit code</th><td>{code}</td></tr>{approval}\
         <tr><th>directory</th><td><code>{dir}</code></td></tr></table>",
        state = esc(run.state.as_str()),
        kind = esc(run.kind.as_str()),
        words = esc(&run.words.join(" ")),
        priority = run.priority,
        throughput = run.throughput,
        cores = cores.map_or("–".into(), |c| c.to_string()),
        games = live.games.map_or("–".into(), |g| g.to_string()),
        numbers = match run.kind.served_page().numbers {
            Numbers::Positions => datagen_rows(live),
            Numbers::Games => match_rows(live),
        },
        created = time(Some(run.created)),
        started = time(run.started),
        finished = time(run.finished),
        code = num(run.exit_code.map(|c| c as f64), 0),
        approval = approval_row(run),
        dir = esc(&run.dir),
    );
    b.push_str(sections);
    if run.state == State::Failed {
        let code = run.exit_code.map_or(
            "no exit code (killed by a signal, or it could not start)".into(),
            |c| format!("exit code <span id=\"exit-code\">{c}</span>"),
        );
        let tail = match run.stderr_tail.is_empty() {
            true => "(nothing)",
            false => run.stderr_tail.as_str(),
        };
        let why = crate::serve::disk::reason(run).map_or(String::new(), |r| {
            format!("<p class=\"err\" id=\"reason\">{}</p>", esc(r))
        });
        b.push_str(&format!(
            "<h2>Failure</h2>{why}<p class=\"err\">The run failed with {code}; the last lines of its \
             stderr:</p><pre id=\"stderr\">{tail}</pre><p>To replay it (in a shell):</p>\
             <pre id=\"replay\">{replay}</pre><p><a href=\"/events?run={id}&amp;kind=failure\">\
             The failure in the event log</a></p>",
            tail = esc(tail),
            replay = esc(&crate::serve::words::replay(&run.cwd, command)),
        ));
    }
    let shows = run.kind.served_page();
    if shows.training_files {
        b.push_str(&training_files(id, files));
    } else if shows.status_lines {
        b.push_str(&format!(
            "<h2>Status</h2><pre data-f=\"lines\">{}</pre>",
            esc(&live.lines.join("\n"))
        ));
    }
    if !live.shards.is_empty() {
        b.push_str(&format!(
            "<h2>Shards</h2><p>The Slurm job array's tasks (<code>spar status RUN_DIR</code>):</p>{}",
            super::ops::shards_table(&live.shards)
        ));
    }
    if has_status_page {
        b.push_str(&format!(
            "<p><a href=\"/runs/{id}/status.html\">The status page</a> \
             (what <code>spar status FILE --html</code> writes), here as of loading:</p>\
             <iframe src=\"/runs/{id}/status.html\" title=\"status page\" \
             style=\"width:100%;height:36em;border:1px solid #ddd\"></iframe>"
        ));
    }
    b.push_str(&format!(
        "<h2>Command line</h2><p>The same run from the command line:</p><pre>{}</pre>",
        esc(command)
    ));
    if let (Some(f), Some(line)) = (run.nps_factor, &run.scaled_command) {
        b.push_str(&format!(
            "<p>Its clocks are scaled by this host's bench speed (<code>--scale-nps</code>): \
             \u{d7}<span id=\"nps-factor\">{f:.3}</span> (the server's reference nps / this \
             host's). Its child last started as:</p><pre id=\"scaled-command\">{}</pre>",
            esc(line)
        ));
    }
    b.push_str("<h2>Files</h2><ul>");
    for (name, bytes) in files {
        b.push_str(&format!(
            "<li><a href=\"/runs/{id}/files/{n}\">{n}</a> ({bytes} bytes)</li>",
            n = esc(name)
        ));
    }
    b.push_str("</ul>");
    b.push_str(&format!(
        "<h2>Note</h2><form method=\"post\" action=\"/runs/{id}/note\">{csrf}\
         <textarea name=\"note\" rows=\"3\">{note}</textarea><br>\
         <button type=\"submit\">Save the note</button></form>\
         <h2>Actions</h2>{approve}{stop}{resume}\
         <form class=\"inline\" method=\"post\" action=\"/runs/{id}/priority\">{csrf}\
         <label>priority <input name=\"priority\" value=\"{p}\" size=\"5\"></label> \
         <label>throughput <input name=\"throughput\" value=\"{t}\" size=\"5\"></label> \
         <button>Set</button></form> \
         <form class=\"inline\" method=\"post\" action=\"/runs/{id}/delete\">{csrf}\
         <button>Delete (files move to the archive)</button></form>",
        note = esc(&run.note),
        // Only what the run's state allows: a finished run neither stops nor resumes.
        stop = if run.state.plays() {
            format!(
                "<form class=\"inline\" method=\"post\" action=\"/runs/{id}/stop\">{csrf}\
                 <button>Stop</button></form> "
            )
        } else {
            String::new()
        },
        resume = if run.state.resumable() {
            format!(
                "<form class=\"inline\" method=\"post\" action=\"/runs/{id}/resume\">{csrf}\
                 <button>Resume</button></form> "
            )
        } else {
            String::new()
        },
        approve = if run.state == PENDING {
            format!(
                "<p id=\"waits\">This run waits for an approver: an approver or an admin \
                 other than its owner approves it.</p><form class=\"inline\" method=\"post\" \
                 action=\"/runs/{id}/approve\">{csrf}<button id=\"approve\">Approve</button></form> "
            )
        } else {
            String::new()
        },
        p = run.priority,
        t = run.throughput,
    ));
    layout(
        page,
        &format!("Run {id}: spar {}", run.kind),
        &b,
        LIVE_SCRIPT,
    )
}

/// The approval's row: who approved the run and when, or that it waits; none for a run
/// that needed no approval.
fn approval_row(run: &Run) -> String {
    let by = run.owner.as_ref().map_or(String::new(), |o| {
        format!(
            "<tr><th>submitted by</th><td id=\"owner\">{}</td></tr>",
            esc(o)
        )
    });
    by + &match (&run.approved_by, run.state == PENDING) {
        (Some(by), _) => format!(
            "<tr><th>approved</th><td id=\"approved\">by {} on {} UTC</td></tr>",
            esc(by),
            time(run.approved_at)
        ),
        (None, true) => {
            "<tr><th>approved</th><td id=\"approved\">not yet: it waits</td></tr>".into()
        }
        (None, false) => String::new(),
    }
}

/// The rows of a match's, an SPRT's or a tune's numbers.
fn match_rows(live: &Live) -> String {
    format!(
        "<tr><th>W-L-D</th><td data-f=\"wdl\">{wdl}</td></tr>\
         <tr><th>Elo</th><td data-f=\"elo\">{elo}</td></tr>\
         <tr><th>LLR (bounds)</th><td data-f=\"llr\">{llr}</td></tr>\
         <tr><th>iteration</th><td data-f=\"iteration\">{iteration}</td></tr>",
        wdl = match (live.wins, live.losses, live.draws) {
            (Some(w), Some(l), Some(d)) => format!("{w}-{l}-{d}"),
            _ => "–".into(),
        },
        elo = elo(live),
        llr = llr(live),
        iteration = live.iteration.map_or("–".into(), |i| i.to_string()),
    )
}

/// The rows of a datagen run's numbers: its positions and their rate.
fn datagen_rows(live: &Live) -> String {
    format!(
        "<tr><th>positions</th><td data-f=\"positions\">{}</td></tr>\
         <tr><th>positions/s</th><td data-f=\"positions_per_s\">{}</td></tr>",
        live.positions.map_or("–".into(), |p| p.to_string()),
        num(live.positions_per_s, 1),
    )
}

/// A datagen run's training files (`positions`, `positions.txt`, their indexes), each
/// with its size and download link.
fn training_files(id: i64, files: &[(String, u64)]) -> String {
    let mut b = String::from(
        "<h2>Training files</h2><table id=\"positions\"><tr><th>file</th><th>bytes</th></tr>",
    );
    for (name, bytes) in files.iter().filter(|(n, _)| n.starts_with("positions")) {
        b.push_str(&format!(
            "<tr><td><a href=\"/runs/{id}/files/{n}\">{n}</a></td><td>{bytes}</td></tr>",
            n = esc(name)
        ));
    }
    b.push_str("</table>");
    b
}
