//! Bounded requests: every request body has a limit by the class of its route, checked by
//! one middleware ([`bound`], the outermost layer of `router.rs`) before anything reads
//! it. A body over its limit is a 413 with the limit in the message (`{"error": …}` on the
//! API, a page otherwise): refused at once when its `Content-Length` says so, else (a
//! chunked body) when the reading passes the limit. Headers are bounded by hyper's own
//! defaults (at most 100 headers and about 400 KiB of request head: 431 beyond). A route
//! that takes larger bodies (an upload) gets a class of its own in [`limit_of`].

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use super::accounts::guard::refuse;

/// The largest body of a JSON API request (`/api/…`): a run's words, an engine.
pub const API_LIMIT: usize = 1 << 20;

/// The largest body of a page's form (a new run, a note, an engine, a token's label).
pub const FORM_LIMIT: usize = 256 << 10;

/// The largest body of a sign-in or sign-up (`/login`, `/signup`): a name and a password.
pub const SIGN_IN_LIMIT: usize = 16 << 10;

/// The limit of a request to `path`, and the name of its class for the message.
pub fn limit_of(path: &str) -> (usize, &'static str) {
    if path.starts_with("/api/") || path == "/api" {
        (API_LIMIT, "an API request")
    } else if path == "/login" || path == "/signup" {
        (SIGN_IN_LIMIT, "a sign-in or sign-up")
    } else {
        (FORM_LIMIT, "a form")
    }
}

/// Whether `path` takes a net upload (`/api/nets`, `/nets`): its body is streamed to disk
/// by its handler, which bounds it by `--net-limit` itself (a 413 beyond), so it is
/// neither read into memory nor bounded here.
pub fn is_upload(path: &str) -> bool {
    path == "/api/nets" || path == "/nets"
}

/// The middleware: the request with its body read (at most its limit), or a 413.
pub async fn bound(req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    if is_upload(&path) {
        return next.run(req).await;
    }
    let (limit, class) = limit_of(&path);
    let too_large = |size: String| {
        refuse(
            &path,
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the request body is {size}: {class} may send at most {limit} bytes \
                 (docs/serve.md, Bounded requests)"
            ),
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(n) = declared {
        if n > limit as u64 {
            return too_large(format!("{n} bytes"));
        }
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(e) => {
            let inner = e.into_inner();
            if inner.is::<http_body_util::LengthLimitError>() {
                return too_large(format!("over {limit} bytes"));
            }
            return refuse(
                &path,
                StatusCode::BAD_REQUEST,
                &format!("cannot read the request body: {inner}"),
            );
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_of_route_has_its_limit() {
        assert_eq!(limit_of("/api/runs").0, API_LIMIT);
        assert_eq!(limit_of("/api/engines/x").0, API_LIMIT);
        assert_eq!(limit_of("/login").0, SIGN_IN_LIMIT);
        assert_eq!(limit_of("/signup").0, SIGN_IN_LIMIT);
        assert_eq!(limit_of("/runs").0, FORM_LIMIT);
        assert_eq!(limit_of("/runs/3/note").0, FORM_LIMIT);
        assert_eq!(limit_of("/apix").0, FORM_LIMIT);
        assert!(is_upload("/api/nets") && is_upload("/nets"));
        assert!(!is_upload("/nets/default") && !is_upload("/api/nets/n1"));
        const { assert!(SIGN_IN_LIMIT < FORM_LIMIT && FORM_LIMIT < API_LIMIT) };
    }
}
