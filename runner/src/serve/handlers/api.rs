//! The JSON API of runs: list (with filters), one run with its live numbers, submit,
//! approve, stop, resume, priority, note, delete.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{blocking, ApiError};
use crate::serve::accounts::run_access::{OwnRun, RunId};
use crate::serve::accounts::Caller;
use crate::serve::actions::{self, Submit};
use crate::serve::db::runs::{Filter, Run};
use crate::serve::live;
use crate::serve::state::Shared;

type ApiResult = Result<Json<Value>, ApiError>;

/// A run with its live numbers (read from its files), its cores now and, for a run that
/// failed for a reason the server knows, its `reason` (`disk full: …`; else null).
pub fn run_json(st: &Shared, run: &Run) -> Value {
    let numbers = live::of(&st.cache, &st.store, run);
    let mut v = serde_json::to_value(run).unwrap_or_default();
    v["live"] = serde_json::to_value(numbers).unwrap_or_default();
    v["cores"] = json!(st.sched.cores_of(run.id));
    v["url"] = json!(format!("/runs/{}", run.id));
    v["reason"] = json!(crate::serve::disk::reason(run));
    let engines = st.store.blocking(|db| db.run_engines(run.id));
    v["engines"] = serde_json::to_value(engines.unwrap_or_default()).unwrap_or_default();
    let nets = st.store.blocking(|db| db.run_nets(run.id));
    v["nets"] = serde_json::to_value(nets.unwrap_or_default()).unwrap_or_default();
    v
}

/// `GET /api/runs?kind=&state=&q=&engine=&branch=&author=&verdict=&from=&to=&limit=`: a bad
/// filter is a 400.
pub async fn list(State(st): State<Shared>, Query(f): Query<Filter>) -> ApiResult {
    f.check().map_err(actions::Refusal::Bad)?;
    let runs = st.store.read(move |db| db.list(&f)).await;
    let runs = runs.map_err(actions::Refusal::Internal)?;
    let with_live = runs.iter().map(|r| run_json(&st, r)).collect::<Vec<_>>();
    Ok(Json(json!({ "runs": with_live })))
}

/// `GET /api/runs/{id}`.
pub async fn get(State(st): State<Shared>, RunId(id): RunId) -> ApiResult {
    let run = actions::get(&st, id)?;
    let st2 = st.clone();
    let v = tokio::task::spawn_blocking(move || {
        let mut v = run_json(&st2, &run);
        let l: live::Live = serde_json::from_value(v["live"].clone()).unwrap_or_default();
        v["machines"] = json!(super::machines::of_run(&st2, &run, &l));
        v
    })
    .await
    .map_err(|e| actions::Refusal::Internal(format!("the run could not be read: {e}")))?;
    Ok(Json(v))
}

/// `POST /api/runs` with `{kind, words, priority?, throughput?, note?}`: 201 and the run.
pub async fn submit(
    State(st): State<Shared>,
    caller: Caller,
    Json(mut s): Json<Submit>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    s.owner = caller.name().map(String::from);
    let run = blocking(&st, move |st| actions::submit(st, &s)).await?;
    Ok((StatusCode::CREATED, Json(run_json(&st, &run))))
}

/// `POST /api/runs/{id}/approve` (approvers and admins, never the run's owner): the run,
/// queued, with `approved_by` and `approved_at`.
pub async fn approve(State(st): State<Shared>, OwnRun { id, caller: c }: OwnRun) -> ApiResult {
    let run = actions::approve(&st, id, &c)?;
    Ok(Json(run_json(&st, &run)))
}

/// `POST /api/runs/{id}/stop`.
pub async fn stop(State(st): State<Shared>, OwnRun { id, caller: c }: OwnRun) -> ApiResult {
    let run = actions::stop(&st, id, c.name())?;
    Ok(Json(run_json(&st, &run)))
}

/// `POST /api/runs/{id}/resume`.
pub async fn resume(State(st): State<Shared>, OwnRun { id, caller: c }: OwnRun) -> ApiResult {
    let run = actions::resume(&st, id, c.name())?;
    Ok(Json(run_json(&st, &run)))
}

/// The body of `POST /api/runs/{id}/priority`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Priority {
    pub priority: i64,
    pub throughput: Option<i64>,
}

/// `POST /api/runs/{id}/priority` with `{priority, throughput?}`.
pub async fn priority(
    State(st): State<Shared>,
    OwnRun { id, caller: c }: OwnRun,
    Json(p): Json<Priority>,
) -> ApiResult {
    let t = match p.throughput {
        Some(t) => t,
        None => actions::get(&st, id)?.throughput,
    };
    let run = actions::priority(&st, id, p.priority, t, c.name())?;
    Ok(Json(run_json(&st, &run)))
}

/// The body of `POST /api/runs/{id}/note`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Note {
    pub note: String,
}

/// `POST /api/runs/{id}/note` with `{note}`.
pub async fn note(
    State(st): State<Shared>,
    OwnRun { id, caller: c }: OwnRun,
    Json(n): Json<Note>,
) -> ApiResult {
    let run = actions::note(&st, id, &n.note, c.name())?;
    Ok(Json(run_json(&st, &run)))
}

/// `DELETE /api/runs/{id}`: the run stops and its directory moves to the archive.
pub async fn delete(State(st): State<Shared>, OwnRun { id, caller: c }: OwnRun) -> ApiResult {
    let by = c.name().map(String::from);
    let run = blocking(&st, move |st| actions::delete(st, id, by.as_deref())).await?;
    Ok(Json(serde_json::to_value(run).unwrap_or_default()))
}
