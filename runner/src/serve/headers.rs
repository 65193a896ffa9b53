//! The security headers of every answer: one middleware ([`secure`], the outermost layer of
//! `router.rs`, so refusals, 404s and answers of routes added later carry them too).
//!
//! - `X-Content-Type-Options: nosniff`: a browser takes each answer for its declared type;
//! - `Content-Security-Policy` ([`POLICY`]): scripts, styles, frames and connections (the
//!   live streams, `fetch`) from this server only, inline scripts and styles allowed (the
//!   pages' small live script, the status pages' charts), nothing loaded from elsewhere, no
//!   `<base>`, forms posted here only; and no other site may frame a page
//!   (`frame-ancestors 'none'`, with `X-Frame-Options: DENY` for older browsers). The one
//!   page framed by this server's own run page, a run's status page
//!   (`/runs/ID/status.html`), may be framed by this server only (`'self'`, `SAMEORIGIN`);
//! - `Referrer-Policy: same-origin`: a link followed elsewhere tells nothing of the page;
//! - `Cache-Control: no-store` on every answer, a handler's own value replaced: every page
//!   and API answer is made for its caller (the account links, a new API token shown once,
//!   a run's live numbers) and the server has no static files, so nothing it answers may be
//!   kept by a browser or a proxy.

use axum::extract::Request;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;

/// The content security policy of every answer but a run's status page.
pub const POLICY: &str = "default-src 'self'; script-src 'self' 'unsafe-inline'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
     object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// [`POLICY`] for a run's status page, which the run page frames.
pub const FRAMED_POLICY: &str = "default-src 'self'; script-src 'self' 'unsafe-inline'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
     object-src 'none'; frame-ancestors 'self'; base-uri 'none'; form-action 'self'";

/// The middleware (see the module's documentation).
pub async fn secure(req: Request, next: Next) -> Response {
    let framed = framed_here(req.uri().path());
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    let (policy, frames) = if framed {
        (FRAMED_POLICY, "SAMEORIGIN")
    } else {
        (POLICY, "DENY")
    };
    h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(policy));
    h.insert(X_FRAME_OPTIONS, HeaderValue::from_static(frames));
    h.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Whether `path` is a page this server frames itself: a run's status page,
/// `/runs/ID/status.html`.
fn framed_here(path: &str) -> bool {
    path.strip_prefix("/runs/")
        .and_then(|rest| rest.strip_suffix("/status.html"))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_runs_status_page_may_be_framed_and_by_this_server_only() {
        assert!(framed_here("/runs/12/status.html"));
        for path in [
            "/",
            "/runs/12",
            "/runs/12/files/status.html",
            "/runs//status.html",
            "/api/runs/12/status.html",
            "/status.html",
        ] {
            assert!(!framed_here(path), "{path}");
        }
        assert!(POLICY.contains("frame-ancestors 'none'"));
        assert_eq!(
            POLICY.replace("frame-ancestors 'none'", "frame-ancestors 'self'"),
            FRAMED_POLICY
        );
    }
}
