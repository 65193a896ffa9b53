//! Registered engines: the JSON API (`GET/POST /api/engines`, `GET/PATCH/DELETE
//! /api/engines/{name}`, `POST /api/engines/{name}/approve`), the engines page, its
//! registration form and each engine's edit, remove and approve forms. Who may change an
//! engine is [`engines`]' to say; every action done or refused (403) is logged here.

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
use crate::serve::builds;
use crate::serve::db::engines::Engine;
use crate::serve::engines::{self, Edit, Edited, Register};
use crate::serve::pages::engines::{self as page, EngineForm};
use crate::serve::pages::html::Page;
use crate::serve::state::{AppState, Shared};

/// The cached builds of an engine: (sha, bench), by sha.
pub fn builds_of(st: &Shared, name: &str) -> Vec<(String, u64)> {
    let dir = st.data_dir.join("builds").join(name);
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let sha = e.file_name().into_string().ok()?;
            let bench = builds::cached_bench(&e.path())?;
            (!sha.starts_with('.')).then_some((sha, bench))
        })
        .collect();
    v.sort();
    v
}

fn engine_json(st: &Shared, e: &Engine) -> Value {
    let mut v = serde_json::to_value(e).unwrap_or_default();
    v["builds"] = builds_of(st, &e.name)
        .into_iter()
        .map(|(sha, bench)| json!({"sha": sha, "bench": bench}))
        .collect();
    v
}

/// The outcome of an engine's registration, change, removal or approval, recorded in the
/// actions log when it was done (`detail`: what was done, `None`: the engine's repository
/// and build) or refused because the caller may not (403: `engine-refused`, with the
/// message).
fn logged<T>(
    st: &Shared,
    caller: &Caller,
    action: Action,
    name: &str,
    r: Result<T, Refusal>,
    detail: impl Fn(&T) -> String,
) -> Result<T, Refusal> {
    let (action, detail) = match &r {
        Ok(done) => (action, detail(done)),
        Err(Refusal::Forbidden(m)) => (Action::EngineRefused, format!("{}: {m}", action.name())),
        Err(_) => return r,
    };
    action_log::record(
        &st.store,
        caller.name(),
        action,
        Target::Engine(name),
        &detail,
    );
    r
}

/// The detail of a registration or a change made: the repository and build.
fn repo_build(e: &Engine) -> String {
    format!("{} (build {})", e.repo, e.build)
}

/// The detail of an edit: the change made, or the change that waits for an approver.
fn edited(ed: &Edited) -> String {
    match (&ed.engine.pending, ed.waits) {
        (Some(p), true) => format!("{} (build {}): waits for an approver", p.repo, p.build),
        _ => repo_build(&ed.engine),
    }
}

/// `GET /api/engines`.
pub async fn list(State(st): State<Shared>) -> Result<Json<Value>, ApiError> {
    let all = st.store.read(|db| db.engines()).await;
    let all = all.map_err(Refusal::Internal)?;
    let list: Vec<Value> = all.iter().map(|e| engine_json(&st, e)).collect();
    Ok(Json(json!({ "engines": list })))
}

/// `GET /api/engines/{name}`.
pub async fn get(
    State(st): State<Shared>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let e = engines::get(&st, &name).map_err(Refusal::from)?;
    Ok(Json(engine_json(&st, &e)))
}

/// `POST /api/engines` with `{name, repo, build?}`: 201 and the engine.
pub async fn register(
    State(st): State<Shared>,
    c: Caller,
    Json(r): Json<Register>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let (name, owner) = (r.name.trim().to_string(), c.name().map(String::from));
    let r = blocking(&st, move |st| {
        engines::register(st, &r, owner.as_deref()).map_err(Refusal::from)
    })
    .await;
    let e = logged(&st, &c, Action::EngineRegister, &name, r, repo_build)?;
    Ok((StatusCode::CREATED, Json(engine_json(&st, &e))))
}

/// `PATCH /api/engines/{name}` with `{repo?, build?}` (its owner or an admin; 403
/// otherwise): the engine as changed (409 while a queued or running run uses it), or a
/// plain user's change stored to wait for an approver: 202 and the engine with `pending`.
pub async fn patch(
    State(st): State<Shared>,
    c: Caller,
    Path(name): Path<String>,
    Json(ed): Json<Edit>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let (n, c2) = (name.clone(), c.clone());
    let r = blocking(&st, move |st| {
        engines::edit(st, &n, &ed, &c2).map_err(Refusal::from)
    })
    .await;
    let ed = logged(&st, &c, Action::EngineChange, &name, r, edited)?;
    let code = if ed.waits {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok((code, Json(engine_json(&st, &ed.engine))))
}

/// `POST /api/engines/{name}/approve` (an approver or an admin, never who asked): the
/// engine with the change that waited made (409 when none waits, or while a queued or
/// running run uses it).
pub async fn approve(
    State(st): State<Shared>,
    c: Caller,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let e = changed(
        &st,
        &c,
        &name,
        Action::EngineApprove,
        engines::approve_change,
        repo_build,
    )
    .await?;
    Ok(Json(engine_json(&st, &e)))
}

/// `DELETE /api/engines/{name}` (its owner or an admin; 403 otherwise): the engine, marked
/// removed (409 while a queued or running run uses it).
pub async fn remove(
    State(st): State<Shared>,
    c: Caller,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let e = changed(
        &st,
        &c,
        &name,
        Action::EngineRemove,
        engines::remove,
        |_| String::new(),
    )
    .await?;
    Ok(Json(engine_json(&st, &e)))
}

/// An engine's edit form's fields.
#[derive(Deserialize)]
pub struct EditForm {
    #[serde(default)]
    pub repo: String,
    #[serde(default)]
    pub build: String,
}

/// The engines page after an edit, a removal or an approval: back to it, or (refused) the
/// page with the message at the top and a 4xx.
fn after_change(st: &Shared, c: &Caller, name: &str, r: Result<(), Refusal>) -> Response {
    match r {
        Ok(()) => Redirect::to(&format!("/engines#engine-{name}")).into_response(),
        Err(r) => {
            let form = EngineForm {
                build: "make".into(),
                change_error: Some(r.message().to_string()),
                ..EngineForm::default()
            };
            let code = StatusCode::from_u16(r.status()).unwrap_or(StatusCode::BAD_REQUEST);
            page_with(st, &Page::of(c), &form, code)
        }
    }
}

/// `POST /engines/{name}/edit`: a new repository or build.
pub async fn edit_form(
    State(st): State<Shared>,
    c: Caller,
    Path(name): Path<String>,
    Form(f): Form<EditForm>,
) -> Response {
    let ed = Edit {
        repo: Some(f.repo),
        build: Some(f.build).filter(|b| !b.trim().is_empty()),
    };
    let change = move |st: &AppState, n: &str, c: &Caller| engines::edit(st, n, &ed, c);
    form_change(st, c, name, Action::EngineChange, change, edited).await
}

/// `POST /engines/{name}/remove`.
pub async fn remove_form(
    State(st): State<Shared>,
    c: Caller,
    Path(name): Path<String>,
) -> Response {
    form_change(st, c, name, Action::EngineRemove, engines::remove, |_| {
        String::new()
    })
    .await
}

/// `POST /engines/{name}/approve`: an approver or an admin approves the change that waits.
pub async fn approve_form(
    State(st): State<Shared>,
    c: Caller,
    Path(name): Path<String>,
) -> Response {
    let change = engines::approve_change;
    form_change(st, c, name, Action::EngineApprove, change, repo_build).await
}

/// A form's change of engine `name` by `c` ([`changed`]), then the engines page
/// ([`after_change`]).
async fn form_change<T: Send + 'static>(
    st: Shared,
    c: Caller,
    name: String,
    action: Action,
    change: impl FnOnce(&AppState, &str, &Caller) -> Result<T, engines::Refused> + Send + 'static,
    detail: impl Fn(&T) -> String,
) -> Response {
    let r = changed(&st, &c, &name, action, change, detail).await;
    after_change(&st, &c, &name, r.map(|_| ()))
}

/// A change of engine `name` by `c`: `change` off the async threads, logged as `action`
/// with `detail`.
async fn changed<T: Send + 'static>(
    st: &Shared,
    c: &Caller,
    name: &str,
    action: Action,
    change: impl FnOnce(&AppState, &str, &Caller) -> Result<T, engines::Refused> + Send + 'static,
    detail: impl Fn(&T) -> String,
) -> Result<T, Refusal> {
    let (n, c2) = (name.to_string(), c.clone());
    let r = blocking(st, move |st| change(st, &n, &c2).map_err(Refusal::from)).await;
    logged(st, c, action, name, r, detail)
}

fn page_with(st: &Shared, pg: &Page, form: &EngineForm, code: StatusCode) -> Response {
    match st.store.blocking(|db| db.engines()) {
        Ok(all) => {
            let rows: Vec<(Engine, Vec<(String, u64)>)> = all
                .into_iter()
                .map(|e| {
                    let b = builds_of(st, &e.name);
                    (e, b)
                })
                .collect();
            (code, Html(page::page(pg, &rows, form))).into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

/// `GET /engines`: the registered engines, their builds, the registration form.
pub async fn index(State(st): State<Shared>, pg: Page) -> Response {
    let form = EngineForm {
        build: "make".into(),
        ..EngineForm::default()
    };
    page_with(&st, &pg, &form, StatusCode::OK)
}

/// The registration form's fields.
#[derive(Deserialize)]
pub struct RegisterForm {
    pub name: String,
    pub repo: String,
    #[serde(default)]
    pub build: String,
}

/// `POST /engines`: registers, then back to the engines page (a refusal: the form again
/// with the message and a 4xx).
pub async fn submit(State(st): State<Shared>, c: Caller, Form(f): Form<RegisterForm>) -> Response {
    let r = Register {
        name: f.name.clone(),
        repo: f.repo.clone(),
        build: Some(f.build.clone()),
    };
    let owner = c.name().map(String::from);
    let r = blocking(&st, move |st| {
        engines::register(st, &r, owner.as_deref()).map_err(Refusal::from)
    })
    .await;
    match logged(
        &st,
        &c,
        Action::EngineRegister,
        f.name.trim(),
        r,
        repo_build,
    ) {
        Ok(e) => Redirect::to(&format!("/engines#engine-{}", e.name)).into_response(),
        Err(r) => {
            let form = EngineForm {
                name: f.name,
                repo: f.repo,
                build: f.build,
                error: Some(r.message().to_string()),
                change_error: None,
            };
            let code = StatusCode::from_u16(r.status()).unwrap_or(StatusCode::BAD_REQUEST);
            page_with(&st, &Page::of(&c), &form, code)
        }
    }
}
