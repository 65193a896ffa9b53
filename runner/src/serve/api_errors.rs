//! Every refusal of the API as the API documents it: `{"error": message}`, whoever made it —
//! a handler, or the framework (a malformed JSON body, a wrong type: 422, a wrong
//! `Content-Type`: 415, a path that matches no route: 404, a method a route does not take:
//! 405). One middleware ([`json_refusals`]) rewrites the framework's plain-text answers on
//! `/api/…`, and bounds every refusal's message: a word longer than [`LONG_WORD`]
//! characters is shown by its start and its length, never whole (a 500 KB word gave a 1 MB
//! refusal, quoted twice).

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// The characters of a word a message shows whole; a longer one is cut.
pub const LONG_WORD: usize = 80;

/// The longest message a refusal carries, in bytes.
const MAX_MESSAGE: usize = 4096;

/// The largest refusal body read to rewrite it.
const MAX_BODY: usize = 8 << 20;

/// `message` with each word (a run of characters between spaces) over [`LONG_WORD`]
/// characters shown by its first [`LONG_WORD`] and its length, and the whole at most
/// [`MAX_MESSAGE`] bytes.
pub fn shorten(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(MAX_MESSAGE));
    for (i, word) in message.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match word.char_indices().nth(LONG_WORD) {
            Some((cut, _)) => {
                out.push_str(&word[..cut]);
                out.push_str(&format!("… ({} bytes)", word.len()));
            }
            None => out.push_str(word),
        }
        if out.len() > MAX_MESSAGE {
            let mut end = MAX_MESSAGE;
            while !out.is_char_boundary(end) {
                end -= 1;
            }
            out.truncate(end);
            out.push('…');
            break;
        }
    }
    out
}

/// The middleware: an `/api/…` answer that is an error (4xx, 5xx) leaves as
/// `{"error": message}` with its message bounded; any other answer as it is.
pub async fn json_refusals(req: Request, next: Next) -> Response {
    let api = req.uri().path().starts_with("/api/");
    let response = next.run(req).await;
    let status = response.status();
    if !api || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .unwrap_or_default();
    let json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let message = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(v) if json && v["error"].is_string() => v["error"].as_str().unwrap_or("").to_string(),
        _ => {
            let text = String::from_utf8_lossy(&bytes).trim().to_string();
            if text.is_empty() {
                status
                    .canonical_reason()
                    .unwrap_or("refused")
                    .to_lowercase()
            } else {
                text
            }
        }
    };
    let body = serde_json::json!({ "error": shorten(&message) }).to_string();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_words_are_shown_by_their_start_and_length() {
        assert_eq!(shorten("name 'ab' is bad"), "name 'ab' is bad");
        let long = "x".repeat(500_000);
        let m = shorten(&format!("word '{long}' is bad: '{long}'"));
        assert!(m.len() < 300, "{}", m.len());
        assert!(m.contains("(500002 bytes)"), "{m}");
        assert!(m.ends_with("is bad: '") || m.contains("is bad:"), "{m}");
        let many = "word ".repeat(5000);
        assert!(shorten(&many).len() <= MAX_MESSAGE + 4);
        // Cut on a character's boundary.
        let m = shorten(&"é".repeat(200));
        assert!(
            m.starts_with(&"é".repeat(80)) && m.contains("(400 bytes)"),
            "{m}"
        );
    }
}
