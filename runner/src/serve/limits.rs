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
    if let Err(why) = check_text(&parts.headers, &bytes) {
        return refuse(&path, StatusCode::BAD_REQUEST, &why);
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Checks that what a body says is text a command line can hold: every field of a
/// URL-encoded form valid UTF-8 once decoded (no silent replacement by U+FFFD), and no NUL
/// byte in a form's field or a JSON body's string (an argv cannot hold one). `Err` names
/// the field and what is wrong.
pub fn check_text(headers: &axum::http::HeaderMap, body: &[u8]) -> Result<(), String> {
    let kind = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if kind.starts_with("application/x-www-form-urlencoded") {
        for pair in body.split(|&b| b == b'&') {
            let mut kv = pair.splitn(2, |&b| b == b'=');
            let key = decode(kv.next().unwrap_or_default());
            let value = decode(kv.next().unwrap_or_default());
            let shown = String::from_utf8_lossy(&key).into_owned();
            let shown = super::api_errors::shorten(&shown);
            if std::str::from_utf8(&key).is_err() || std::str::from_utf8(&value).is_err() {
                return Err(format!(
                    "the form's field '{shown}' is not valid UTF-8: send the form as UTF-8 text"
                ));
            }
            if key.contains(&0) || value.contains(&0) {
                return Err(format!(
                    "the form's field '{shown}' holds a NUL byte, which no command line can \
                     hold: remove it"
                ));
            }
        }
    } else if kind.starts_with("application/json") {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
            if let Some(at) = nul_at(&v, String::new()) {
                return Err(format!(
                    "{at} holds a NUL byte, which no command line can hold: remove it"
                ));
            }
        }
    }
    Ok(())
}

/// `a%41+b` as bytes: `aA b`.
fn decode(field: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        match field[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < field.len() => match (hex(field[i + 1]), hex(field[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    out
}

/// Where in a JSON value a string holds a NUL: `words[3]`, `note`, `the key 'k'`.
fn nul_at(v: &serde_json::Value, at: String) -> Option<String> {
    let shown = |at: &str| {
        if at.is_empty() {
            "the body".to_string()
        } else {
            at.to_string()
        }
    };
    match v {
        serde_json::Value::String(s) if s.contains('\0') => Some(shown(&at)),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| nul_at(x, format!("{}[{i}]", shown(&at)))),
        serde_json::Value::Object(map) => map.iter().find_map(|(k, x)| {
            if k.contains('\0') {
                return Some(format!("a key of {}", shown(&at)));
            }
            let inner = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            nul_at(x, inner)
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(kind: &str) -> axum::http::HeaderMap {
        let mut h = axum::http::HeaderMap::new();
        h.insert(header::CONTENT_TYPE, kind.parse().unwrap());
        h
    }

    #[test]
    fn a_nul_or_bad_utf8_in_a_form_or_a_json_string_is_named() {
        let form = typed("application/x-www-form-urlencoded");
        check_text(&form, b"kind=match&words=--games+2&note=caf%C3%A9").unwrap();
        check_text(&form, b"a=%&b=%4").unwrap();
        let e = check_text(&form, b"kind=match&words=name%3Da%00b").unwrap_err();
        assert!(e.contains("'words'") && e.contains("NUL"), "{e}");
        let e = check_text(&form, b"note=caf%E9").unwrap_err();
        assert!(e.contains("'note'") && e.contains("UTF-8"), "{e}");
        let e = check_text(&form, b"note=\xff").unwrap_err();
        assert!(e.contains("UTF-8"), "{e}");
        let json = typed("application/json");
        check_text(&json, br#"{"kind":"match","words":["a","b"]}"#).unwrap();
        check_text(&json, br#"{"words":["a\\u0000"]}"#).unwrap();
        let e =
            check_text(&json, br#"{"kind":"match","words":["a","name=a\u0000b"]}"#).unwrap_err();
        assert!(e.starts_with("words[1] holds a NUL"), "{e}");
        let e = check_text(&json, br#"{"note":"\u0000"}"#).unwrap_err();
        assert!(e.starts_with("note holds"), "{e}");
        // Not JSON: left to the handler, which says so.
        check_text(&json, b"{not json").unwrap();
    }

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
