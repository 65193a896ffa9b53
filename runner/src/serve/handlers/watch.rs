//! Watched branches: an engine's watch settings (`GET/PUT/DELETE /api/engines/{name}/watch`,
//! the page `/engines/{name}/watch` and its forms), the push hook (`POST
//! /api/engines/{name}/push` with `Authorization: Bearer TOKEN`: it only asks the watcher's
//! thread for a look, and answers at once) and the progression (`/engines/{name}/progression`
//! and `GET /api/engines/{name}/progression`). No handler runs git.

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::{Form, Json};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{blocking, ApiError};
use crate::serve::accounts::Caller;
use crate::serve::actions::Refusal;
use crate::serve::db::watch::Watch;
use crate::serve::pages::html::Page;
use crate::serve::pages::watch::{self as page, WatchForm};
use crate::serve::state::Shared;
use crate::serve::watch::progression;
use crate::serve::watch::settings::{self, Settings};

/// The watch of engine `name` (active or not).
async fn watch_of(st: &Shared, name: &str) -> Result<Option<Watch>, Refusal> {
    let n = name.to_string();
    let w = st.store.read(move |db| db.watch(&n)).await?;
    Ok(w.map(|(w, _)| w))
}

/// `GET /api/engines/{name}/watch`: the settings (never the token), or `null`.
pub async fn get(
    State(st): State<Shared>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    crate::serve::engines::get(&st, &name).map_err(Refusal::from)?;
    Ok(Json(json!({ "watch": watch_of(&st, &name).await? })))
}

/// `PUT /api/engines/{name}/watch` with the settings (its owner or an admin): the settings,
/// and `token` when a new push token was made (the watch is new, or `rotate_token`).
pub async fn put(
    State(st): State<Shared>,
    c: Caller,
    Path(name): Path<String>,
    Json(s): Json<Settings>,
) -> Result<Json<Value>, ApiError> {
    let set = blocking(&st, move |st| {
        settings::set(st, &name, &s, &c).map_err(Refusal::from)
    })
    .await?;
    Ok(Json(json!({ "watch": set.watch, "token": set.token })))
}

/// `DELETE /api/engines/{name}/watch` (its owner or an admin): unwatched; the history stays.
pub async fn delete(
    State(st): State<Shared>,
    c: Caller,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let w = blocking(&st, move |st| {
        settings::unwatch(st, &name, &c).map_err(Refusal::from)
    })
    .await?;
    Ok(Json(json!({ "watch": w })))
}

/// The token of `Authorization: Bearer TOKEN`.
fn bearer(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    v.strip_prefix("Bearer ")
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// `POST /api/engines/{name}/push` (the push hook, `Authorization: Bearer TOKEN`): 202 at
/// once; the watcher's thread looks at the branch. 401 without a token, 403 with a wrong
/// one, 404 when the engine is not watched: nothing changes.
pub async fn push(
    State(st): State<Shared>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    let token = bearer(&headers);
    let n = name.clone();
    let done = tokio::task::spawn_blocking(move || settings::push(&st, &n, token.as_deref())).await;
    match done {
        Ok(Ok(branch)) => (
            StatusCode::ACCEPTED,
            Json(json!({ "engine": name, "branch": branch, "queued": true })),
        )
            .into_response(),
        Ok(Err((code, message))) => {
            let code = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST);
            (code, Json(json!({ "error": message }))).into_response()
        }
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({ "error": format!("the push failed: {e}") })),
        )
            .into_response(),
    }
}

/// The progression's query: the branch (default: the one watched) and the search.
#[derive(Debug, Default, Deserialize)]
pub struct ProgressionQuery {
    pub branch: Option<String>,
    pub q: Option<String>,
}

/// The progression of `name`'s branch, off the async threads.
async fn progression_of(
    st: &Shared,
    name: &str,
    q: &ProgressionQuery,
) -> Result<progression::Progression, Refusal> {
    crate::serve::engines::get(st, name).map_err(Refusal::from)?;
    let (n, b) = (
        name.to_string(),
        q.branch.clone().filter(|b| !b.trim().is_empty()),
    );
    blocking(st, move |st| {
        progression::of(st, &n, b.as_deref()).map_err(Refusal::Internal)
    })
    .await
}

/// `GET /api/engines/{name}/progression?branch=B&q=TEXT`: the commits (those that match
/// `q`), their numbers and the sums, the anchor tests, the batch tests and bisects.
pub async fn api_progression(
    State(st): State<Shared>,
    Path(name): Path<String>,
    Query(q): Query<ProgressionQuery>,
) -> Result<Json<Value>, ApiError> {
    let mut p = progression_of(&st, &name, &q).await?;
    let text = q.q.unwrap_or_default();
    p.points.retain(|x| progression::matches(&x.commit, &text));
    Ok(Json(serde_json::to_value(p).unwrap_or_default()))
}

/// `GET /engines/{name}/progression?branch=B&q=TEXT`: the page.
pub async fn progression_page(
    State(st): State<Shared>,
    pg: Page,
    Path(name): Path<String>,
    Query(q): Query<ProgressionQuery>,
) -> Response {
    match progression_of(&st, &name, &q).await {
        Ok(p) => Html(page::progression(&pg, &p, q.q.as_deref().unwrap_or(""))).into_response(),
        Err(r) => refused(&pg, r),
    }
}

fn refused(pg: &Page, r: Refusal) -> Response {
    let code = StatusCode::from_u16(r.status()).unwrap_or(StatusCode::BAD_REQUEST);
    crate::serve::accounts::guard::refuse_for(pg, "/engines", code, r.message())
}

/// `GET /engines/{name}/watch`: the settings page.
pub async fn settings_page(
    State(st): State<Shared>,
    pg: Page,
    Path(name): Path<String>,
) -> Response {
    if let Err(e) = crate::serve::engines::get(&st, &name) {
        return refused(&pg, Refusal::from(e));
    }
    match watch_of(&st, &name).await {
        Ok(w) => {
            let form = WatchForm::of(w.as_ref());
            Html(page::settings(&pg, &name, w.as_ref(), &form, None, None)).into_response()
        }
        Err(r) => refused(&pg, r),
    }
}

/// The form's fields as the settings (`Err`: a field that is no number, words that do not
/// split).
fn settings_of(f: &WatchForm) -> Result<Settings, String> {
    let words = |what: &str, s: &str| shell_words::split(s).map_err(|e| format!("{what}: {e}"));
    fn number<T: std::str::FromStr>(what: &str, s: &str) -> Result<Option<T>, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(None);
        }
        s.parse()
            .map(Some)
            .map_err(|_| format!("{what} '{s}': not a number"))
    }
    Ok(Settings {
        branch: f.branch.clone(),
        each: words("test words", &f.each)?,
        extra: words("extra words", &f.extra)?,
        elo0: number("elo0", &f.elo0)?,
        elo1: number("elo1", &f.elo1)?,
        anchor: f.anchor.clone(),
        anchor_games: number("anchor games", &f.anchor_games)?,
        anchor_every: number("anchor every", &f.anchor_every)?,
        poll: number("poll interval", &f.poll)?,
        rotate_token: !f.rotate_token.is_empty(),
    })
}

/// `POST /engines/{name}/watch`: sets the watch; the page again, with the push token when
/// one was made (shown this once), or with the refusal and a 4xx.
pub async fn settings_form(
    State(st): State<Shared>,
    c: Caller,
    Path(name): Path<String>,
    Form(f): Form<WatchForm>,
) -> Response {
    let pg = Page::of(&c);
    let s = match settings_of(&f) {
        Ok(s) => s,
        Err(m) => {
            let w = watch_of(&st, &name).await.ok().flatten();
            let body = page::settings(&pg, &name, w.as_ref(), &f, None, Some(&m));
            return (StatusCode::BAD_REQUEST, Html(body)).into_response();
        }
    };
    let n = name.clone();
    let r = blocking(&st, move |st| {
        settings::set(st, &n, &s, &c).map_err(Refusal::from)
    })
    .await;
    match r {
        Ok(set) => {
            let form = WatchForm::of(Some(&set.watch));
            let body = page::settings(
                &pg,
                &name,
                Some(&set.watch),
                &form,
                set.token.as_deref(),
                None,
            );
            Html(body).into_response()
        }
        Err(r) => {
            let w = watch_of(&st, &name).await.ok().flatten();
            let code = StatusCode::from_u16(r.status()).unwrap_or(StatusCode::BAD_REQUEST);
            let body = page::settings(&pg, &name, w.as_ref(), &f, None, Some(r.message()));
            (code, Html(body)).into_response()
        }
    }
}

/// `POST /engines/{name}/unwatch`: back to the settings page (a refusal: its page).
pub async fn unwatch_form(
    State(st): State<Shared>,
    c: Caller,
    Path(name): Path<String>,
) -> Response {
    let pg = Page::of(&c);
    let n = name.clone();
    let r = blocking(&st, move |st| {
        settings::unwatch(st, &n, &c).map_err(Refusal::from)
    })
    .await;
    match r {
        Ok(_) => Redirect::to(&format!("/engines/{name}/watch")).into_response(),
        Err(r) => refused(&pg, r),
    }
}
