//! The run a request names, read once from the path: [`RunId`] for the routes that show a
//! run, [`OwnRun`] for those that change one — it carries the owner check, so a route that
//! changes a run cannot forget it (DESIGN.md §13, "the caller is typed").
//!
//! Both read the id from the request's raw path (`/runs/ID/…` or `/api/runs/ID…`), the same
//! bytes the router matched, and accept only a plain decimal number without a leading zero:
//! `%31`, `%2B1`, `+1`, `01`, `1;x` or any other spelling is a 404 before any handler runs,
//! so no spelling of a path reaches a run by a way that another spelling's check does not.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};

use super::guard::refuse_for;
use super::Caller;
use crate::serve::pages::html::Page;
use crate::serve::state::Shared;

/// The id of the run a request's path names, checked to be a plain decimal number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunId(pub i64);

/// The run a state-changing request acts on, with its caller: on a server with accounts,
/// the caller is signed in and is the run's owner, an approver or an admin.
#[derive(Clone, Debug)]
pub struct OwnRun {
    /// The run's id.
    pub id: i64,
    /// Who asks (from the guard).
    pub caller: Caller,
}

/// The id spelled in a run route's path: the segment after `runs/`, when it is a plain
/// decimal number (ASCII digits, no sign, no leading zero, at most 18 digits); `None` for
/// any other spelling and for a path that is not a run's.
pub fn run_id_of(path: &str) -> Option<i64> {
    let rest = path.strip_prefix("/api").unwrap_or(path);
    let segment = rest.strip_prefix("/runs/")?.split('/').next()?;
    let plain = !segment.is_empty()
        && segment.len() <= 18
        && !segment.starts_with('0')
        && segment.bytes().all(|b| b.is_ascii_digit());
    if plain {
        segment.parse().ok()
    } else {
        None
    }
}

fn not_found(page: &Page, path: &str) -> Response {
    refuse_for(
        page,
        path,
        StatusCode::NOT_FOUND,
        "no such run: a run's id is a plain decimal number, as /runs/12",
    )
}

/// The page context of the caller the guard found (none: the refusal's page as without
/// accounts).
fn page_of(parts: &Parts) -> Page {
    parts
        .extensions
        .get::<Caller>()
        .map(Page::of)
        .unwrap_or_default()
}

impl FromRequestParts<Shared> for RunId {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &Shared) -> Result<Self, Response> {
        let path = parts.uri.path();
        run_id_of(path)
            .map(RunId)
            .ok_or_else(|| not_found(&page_of(parts), path))
    }
}

impl FromRequestParts<Shared> for OwnRun {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, st: &Shared) -> Result<Self, Response> {
        let RunId(id) = RunId::from_request_parts(parts, st).await?;
        let path = parts.uri.path().to_string();
        let page = page_of(parts);
        let refuse = |path: &str, code, m: &str| refuse_for(&page, path, code, m);
        let Some(caller) = parts.extensions.get::<Caller>().cloned() else {
            let m = "the request passed no accounts guard (a server bug: report it)";
            return Err(refuse(&path, StatusCode::INTERNAL_SERVER_ERROR, m));
        };
        if !caller.accounts {
            return Ok(OwnRun { id, caller });
        }
        let Some(user) = &caller.user else {
            // The guard refuses these first; kept so that no route depends on it.
            if path.starts_with("/api/") || parts.method != Method::POST {
                let m = "this server has accounts: sign in or send an API token";
                return Err(refuse(&path, StatusCode::UNAUTHORIZED, m));
            }
            return Err(Redirect::to("/login").into_response());
        };
        if caller.acts_on_any_run() {
            return Ok(OwnRun { id, caller });
        }
        let owner = st.store.read(move |db| db.run_owner(id)).await;
        match owner {
            // No such run: the handler answers its 404.
            Ok(None) => Ok(OwnRun { id, caller }),
            Ok(Some(Some(o))) if o == user.name => Ok(OwnRun { id, caller }),
            Ok(Some(owner)) => {
                let whose = match owner {
                    Some(o) => format!("run {id} is {o}'s"),
                    None => format!("run {id} was submitted before accounts"),
                };
                let m = format!("{whose}: only its owner, an approver or an admin may change it");
                Err(refuse(&path, StatusCode::FORBIDDEN, &m))
            }
            Err(e) => Err(refuse(&path, StatusCode::INTERNAL_SERVER_ERROR, &e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_decimal_id_is_a_run() {
        assert_eq!(run_id_of("/runs/12/stop"), Some(12));
        assert_eq!(run_id_of("/runs/12"), Some(12));
        assert_eq!(run_id_of("/api/runs/7"), Some(7));
        assert_eq!(run_id_of("/api/runs/7/note"), Some(7));
        for odd in [
            "/runs",
            "/api/runs",
            "/engines",
            "/runs/",
            "/runs/%31",
            "/runs/%2B1",
            "/runs/+1",
            "/runs/01",
            "/runs/0",
            "/runs/-1",
            "/runs/1;x",
            "/runs/%2531",
            "/runs/1%20",
            "/runs/ 1",
            "/runs/1e3",
            "/api/runs/%31/note",
            "/runs/9999999999999999999",
            "/runs/١",
        ] {
            assert_eq!(run_id_of(odd), None, "{odd}");
        }
    }
}
