//! Nets: the JSON API (`GET/POST /api/nets`, `GET/DELETE /api/nets/{name}`, `POST
//! /api/engines/{engine}/net`), the nets page, its upload form (multipart, streamed), its
//! default-net form and each net's remove button.

use std::collections::HashMap;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::{Form, Json};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::serve::accounts::Caller;
use crate::serve::nets::multipart::{self, Multipart};
use crate::serve::nets::{self, Incoming, Refused};
use crate::serve::pages::html::Page;
use crate::serve::pages::nets::{self as page, Listed, NetsForm};
use crate::serve::state::{AppState, Shared};

/// A refusal as the API answers it.
fn api_error(r: Refused) -> Response {
    let code = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
    (code, Json(json!({ "error": r.message }))).into_response()
}

/// Runs a blocking net action off the async threads.
async fn blocking<T: Send + 'static>(
    st: &Shared,
    f: impl FnOnce(&AppState) -> Result<T, Refused> + Send + 'static,
) -> Result<T, Refused> {
    let st = st.clone();
    tokio::task::spawn_blocking(move || f(&st))
        .await
        .map_err(|e| Refused::from(format!("the action failed: {e}")))?
}

/// Every net with the engines it is the default of and the runs that used it.
fn listed(st: &AppState) -> Result<Vec<Listed>, String> {
    st.store.blocking(|db| {
        let defaults = db.default_nets()?;
        db.nets()?
            .into_iter()
            .map(|net| {
                let default_for = defaults
                    .iter()
                    .filter(|(_, n)| *n == net.name)
                    .map(|(e, _)| e.clone())
                    .collect();
                let runs = db.runs_using_net(&net.name)?;
                Ok(Listed {
                    net,
                    default_for,
                    runs,
                })
            })
            .collect()
    })
}

fn listed_json(l: &Listed) -> Value {
    let mut v = serde_json::to_value(&l.net).unwrap_or_default();
    v["short"] = json!(page::short(&l.net.sha));
    v["default_for"] = json!(l.default_for);
    v["runs"] = json!(l.runs);
    v
}

/// `GET /api/nets`: `{"nets": [...]}`.
pub async fn list(State(st): State<Shared>) -> Response {
    match listed(&st) {
        Ok(all) => {
            Json(json!({ "nets": all.iter().map(listed_json).collect::<Vec<_>>() })).into_response()
        }
        Err(e) => api_error(Refused::from(e)),
    }
}

/// `GET /api/nets/{name}`.
pub async fn get(State(st): State<Shared>, Path(name): Path<String>) -> Response {
    match listed(&st) {
        Ok(all) => match all.iter().find(|l| l.net.name == name) {
            Some(l) => Json(listed_json(l)).into_response(),
            None => api_error(
                nets::get(&st, &name)
                    .err()
                    .unwrap_or_else(|| Refused::from(format!("net {name}: listed nowhere"))),
            ),
        },
        Err(e) => api_error(Refused::from(e)),
    }
}

/// What an upload names in its query.
#[derive(Deserialize)]
pub struct UploadQuery {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub engine: String,
}

/// 413 at once when the declared length is beyond the limit.
fn declared_too_large(headers: &HeaderMap, limit: u64) -> Result<(), Refused> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > limit => Err(nets::too_large(limit)),
        _ => Ok(()),
    }
}

/// `POST /api/nets?name=NAME&engine=ENGINE` with the file as the body: 201 and the net.
pub async fn upload(
    State(st): State<Shared>,
    caller: Caller,
    Query(q): Query<UploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (name, engine) = (q.name.trim().to_string(), q.engine.trim().to_string());
    let received = async {
        nets::check_upload(&st, &name, &engine)?;
        declared_too_large(&headers, st.net_limit)?;
        let mut incoming = Incoming::new(&st, st.net_limit)?;
        let mut stream = body.into_data_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| Refused::bad(format!("the upload broke off: {e}")))?;
            incoming.write(&chunk)?;
        }
        Ok::<Incoming, Refused>(incoming)
    };
    let incoming = match received.await {
        Ok(i) => i,
        Err(r) => return api_error(r),
    };
    let uploader = caller.name().map(String::from);
    match blocking(&st, move |st| {
        nets::store(st, incoming, &name, &engine, uploader.as_deref())
    })
    .await
    {
        Ok(net) => {
            let l = Listed {
                net,
                default_for: Vec::new(),
                runs: Vec::new(),
            };
            (StatusCode::CREATED, Json(listed_json(&l))).into_response()
        }
        Err(r) => api_error(r),
    }
}

/// Whether the caller may remove net `name`: its uploader, an approver or an admin (on a
/// server without accounts, anyone).
fn may_remove(st: &AppState, caller: &Caller, name: &str) -> Result<(), Refused> {
    if !caller.accounts || caller.acts_on_any_run() {
        return Ok(());
    }
    let net = nets::get(st, name)?;
    if net.uploader.is_some() && net.uploader.as_deref() == caller.name() {
        return Ok(());
    }
    Err(Refused {
        status: 403,
        message: format!("net {name}: only its uploader, an approver or an admin may remove it"),
    })
}

/// `DELETE /api/nets/{name}`: the net removed (409 with the run ids when a run used it).
pub async fn remove(
    State(st): State<Shared>,
    caller: Caller,
    Path(name): Path<String>,
) -> Response {
    let r = blocking(&st, move |st| {
        may_remove(st, &caller, &name)?;
        nets::remove(st, &name, caller.name())
    })
    .await;
    match r {
        Ok(net) => Json(json!({ "removed": net })).into_response(),
        Err(r) => api_error(r),
    }
}

/// A default-net change: the net's name (none or empty: no default).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetDefault {
    pub net: Option<String>,
}

fn set_default_as(
    st: &AppState,
    caller: &Caller,
    engine: &str,
    net: Option<&str>,
) -> Result<Option<crate::serve::db::nets::Net>, Refused> {
    if caller.accounts && !caller.acts_on_any_run() {
        return Err(Refused {
            status: 403,
            message: format!(
                "engine {engine}: only an approver or an admin sets an engine's default net"
            ),
        });
    }
    nets::set_default(st, engine, net, caller.name())
}

/// `POST /api/engines/{engine}/net` with `{"net": NAME}` (`null` or `""`: none): the
/// default net of a registered engine or of `embedded`.
pub async fn set_default(
    State(st): State<Shared>,
    caller: Caller,
    Path(engine): Path<String>,
    Json(s): Json<SetDefault>,
) -> Response {
    let r = blocking(&st, move |st| {
        set_default_as(st, &caller, &engine, s.net.as_deref()).map(|n| (engine, n))
    })
    .await;
    match r {
        Ok((engine, n)) => Json(json!({ "engine": engine, "net": n })).into_response(),
        Err(r) => api_error(r),
    }
}

/// The nets page with the form as given (`code`: 200, or the refusal's status).
fn page_with(st: &Shared, caller: &Caller, form: &NetsForm, code: StatusCode) -> Response {
    let engines = st.store.blocking(|db| db.engines()).map(|all| {
        all.into_iter()
            .filter(|e| e.removed.is_none())
            .map(|e| e.name)
            .collect::<Vec<_>>()
    });
    match listed(st).and_then(|l| Ok((l, engines?))) {
        Ok((all, engines)) => (
            code,
            Html(page::page(&Page::of(caller), &all, &engines, form)),
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

fn refused_page(st: &Shared, caller: &Caller, mut form: NetsForm, r: Refused) -> Response {
    form.error = Some(r.message);
    let code = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
    page_with(st, caller, &form, code)
}

/// `GET /nets`.
pub async fn index(State(st): State<Shared>, caller: Caller) -> Response {
    page_with(&st, &caller, &NetsForm::default(), StatusCode::OK)
}

/// `POST /nets`: the upload form (`multipart/form-data`: `name`, `engine`, then `file`),
/// its file streamed to disk as it arrives; back to the page, or the page with the
/// message and a 4xx.
pub async fn upload_form(
    State(st): State<Shared>,
    caller: Caller,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let boundary = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(multipart::boundary);
    let received = async {
        let Some(boundary) = boundary else {
            return Err(Refused::bad(
                "the upload form must be sent as multipart/form-data",
            ));
        };
        declared_too_large(&headers, st.net_limit)?;
        let mut incoming = Incoming::new(&st, st.net_limit)?;
        let mut parts = Multipart::new(&boundary);
        let mut stream = body.into_data_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| Refused::bad(format!("the upload broke off: {e}")))?;
            parts
                .feed(&chunk, &mut |b| incoming.write(b))
                .map_err(|e| e.map_or_else(|r| r, Refused::bad))?;
        }
        let fields: HashMap<String, String> = parts.finish().map_err(Refused::bad)?;
        Ok::<_, Refused>((incoming, fields))
    };
    let (incoming, fields) = match received.await {
        Ok(x) => x,
        Err(r) => return refused_page(&st, &caller, NetsForm::default(), r),
    };
    let field = |k: &str| {
        fields
            .get(k)
            .map_or(String::new(), |v| v.trim().to_string())
    };
    let form = NetsForm {
        name: field("name"),
        engine: field("engine"),
        error: None,
    };
    let (name, engine) = (form.name.clone(), form.engine.clone());
    let uploader = caller.name().map(String::from);
    let r = blocking(&st, move |st| {
        nets::store(st, incoming, &name, &engine, uploader.as_deref())
    })
    .await;
    match r {
        Ok(n) => Redirect::to(&format!("/nets#net-{}", n.name)).into_response(),
        Err(r) => refused_page(&st, &caller, form, r),
    }
}

/// `POST /nets/{name}/remove`.
pub async fn remove_form(
    State(st): State<Shared>,
    caller: Caller,
    Path(name): Path<String>,
) -> Response {
    let c = caller.clone();
    let r = blocking(&st, move |st| {
        may_remove(st, &c, &name)?;
        nets::remove(st, &name, c.name())
    })
    .await;
    match r {
        Ok(_) => Redirect::to("/nets").into_response(),
        Err(r) => refused_page(&st, &caller, NetsForm::default(), r),
    }
}

/// The default-net form's fields.
#[derive(Deserialize)]
pub struct DefaultForm {
    #[serde(default)]
    pub engine: String,
    #[serde(default)]
    pub net: String,
}

/// `POST /nets/default`.
pub async fn default_form(
    State(st): State<Shared>,
    caller: Caller,
    Form(f): Form<DefaultForm>,
) -> Response {
    let c = caller.clone();
    let r = blocking(&st, move |st| {
        set_default_as(st, &c, f.engine.trim(), Some(f.net.as_str()))
    })
    .await;
    match r {
        Ok(_) => Redirect::to("/nets").into_response(),
        Err(r) => refused_page(&st, &caller, NetsForm::default(), r),
    }
}
