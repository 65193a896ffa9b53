//! The operations pages: the event log (`/events`, filtered by run and kind in the URL)
//! and the machines (`/machines`: the local slots — which run holds how many cores, its
//! games/s — and, with the Slurm backend, each run's shards and the cluster's nodes; the
//! machines the server knows, excluded or not, with their bench speed and the flags) and a
//! run's Machines table.

use super::html::{esc, layout, num, time, Page};
use crate::serve::db::events::{Event, EventFilter, KINDS};
use crate::serve::db::machines::Machine;
use crate::serve::nodes::Node;
use crate::serve::residuals::Machines;
use crate::serve::slurm::Shard;

/// The event log page.
pub fn events(page: &Page, f: &EventFilter, events: &[Event]) -> String {
    let mut kinds = String::from("<select name=\"kind\"><option value=\"\">any</option>");
    for k in KINDS {
        let sel = if f.kind.as_deref() == Some(*k) {
            " selected"
        } else {
            ""
        };
        kinds.push_str(&format!("<option{sel}>{}</option>", esc(k)));
    }
    kinds.push_str("</select>");
    let mut b = format!(
        "<form method=\"get\" action=\"/events\"><label>run <input name=\"run\" value=\"{}\" \
         size=\"6\"></label> <label>kind {kinds}</label> <button type=\"submit\">Filter</button>\
         </form>",
        f.run.map_or(String::new(), |r| r.to_string()),
    );
    if events.is_empty() {
        b.push_str("<p>No event.</p>");
    } else {
        b.push_str(
            "<table id=\"events\"><tr><th>time (UTC)</th><th>run</th><th>kind</th>\
             <th>what</th></tr>",
        );
        for e in events {
            b.push_str(&format!(
                "<tr class=\"ev-{kind}\"><td>{t}</td><td>{run}</td><td>{kind}</td>\
                 <td>{msg}</td></tr>",
                t = time(Some(e.time)),
                run = e.run.map_or("server".to_string(), |r| format!(
                    "<a href=\"/runs/{r}\">{r}</a>"
                )),
                kind = esc(&e.kind),
                msg = esc(&e.message),
            ));
        }
        b.push_str("</table>");
    }
    layout(page, "Events", &b, "")
}

/// One child on the machines page.
pub struct SlotRow {
    pub run: i64,
    pub kind: String,
    pub state: String,
    pub cores: usize,
    pub stopping: bool,
    pub secs: f64,
    pub games: Option<u64>,
    pub rate: Option<f64>,
    pub shards: Vec<Shard>,
}

/// The machines page: `cores` shared (or the Slurm backend, described), the children.
pub fn machines(
    page: &Page,
    backend: &str,
    cores: usize,
    slurm: bool,
    slots: &[SlotRow],
) -> String {
    let used: usize = slots.iter().map(|s| s.cores).sum();
    let mut b = format!("<p id=\"backend\">{}</p>", esc(backend));
    if slurm {
        b.push_str(&format!(
            "<p>{} run{} playing on the cluster (each child is its run's coordinator, its \
             job array its share of the shards).</p>",
            slots.len(),
            if slots.len() == 1 { "" } else { "s" }
        ));
    } else {
        b.push_str(&format!(
            "<p id=\"slots\">{used} of {cores} cores held, {} free.</p>",
            cores.saturating_sub(used)
        ));
    }
    if slots.is_empty() {
        b.push_str("<p>No run plays now.</p>");
    } else {
        b.push_str(&format!(
            "<table id=\"machines\"><tr><th>run</th><th>kind</th><th>state</th>\
             <th>{}</th><th>for</th><th>games</th><th>games/s</th></tr>",
            if slurm { "shards" } else { "cores" }
        ));
        for s in slots {
            b.push_str(&format!(
                "<tr id=\"slot-{id}\"><td><a href=\"/runs/{id}\">{id}</a></td><td>{kind}</td>\
                 <td>{state}{stopping}</td><td>{cores}</td><td>{secs} s</td><td>{games}</td>\
                 <td>{rate}</td></tr>",
                id = s.run,
                kind = esc(&s.kind),
                state = esc(&s.state),
                stopping = if s.stopping { " (stopping)" } else { "" },
                cores = s.cores,
                secs = num(Some(s.secs), 0),
                games = s.games.map_or("–".into(), |g| g.to_string()),
                rate = num(s.rate, 2),
            ));
        }
        b.push_str("</table>");
    }
    for s in slots.iter().filter(|s| !s.shards.is_empty()) {
        b.push_str(&format!(
            "<h2>Run {id}: shards</h2>{}",
            shards_table(&s.shards),
            id = s.run
        ));
    }
    b.push_str("<p><a href=\"/events\">The event log</a></p>");
    layout(page, "Machines", &b, "")
}

/// A cluster run's shards: index, done (of its share), Slurm state, age of its last
/// record, stalled or failed.
pub fn shards_table(shards: &[Shard]) -> String {
    let mut b = String::from(
        "<table class=\"shards\"><tr><th>shard</th><th>done</th><th>Slurm state</th>\
         <th>last record</th><th>note</th></tr>",
    );
    for s in shards {
        let note = match (&s.failed, s.stalled) {
            (Some(f), _) => format!("failed: {}", esc(f)),
            (None, true) => "stalled".into(),
            _ => String::new(),
        };
        b.push_str(&format!(
            "<tr class=\"shard\"><td>{i}</td><td>{done}{share}</td><td>{state}</td>\
             <td>{age}</td><td>{note}</td></tr>",
            i = s.index,
            done = s.done,
            share = s.share.map_or(String::new(), |t| format!(" of {t}")),
            state = esc(s.state.as_deref().unwrap_or("–")),
            age = s
                .age
                .map_or("–".into(), |a| format!("{} s ago", num(Some(a), 0))),
        ));
    }
    b.push_str("</table>");
    b
}

/// The cluster's nodes (`sinfo -N`): name, state, CPUs (allocated of all), and the shards of
/// the server's runs on each; or why they could not be read.
pub fn nodes_table(nodes: &Result<Vec<Node>, String>) -> String {
    let nodes = match nodes {
        Ok(n) => n,
        Err(e) => {
            return format!(
                "<h2>Nodes</h2><p class=\"err\" id=\"nodes-error\">{}</p>",
                esc(e)
            )
        }
    };
    let mut b = String::from(
        "<h2>Nodes</h2><table id=\"nodes\"><tr><th>node</th><th>state</th>\
         <th>CPUs allocated / all</th><th>our shards on it</th></tr>",
    );
    for n in nodes {
        let shards: Vec<String> = n
            .shards
            .iter()
            .map(|t| {
                format!(
                    "<a href=\"/runs/{r}\">run {r}</a> shard {s}",
                    r = t.run,
                    s = t.shard
                )
            })
            .collect();
        b.push_str(&format!(
            "<tr class=\"node\"><td>{name}</td><td>{state}</td><td>{alloc} / {cpus}</td>\
             <td>{shards}</td></tr>",
            name = esc(&n.name),
            state = esc(&n.state),
            alloc = n.cpus_allocated.map_or("–".into(), |c| c.to_string()),
            cpus = n.cpus.map_or("–".into(), |c| c.to_string()),
            shards = if shards.is_empty() {
                "–".into()
            } else {
                shards.join(", ")
            },
        ));
    }
    b.push_str("</table>");
    b
}

/// The machines the server knows: each one's bench speed, whether it is excluded (with the
/// button that changes it), and the runs' flagged shards and machines.
pub fn known_table(page: &Page, machines: &[Machine], flags: &[(i64, String, i64)]) -> String {
    let csrf = page.csrf_field();
    let mut b = String::from(
        "<h2 id=\"known\">Machines you can trust</h2><p>Each machine's <code>spar bench</code> \
         speed (this host's, measured when the server started), and whether runs may play \
         on it: an excluded Slurm node is left out of later job arrays (<code>sbatch \
         --exclude</code>), an excluded local host starts no run.</p>\
         <table id=\"trust\"><tr><th>machine</th><th>bench nps</th><th>measured</th>\
         <th>excluded</th><th></th></tr>",
    );
    for m in machines {
        let (label, to) = if m.excluded {
            ("Include", "false")
        } else {
            ("Exclude", "true")
        };
        b.push_str(&format!(
            "<tr class=\"machine\" id=\"machine-{name}\"><td>{name}</td><td>{nps}</td>\
             <td>{t}</td><td>{ex}</td><td><form method=\"post\" \
             action=\"/machines/{name}/exclude\">{csrf}<input type=\"hidden\" name=\"excluded\" \
             value=\"{to}\"><button type=\"submit\">{label}</button></form></td></tr>",
            name = esc(&m.name),
            nps = m.nps.map_or("–".into(), |n| n.to_string()),
            t = time(m.nps_time),
            ex = if m.excluded { "excluded" } else { "no" },
        ));
    }
    b.push_str("</table>");
    if flags.is_empty() {
        b.push_str("<p id=\"flags\">No shard or machine flagged.</p>");
    } else {
        b.push_str("<table id=\"flags\"><tr><th>flagged (UTC)</th><th>run</th><th>what</th></tr>");
        for (run, what, t) in flags {
            b.push_str(&format!(
                "<tr class=\"flag\"><td>{}</td><td><a href=\"/runs/{run}#machines\">{run}</a>\
                 </td><td>{}</td></tr>",
                time(Some(*t)),
                esc(what)
            ));
        }
        b.push_str("</table>");
    }
    b
}

/// A run's Machines table: each machine's and each shard's games, score, residual against
/// the run and flag.
pub fn run_machines(m: &Machines) -> String {
    let mut b = String::from(
        "<h2 id=\"machines\">Machines</h2><p>Each machine's and shard's score against the \
         run's, in standard errors (the residual, as fishtest computes a worker's); beyond \
         the server's threshold with enough games it is flagged.</p><table \
         id=\"run-machines\"><tr><th>machine</th><th>shard</th><th>games</th><th>score</th>\
         <th>residual</th><th>flag</th></tr>",
    );
    for r in m.machines.iter().chain(&m.shards) {
        b.push_str(&format!(
            "<tr class=\"{cls}\"><td>{name}</td><td>{shard}</td><td>{games}</td>\
             <td>{score}</td><td>{res}</td><td>{flag}</td></tr>",
            cls = if r.flagged { "flagged" } else { "ok" },
            name = esc(&r.machine),
            shard = r.shard.map_or("all".into(), |s| s.to_string()),
            games = r.games,
            score = num(r.score, 3),
            res = num(r.residual, 2),
            flag = if r.flagged { "flagged" } else { "" },
        ));
    }
    b.push_str("</table>");
    b
}
