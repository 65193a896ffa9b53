//! Registered engines: the JSON API (`GET/POST /api/engines`, `GET/PATCH/DELETE
//! /api/engines/{name}`), the engines page, its registration form and each engine's edit
//! and remove forms.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::{Extension, Form, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{blocking, ApiError};
use crate::serve::accounts::Caller;
use crate::serve::action_log::{self, Action, Target};
use crate::serve::actions::Refusal;
use crate::serve::builds;
use crate::serve::db::engines::Engine;
use crate::serve::engines::{self, Edit, Register};
use crate::serve::pages::engines::{self as page, EngineForm};
use crate::serve::state::Shared;

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

/// The outcome of an engine's registration, change or removal, recorded in the actions
/// log when it was done.
fn logged(
    st: &Shared,
    caller: &Caller,
    action: Action,
    r: Result<Engine, Refusal>,
) -> Result<Engine, Refusal> {
    if let Ok(e) = &r {
        let detail = match action {
            Action::EngineRemove => String::new(),
            _ => format!("{} (build {})", e.repo, e.build),
        };
        action_log::record(
            &st.db,
            caller.name(),
            action,
            Target::Engine(&e.name),
            &detail,
        );
    }
    r
}

/// `GET /api/engines`.
pub async fn list(State(st): State<Shared>) -> Result<Json<Value>, ApiError> {
    let all = st
        .db
        .lock()
        .expect("db lock")
        .engines()
        .map_err(Refusal::Internal)?;
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
    Extension(c): Extension<Caller>,
    Json(r): Json<Register>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let r = blocking(&st, move |st| {
        engines::register(st, &r).map_err(Refusal::from)
    })
    .await;
    let e = logged(&st, &c, Action::EngineRegister, r)?;
    Ok((StatusCode::CREATED, Json(engine_json(&st, &e))))
}

/// `PATCH /api/engines/{name}` with `{repo?, build?}`: the engine as changed (409 while a
/// queued or running run uses it).
pub async fn patch(
    State(st): State<Shared>,
    Extension(c): Extension<Caller>,
    Path(name): Path<String>,
    Json(ed): Json<Edit>,
) -> Result<Json<Value>, ApiError> {
    let r = blocking(&st, move |st| {
        engines::edit(st, &name, &ed).map_err(Refusal::from)
    })
    .await;
    let e = logged(&st, &c, Action::EngineChange, r)?;
    Ok(Json(engine_json(&st, &e)))
}

/// `DELETE /api/engines/{name}`: the engine, marked removed (409 while a queued or running
/// run uses it).
pub async fn remove(
    State(st): State<Shared>,
    Extension(c): Extension<Caller>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let r = blocking(&st, move |st| {
        engines::remove(st, &name).map_err(Refusal::from)
    })
    .await;
    let e = logged(&st, &c, Action::EngineRemove, r)?;
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

/// The engines page after an edit or a removal: back to it, or (refused) the page with
/// the message at the top and a 4xx.
fn after_change(st: &Shared, r: Result<Engine, Refusal>) -> Response {
    match r {
        Ok(e) => Redirect::to(&format!("/engines#engine-{}", e.name)).into_response(),
        Err(r) => {
            let form = EngineForm {
                build: "make".into(),
                change_error: Some(r.message().to_string()),
                ..EngineForm::default()
            };
            let code = StatusCode::from_u16(r.status()).unwrap_or(StatusCode::BAD_REQUEST);
            page_with(st, &form, code)
        }
    }
}

/// `POST /engines/{name}/edit`: a new repository or build.
pub async fn edit_form(
    State(st): State<Shared>,
    Extension(c): Extension<Caller>,
    Path(name): Path<String>,
    Form(f): Form<EditForm>,
) -> Response {
    let ed = Edit {
        repo: Some(f.repo),
        build: Some(f.build).filter(|b| !b.trim().is_empty()),
    };
    let r = blocking(&st, move |st| {
        engines::edit(st, &name, &ed).map_err(Refusal::from)
    })
    .await;
    after_change(&st, logged(&st, &c, Action::EngineChange, r))
}

/// `POST /engines/{name}/remove`.
pub async fn remove_form(
    State(st): State<Shared>,
    Extension(c): Extension<Caller>,
    Path(name): Path<String>,
) -> Response {
    let r = blocking(&st, move |st| {
        engines::remove(st, &name).map_err(Refusal::from)
    })
    .await;
    after_change(&st, logged(&st, &c, Action::EngineRemove, r))
}

fn page_with(st: &Shared, form: &EngineForm, code: StatusCode) -> Response {
    match st.db.lock().expect("db lock").engines() {
        Ok(all) => {
            let rows: Vec<(Engine, Vec<(String, u64)>)> = all
                .into_iter()
                .map(|e| {
                    let b = builds_of(st, &e.name);
                    (e, b)
                })
                .collect();
            (code, Html(page::page(&rows, form))).into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

/// `GET /engines`: the registered engines, their builds, the registration form.
pub async fn index(State(st): State<Shared>) -> Response {
    let form = EngineForm {
        build: "make".into(),
        ..EngineForm::default()
    };
    page_with(&st, &form, StatusCode::OK)
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
pub async fn submit(
    State(st): State<Shared>,
    Extension(c): Extension<Caller>,
    Form(f): Form<RegisterForm>,
) -> Response {
    let r = Register {
        name: f.name.clone(),
        repo: f.repo.clone(),
        build: Some(f.build.clone()),
    };
    let r = blocking(&st, move |st| {
        engines::register(st, &r).map_err(Refusal::from)
    })
    .await;
    match logged(&st, &c, Action::EngineRegister, r) {
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
            page_with(&st, &form, code)
        }
    }
}
