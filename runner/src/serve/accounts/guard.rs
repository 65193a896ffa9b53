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
//! On a server with accounts, a state-changing request other than `/login` and `/signup`:
//!
//! - needs an account: 401 on the API (`/api/…`), a redirect to `/login` on a page;
//! - made with the session cookie, needs the session's CSRF token: the form field `csrf`
//!   (URL-encoded forms), the header `X-CSRF-Token`, or the query parameter `csrf`
//!   (403 otherwise); API tokens need none (a browser never sends them by itself).
//!
//! A run's owner is checked by the run routes' extractor ([`super::run_access::OwnRun`]),
//! which reads the run id exactly as the handler gets it.
//!
//! And on such a server every HTML page it answers is given, for a signed-in session, the
//! CSRF field in each `<form method="post">` (so forms added to any page later carry it
//! without a line of their own), and the account's links in place of the layout's
//! [`ACCOUNT_MARK`]. A server without accounts is left exactly as it was.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Json;

use super::{csrf_of, same_origin, token_hash, Caller, COOKIE};
use crate::serve::pages::html::{esc, layout, ACCOUNT_MARK};
use crate::serve::state::Shared;

/// The largest form body read for its CSRF field, and the largest page rewritten.
const FORM_LIMIT: usize = 2 << 20;
const PAGE_LIMIT: usize = 64 << 20;

/// The paths anyone may post to: signing in and signing up.
const OPEN: &[&str] = &["/login", "/signup"];

/// The paths posted to while a server with accounts has no admin: signing in and out.
const NO_ADMIN_OPEN: &[&str] = &["/login", "/logout"];

/// The middleware (see the module's documentation).
pub async fn guard(State(st): State<Shared>, mut req: Request, next: Next) -> Response {
    let session = cookie(req.headers(), COOKIE);
    let bearer = bearer(req.headers());
    let found = {
        let db = st.db.lock().expect("db lock");
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
    };
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
    if accounts && changes && !OPEN.contains(&path.as_str()) {
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
    let rewrite = caller.accounts;
    let links = account_links(&caller);
    let csrf = caller.csrf.clone();
    req.extensions_mut().insert(caller);
    let response = next.run(req).await;
    if !rewrite {
        return response;
    }
    rewrite_page(response, &links, csrf.as_deref()).await
}

/// A refusal: `{"error": …}` on the API, a page with the message otherwise.
pub fn refuse(path: &str, code: StatusCode, message: &str) -> Response {
    if path.starts_with("/api/") {
        return (code, Json(serde_json::json!({ "error": message }))).into_response();
    }
    let body = format!(
        "<p class=\"err\" id=\"error\">{}</p><p><a href=\"/\">Back to the runs</a></p>",
        esc(message)
    );
    (code, Html(layout("Refused", &body, ""))).into_response()
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

/// The navigation's account links: the account, the users page for an admin, sign out;
/// or sign in and sign up.
fn account_links(caller: &Caller) -> String {
    match &caller.user {
        Some(u) => format!(
            " · <a href=\"/account\">{}</a>{} · <form class=\"inline\" method=\"post\" \
             action=\"/logout\"><button>sign out</button></form>",
            esc(&u.name),
            if u.role == "admin" {
                " · <a href=\"/users\">users</a>"
            } else {
                ""
            }
        ),
        None => " · <a href=\"/login\">sign in</a> · <a href=\"/signup\">sign up</a>".into(),
    }
}

/// An HTML page with the account links in place of [`ACCOUNT_MARK`] and, for a session,
/// the CSRF field in each POST form; any other response as it is.
async fn rewrite_page(response: Response, links: &str, csrf: Option<&str>) -> Response {
    let html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if !html {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, PAGE_LIMIT).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let Ok(text) = String::from_utf8(bytes.to_vec()) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let text = text.replacen(ACCOUNT_MARK, links, 1);
    let text = match csrf {
        Some(c) => with_csrf(&text, c),
        None => text,
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

/// `html` with `<input type="hidden" name="csrf" value="TOKEN">` right after the opening
/// tag of every form whose method is POST.
pub fn with_csrf(html: &str, token: &str) -> String {
    let field = format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        esc(token)
    );
    let mut out = String::with_capacity(html.len() + 256);
    // ASCII lower case keeps every byte offset: search it, copy from the page.
    let lower = html.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("<form").map(|i| from + i) {
        let Some(end) = lower[at..].find('>').map(|i| at + i + 1) else {
            break;
        };
        out.push_str(&html[from..end]);
        let tag = lower[at..end].replace('\'', "\"");
        if tag.contains("method=\"post\"") || tag.contains("method=post") {
            out.push_str(&field);
        }
        from = end;
    }
    let rest = &html[from..];
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_post_form_gets_the_field_and_no_other() {
        let page = "<p>x</p><form method=\"post\" action=\"/a\"><button></button></form>\
                    <form action=\"/search\"></form><FORM METHOD='POST' action=/b></FORM>";
        let out = with_csrf(page, "abc");
        let field = "<input type=\"hidden\" name=\"csrf\" value=\"abc\">";
        assert_eq!(out.matches(field).count(), 2, "{out}");
        assert!(out.contains(&format!("action=\"/a\">{field}")));
        assert!(out.contains("<form action=\"/search\"></form><FORM"));
        assert!(out.contains(&format!("action=/b>{field}")));
        assert_eq!(with_csrf("<form method=post", "t"), "<form method=post");
    }

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
}
