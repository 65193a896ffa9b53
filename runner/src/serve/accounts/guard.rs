//! The one middleware every request passes (`router.rs` layers it over the whole router,
//! so a route added later is covered without a line of its own). It finds the caller —
//! the session cookie or `Authorization: Bearer TOKEN` — and puts a [`Caller`] in the
//! request's extensions. A state-changing request (any method but GET, HEAD, OPTIONS):
//!
//! - made cross-site by a browser (`Sec-Fetch-Site`, else `Origin`) is refused (403), on
//!   every server: sign-in and sign-up included (no login CSRF);
//! - on a server whose accounts have no active admin, is refused (503) but for signing in
//!   and out, until `spar serve --add-admin` makes one: a server with accounts never falls
//!   back to the one-person mode.
//!
//! On a server with accounts, a state-changing request other than `/login`, `/signup` and a
//! watched branch's push hook (`/api/engines/NAME/push`, which checks its own token):
//!
//! - needs an account: 401 on the API (`/api/…`), a redirect to `/login` on a page;
//! - made with the session cookie, needs the session's CSRF token: the form field `csrf`
//!   (URL-encoded forms), the header `X-CSRF-Token`, or the query parameter `csrf`
//!   (403 otherwise); API tokens need none (a browser never sends them by itself).
//!
//! A run's owner is checked by the run routes' extractor ([`super::run_access::OwnRun`]),
//! which reads the run id exactly as the handler gets it.
//!
//! The guard never rewrites an answer: a handler takes the caller as an extractor
//! ([`Caller`], or the page context [`Page`] of `accounts/page.rs`), and a page renders the
//! account links (through the layout) and the CSRF field of each of its POST forms itself
//! (`runner/tests/serve_pages_csrf.rs` walks every page to check that none lacks it).

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Json;

use super::{csrf_of, same_origin, token_hash, Caller, COOKIE};
use crate::serve::pages::html::{esc, layout, Page};
use crate::serve::state::Shared;

/// The largest form body read for its CSRF field.
const FORM_LIMIT: usize = 2 << 20;

/// The paths anyone may post to: signing in and signing up.
const OPEN: &[&str] = &["/login", "/signup"];

/// The paths posted to while a server with accounts has no admin: signing in and out.
const NO_ADMIN_OPEN: &[&str] = &["/login", "/logout"];

/// The middleware (see the module's documentation).
pub async fn guard(State(st): State<Shared>, mut req: Request, next: Next) -> Response {
    // Only its POST: any other method on the path is refused as on every route.
    let hook = req.method() == Method::POST && is_push_hook(req.uri().path());
    let session = cookie(req.headers(), COOKIE);
    // A push hook's bearer is its watch's push token, which its handler checks.
    let bearer = bearer(req.headers()).filter(|_| !hook);
    let (session_in, bearer_in) = (session.clone(), bearer.clone());
    let found = st.store.read(move |db| {
        let (session, bearer) = (session_in, bearer_in);
        db.accounts().and_then(|(accounts, admin)| {
            if !accounts {
                return Ok((false, false, None, None));
            }
            if let Some(t) = &bearer {
                return Ok((true, admin, db.token_user(&token_hash(t))?, None));
            }
            match &session {
                Some(s) => {
                    let user = db.session_user(&token_hash(s))?;
                    Ok((true, admin, user, Some(csrf_of(s))))
                }
                None => Ok((true, admin, None, None)),
            }
        })
    });
    let found = found.await;
    let (accounts, admin, user, csrf) = match found {
        Ok(f) => f,
        Err(e) => return refuse(req.uri().path(), StatusCode::INTERNAL_SERVER_ERROR, &e),
    };
    let caller = Caller {
        csrf: user.as_ref().and(csrf),
        user,
        accounts,
    };
    let path = req.uri().path().to_string();
    let changes = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if changes {
        if let Some(why) = same_origin::cross_site(req.headers()) {
            let m = format!(
                "a cross-site request ({why}) is refused: send the form from this server's own                  pages"
            );
            return refuse(&path, StatusCode::FORBIDDEN, &m);
        }
    }
    if accounts && !admin && changes && !NO_ADMIN_OPEN.contains(&path.as_str()) {
        return refuse(
            &path,
            StatusCode::SERVICE_UNAVAILABLE,
            "this server has accounts but no active admin: every change is refused until one              is made with `spar serve --data-dir DIR --add-admin NAME`",
        );
    }
    if accounts && changes && !OPEN.contains(&path.as_str()) && !hook {
        if bearer.is_some() && caller.user.is_none() {
            return refuse(
                "/api/",
                StatusCode::UNAUTHORIZED,
                "the API token is unknown or revoked: make one on /account",
            );
        }
        if caller.user.is_none() {
            if path.starts_with("/api/") {
                return refuse(
                    &path,
                    StatusCode::UNAUTHORIZED,
                    "this server has accounts: send an API token (spar submit --token TOKEN, or \
                     the header Authorization: Bearer TOKEN; make one on /account) or sign in",
                );
            }
            return Redirect::to("/login").into_response();
        }
        if let Some(expected) = &caller.csrf {
            let (sent, rebuilt) = sent_csrf(req).await;
            req = match rebuilt {
                Ok(r) => r,
                Err(response) => return response,
            };
            if sent.as_deref() != Some(expected.as_str()) {
                return refuse(
                    &path,
                    StatusCode::FORBIDDEN,
                    "the request's CSRF token is missing or wrong: reload the page and send \
                     the form again (scripts: send the header X-CSRF-Token)",
                );
            }
        }
    }
    req.extensions_mut().insert(caller);
    next.run(req).await
}

/// A refusal made before the caller is known (by the guard, the body limits): `{"error":
/// …}` on the API, a page with the message otherwise (its navigation as without accounts).
pub fn refuse(path: &str, code: StatusCode, message: &str) -> Response {
    refuse_for(&Page::default(), path, code, message)
}

/// A refusal for the caller of `page`: `{"error": …}` on the API, a page with the
/// message and `page`'s account links otherwise.
pub fn refuse_for(page: &Page, path: &str, code: StatusCode, message: &str) -> Response {
    if path.starts_with("/api/") {
        return (code, Json(serde_json::json!({ "error": message }))).into_response();
    }
    let body = format!(
        "<p class=\"err\" id=\"error\">{}</p><p><a href=\"/\">Back to the runs</a></p>",
        esc(message)
    );
    (code, Html(layout(page, "Refused", &body, ""))).into_response()
}

/// Whether `path` is a watched branch's push hook (`/api/engines/NAME/push`): a forge
/// calls it with the watch's push token, no account (serve/watch/settings.rs checks it; the
/// hook only asks for a look at the branch).
fn is_push_hook(path: &str) -> bool {
    path.strip_prefix("/api/engines/")
        .and_then(|rest| rest.strip_suffix("/push"))
        .is_some_and(|name| !name.is_empty() && !name.contains('/'))
}

/// The value of cookie `name`.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    v.strip_prefix("Bearer ")
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// The CSRF token a request carries (header, query, or URL-encoded form field), and the
/// request rebuilt around its body (read for the field); `Err`: a body too large.
async fn sent_csrf(req: Request) -> (Option<String>, Result<Request, Response>) {
    if let Some(v) = req
        .headers()
        .get("x-csrf-token")
        .and_then(|v| v.to_str().ok())
    {
        return (Some(v.trim().to_string()), Ok(req));
    }
    if let Some(v) = req.uri().query().and_then(|q| field(q, "csrf")) {
        return (Some(v), Ok(req));
    }
    let form = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if !form {
        return (None, Ok(req));
    }
    let (parts, body) = req.into_parts();
    let bytes: Bytes = match axum::body::to_bytes(body, FORM_LIMIT).await {
        Ok(b) => b,
        Err(_) => {
            let path = parts.uri.path().to_string();
            let message = format!("the form is larger than {FORM_LIMIT} bytes");
            return (
                None,
                Err(refuse(&path, StatusCode::PAYLOAD_TOO_LARGE, &message)),
            );
        }
    };
    let sent = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|b| field(b, "csrf"));
    (sent, Ok(Request::from_parts(parts, Body::from(bytes))))
}

/// The raw value of `name` in `a=1&b=2` (a CSRF token is hex: it needs no decoding).
fn field(encoded: &str, name: &str) -> Option<String> {
    encoded
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_and_form_fields_are_found_by_name() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            "a=1; spar_session=tok; b=2".parse().unwrap(),
        );
        assert_eq!(cookie(&h, "spar_session").as_deref(), Some("tok"));
        assert_eq!(cookie(&h, "c"), None);
        assert_eq!(field("x=1&csrf=ff&y=", "csrf").as_deref(), Some("ff"));
        assert_eq!(field("x=1", "csrf"), None);
    }

    #[test]
    fn only_an_engines_push_hook_is_one() {
        assert!(is_push_hook("/api/engines/stash/push"));
        for not in [
            "/api/engines//push",
            "/api/engines/a/b/push",
            "/api/engines/a",
            "/push",
        ] {
            assert!(!is_push_hook(not), "{not}");
        }
    }
}
