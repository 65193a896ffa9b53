//! The operations pages and their API: the event log (`/events`, `/api/events`), the
//! actions log (`/actions`, `/api/actions`) and the machines (`/machines`,
//! `/api/machines`: the slots and, with Slurm, the nodes).

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::ApiError;
use crate::serve::action_log;
use crate::serve::actions::Refusal;
use crate::serve::db::action_log::ActionFilter;
use crate::serve::db::events::{EventFilter, KINDS};
use crate::serve::live;
use crate::serve::nodes::{self, Node};
use crate::serve::pages::html::Page;
use crate::serve::pages::ops::{self, SlotRow};
use crate::serve::state::Shared;

fn check(f: &EventFilter) -> Result<(), Refusal> {
    match f.kind.as_deref().filter(|k| !k.is_empty()) {
        Some(k) if !KINDS.contains(&k) => Err(Refusal::Bad(format!(
            "unknown event kind '{k}': one of {}",
            KINDS.join(", ")
        ))),
        _ => Ok(()),
    }
}

/// `GET /events?run=&kind=&limit=`.
pub async fn events(State(st): State<Shared>, pg: Page, Query(f): Query<EventFilter>) -> Response {
    if let Err(e) = check(&f) {
        return (StatusCode::BAD_REQUEST, e.message().to_string()).into_response();
    }
    let q = f.clone();
    match st.store.read(move |db| db.events(&q)).await {
        Ok(ev) => Html(ops::events(&pg, &f, &ev)).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

/// `GET /api/events?run=&kind=&limit=`: `{"events": [...]}`, newest first.
pub async fn api_events(
    State(st): State<Shared>,
    Query(f): Query<EventFilter>,
) -> Result<Json<Value>, ApiError> {
    check(&f)?;
    let ev = st.store.read(move |db| db.events(&f)).await;
    let ev = ev.map_err(Refusal::Internal)?;
    Ok(Json(json!({ "events": ev })))
}

/// `GET /actions?user=&action=&target=&from=&to=&limit=`: the actions log (a bad filter:
/// the page with its message, 400).
pub async fn actions(
    State(st): State<Shared>,
    pg: Page,
    Query(f): Query<ActionFilter>,
) -> Response {
    let (since, until) = match action_log::window(&f) {
        Ok(w) => w,
        Err(m) => {
            let page = crate::serve::pages::actions::page(&pg, &f, &[], Some(&m));
            return (StatusCode::BAD_REQUEST, Html(page)).into_response();
        }
    };
    let q = f.clone();
    match st.store.read(move |db| db.actions(&q, since, until)).await {
        Ok(rows) => Html(crate::serve::pages::actions::page(&pg, &f, &rows, None)).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

/// `GET /api/actions?user=&action=&target=&from=&to=&limit=`: `{"actions": [{id, time,
/// who, action, target, detail}]}`, newest first.
pub async fn api_actions(
    State(st): State<Shared>,
    Query(f): Query<ActionFilter>,
) -> Result<Json<Value>, ApiError> {
    let (since, until) = action_log::window(&f).map_err(Refusal::Bad)?;
    let rows = st.store.read(move |db| db.actions(&f, since, until)).await;
    let rows = rows.map_err(Refusal::Internal)?;
    Ok(Json(json!({ "actions": rows })))
}

/// The children now, each with its run's numbers from its files and its games/s since it
/// started.
fn slots(st: &Shared) -> Vec<SlotRow> {
    st.sched
        .slots()
        .into_iter()
        .filter_map(|s| {
            let run = st.store.blocking(|db| db.get(s.run)).ok().flatten()?;
            let l = live::of(&st.cache, &st.store, &run);
            let rate = l
                .games
                .filter(|_| s.secs > 0.5)
                .map(|g| g.saturating_sub(s.games0) as f64 / s.secs);
            Some(SlotRow {
                run: s.run,
                kind: run.kind.to_string(),
                state: run.state.to_string(),
                cores: s.cores,
                stopping: s.stopping,
                secs: s.secs,
                games: l.games,
                rate,
                shards: l.shards,
            })
        })
        .collect()
}

fn backend(st: &Shared) -> String {
    match st.sched.slurm() {
        Some(s) => format!(
            "Slurm backend: {} shards of {} CPUs{}, shared among the runs (each a job \
             array of its share).",
            s.shards,
            s.cpus_per_shard,
            s.partition
                .as_ref()
                .map_or(String::new(), |p| format!(" on partition {p}"))
        ),
        None => format!("Local: {} cores on this machine.", st.sched.cores()),
    }
}

/// The slots, with the Slurm backend the cluster's nodes (or why `sinfo` failed), and the
/// machines the server knows with the runs' flags.
type Machines = (
    Vec<SlotRow>,
    Option<Result<Vec<Node>, String>>,
    super::machines::Known,
);

/// What the machines page and its API show, read off the async threads.
async fn look(st: &Shared) -> Machines {
    let st2 = st.clone();
    tokio::task::spawn_blocking(move || {
        let rows = slots(&st2);
        let nodes = st2.sched.slurm().map(|_| {
            let dirs: Vec<(i64, std::path::PathBuf)> =
                rows.iter().map(|s| (s.run, st2.run_dir(s.run))).collect();
            let runs: Vec<(i64, &std::path::Path)> =
                dirs.iter().map(|(id, d)| (*id, d.as_path())).collect();
            nodes::nodes(&runs)
        });
        (rows, nodes, super::machines::known(&st2))
    })
    .await
    .unwrap_or_default()
}

/// `GET /machines`.
pub async fn machines(State(st): State<Shared>, pg: Page) -> Response {
    let (rows, nodes, known) = look(&st).await;
    let mut page = ops::machines(
        &pg,
        &backend(&st),
        st.sched.cores(),
        st.sched.slurm().is_some(),
        &rows,
    );
    if let Some(nodes) = nodes {
        let at = page.rfind("<p><a href=\"/events\">").unwrap_or(page.len());
        page.insert_str(at, &ops::nodes_table(&nodes));
    }
    let at = page.rfind("<p><a href=\"/events\">").unwrap_or(page.len());
    page.insert_str(at, &ops::known_table(&pg, &known.0, &known.1));
    Html(page).into_response()
}

/// `GET /api/machines`: `{"backend", "cores", "slurm", "slots": [{run, kind, state, cores,
/// stopping, secs, games, games_per_s, shards}]}`, and with the Slurm backend `"nodes":
/// [{name, state, cpus, cpus_allocated, shards: [{run, shard}]}]` (or `"nodes_error"`);
/// `"machines": [{name, excluded, nps, nps_time}]` and `"flags": [{run, what, time}]`.
pub async fn api_machines(State(st): State<Shared>) -> Json<Value> {
    let (rows, nodes, known) = look(&st).await;
    let slots: Vec<Value> = rows
        .iter()
        .map(|s| {
            json!({
                "run": s.run, "kind": s.kind, "state": s.state, "cores": s.cores,
                "stopping": s.stopping, "secs": s.secs, "games": s.games,
                "games_per_s": s.rate, "shards": s.shards,
            })
        })
        .collect();
    let mut v = json!({
        "backend": backend(&st),
        "cores": st.sched.cores(),
        "slurm": st.sched.slurm().is_some(),
        "slots": slots,
    });
    (v["machines"], v["flags"]) = super::machines::known_json(&known);
    match nodes {
        Some(Ok(n)) => v["nodes"] = json!(n),
        Some(Err(e)) => v["nodes_error"] = json!(e),
        None => {}
    }
    Json(v)
}
