//! Machines you can trust: a run's Machines table (its shards' and machines' residuals,
//! flags logged once) for its page and its JSON, the machines the server knows for the
//! machines page and its API, and an admin's exclusion of a machine
//! (`POST /api/machines/{name}/exclude` with `{"excluded": true|false}`, and the machines
//! page's buttons, `POST /machines/{name}/exclude`), recorded in the actions log.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::{Form, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{blocking, ApiError};
use crate::serve::accounts::Caller;
use crate::serve::action_log::{self, Action, Target};
use crate::serve::actions::Refusal;
use crate::serve::db::machines::Machine;
use crate::serve::db::runs::Run;
use crate::serve::live::Live;
use crate::serve::machines::{self, check_name};
use crate::serve::pages::html::Page;
use crate::serve::residuals::{self, Machines};
use crate::serve::state::{AppState, Shared};

/// The Machines table of `run` (with its `live` numbers), its flags written to the event
/// log once; `None` for a kind that plays no such games.
pub fn of_run(st: &AppState, run: &Run, live: &Live) -> Option<Machines> {
    let dir = std::path::Path::new(&run.dir);
    if let Some(n) = crate::serve::slurm::shards_of(dir) {
        machines::note_shard_nps(&st.store, &crate::serve::slurm::run_dir(dir), n);
    }
    let m = residuals::of_run(&*run.kind, dir, live, &machines::host(), st.residuals)?;
    machines::note_flags(&st.store, run.id, &m);
    Some(m)
}

/// The machines the server knows, and the runs' flags (run, what, when), newest first.
pub type Known = (Vec<Machine>, Vec<(i64, String, i64)>);

/// The machines the server knows (the local host always among them), and the flags of
/// the runs (run, what, when), newest first.
pub fn known(st: &AppState) -> Known {
    // The bench speeds the cluster runs' shards measured on their nodes.
    let active = st.store.blocking(|db| db.active()).unwrap_or_default();
    for run in active {
        let rd = crate::serve::slurm::run_dir(std::path::Path::new(&run.dir));
        if let Some(n) = crate::serve::slurm::shards_of(std::path::Path::new(&run.dir)) {
            machines::note_shard_nps(&st.store, &rd, n);
        }
    }
    let mut all = st.store.blocking(|db| db.machines()).unwrap_or_default();
    let host = machines::host();
    if !all.iter().any(|m| m.name == host) {
        all.push(Machine {
            name: host,
            ..Machine::default()
        });
        all.sort_by(|a, b| a.name.cmp(&b.name));
    }
    let flags = st.store.blocking(|db| db.machine_flags(200));
    (all, flags.unwrap_or_default())
}

/// The API's JSON of [`known`].
pub fn known_json(known: &Known) -> (Value, Value) {
    let flags: Vec<Value> = known
        .1
        .iter()
        .map(|(run, what, time)| json!({"run": run, "what": what, "time": time}))
        .collect();
    (json!(known.0), json!(flags))
}

/// Excludes machine `name` (or lets it play again), as `caller`: an admin (anyone on a
/// server without accounts). Recorded in the actions log and the event log when it changed
/// something.
fn set_excluded(st: &AppState, caller: &Caller, name: &str, excluded: bool) -> Result<(), Refusal> {
    if caller.accounts && !caller.is_admin() {
        return Err(Refusal::Forbidden(format!(
            "machine {name}: only an admin excludes a machine or lets it play again"
        )));
    }
    check_name(name).map_err(Refusal::Bad)?;
    st.store.blocking(|db| {
        if db.set_excluded(name, excluded)? {
            let what = if excluded {
                "excluded: no run plays on it"
            } else {
                "included again: runs may play on it"
            };
            action_log::record_in(
                db,
                caller.name(),
                Action::MachineExclude,
                Target::Machine(name),
                what,
            );
            let _ = db.event(None, "machine", &format!("{name} {what}"));
        }
        Ok(())
    })
}

/// The body of `POST /api/machines/{name}/exclude`.
#[derive(Deserialize)]
pub struct ExcludeBody {
    pub excluded: bool,
}

/// `POST /api/machines/{name}/exclude` with `{"excluded": true|false}`: the machine.
pub async fn exclude(
    State(st): State<Shared>,
    caller: Caller,
    Path(name): Path<String>,
    body: Result<Json<ExcludeBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(b) = body.map_err(|e| {
        Refusal::Bad(format!(
            "the body must be {{\"excluded\": true}} or {{\"excluded\": false}}: {}",
            e.body_text()
        ))
    })?;
    let n = name.clone();
    blocking(&st, move |st| set_excluded(st, &caller, &n, b.excluded)).await?;
    let (all, _) = known(&st);
    let m = all.into_iter().find(|m| m.name == name).unwrap_or_default();
    Ok(Json(json!(m)))
}

/// The machines page's exclude and include buttons.
#[derive(Deserialize)]
pub struct ExcludeForm {
    #[serde(default)]
    pub excluded: String,
}

/// `POST /machines/{name}/exclude` (`excluded=true|false`): back to the machines page, or
/// the refusal on a page of its own.
pub async fn exclude_form(
    State(st): State<Shared>,
    caller: Caller,
    Path(name): Path<String>,
    Form(f): Form<ExcludeForm>,
) -> Response {
    let excluded = match f.excluded.as_str() {
        "true" => true,
        "false" => false,
        other => {
            let r = Refusal::Bad(format!("excluded '{other}': true or false"));
            return refused(&Page::of(&caller), r);
        }
    };
    let page = Page::of(&caller);
    match blocking(&st, move |st| set_excluded(st, &caller, &name, excluded)).await {
        Ok(()) => Redirect::to("/machines#known").into_response(),
        Err(r) => refused(&page, r),
    }
}

fn refused(page: &Page, r: Refusal) -> Response {
    let code = StatusCode::from_u16(r.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let body = format!(
        "<p class=\"err\" id=\"error\">{}</p><p><a href=\"/machines\">The machines</a></p>",
        crate::serve::pages::html::esc(r.message())
    );
    (
        code,
        Html(crate::serve::pages::html::layout(
            page, "Machines", &body, "",
        )),
    )
        .into_response()
}
