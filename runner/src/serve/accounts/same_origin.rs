//! Whether a request was sent cross-site by a browser: the check that keeps another site's
//! page from posting to this server in its visitor's name (the sign-in form included, so a
//! victim cannot be signed into an attacker's account).
//!
//! Browsers say where a request comes from: `Sec-Fetch-Site` (every current browser), else
//! `Origin` (sent with every cross-origin POST). A request with neither comes from a
//! program, not from another site's page, and is left to the other checks.

use axum::http::{header, HeaderMap};

/// `Some(why)` when the request was sent by a browser from another site.
pub fn cross_site(headers: &HeaderMap) -> Option<String> {
    let text = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(site) = text("sec-fetch-site") {
        return match site {
            // `none`: typed or bookmarked by the user, not sent by a page.
            "same-origin" | "none" => None,
            other => Some(format!("Sec-Fetch-Site: {other}")),
        };
    }
    let origin = text(header::ORIGIN.as_str())?;
    let Some(host) = origin_host(origin) else {
        return Some(format!("Origin: {origin}"));
    };
    // The host the browser addressed: `Host`, or the one a proxy in front was asked for
    // (a page cannot set either header on a cross-site request).
    let addressed = [header::HOST.as_str(), "x-forwarded-host"]
        .into_iter()
        .filter_map(text)
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|h| h.eq_ignore_ascii_case(host));
    if addressed {
        None
    } else {
        Some(format!("Origin: {origin}"))
    }
}

/// `host[:port]` of an origin `scheme://host[:port]`; `None` for `null` or anything else.
fn origin_host(origin: &str) -> Option<&str> {
    let (scheme, rest) = origin.split_once("://")?;
    let plain = matches!(scheme, "http" | "https") && !rest.is_empty() && !rest.contains('/');
    plain.then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn a_request_from_the_same_origin_or_no_browser_passes() {
        assert_eq!(cross_site(&headers(&[])), None);
        assert_eq!(cross_site(&headers(&[("host", "127.0.0.1:8000")])), None);
        let same = [
            ("host", "127.0.0.1:8000"),
            ("origin", "http://127.0.0.1:8000"),
        ];
        assert_eq!(cross_site(&headers(&same)), None);
        let fetch = [("sec-fetch-site", "same-origin"), ("origin", "http://x")];
        assert_eq!(cross_site(&headers(&fetch)), None);
        assert_eq!(cross_site(&headers(&[("sec-fetch-site", "none")])), None);
        let proxied = [
            ("host", "127.0.0.1:8000"),
            ("x-forwarded-host", "spar.example.org"),
            ("origin", "https://spar.example.org"),
        ];
        assert_eq!(cross_site(&headers(&proxied)), None);
    }

    #[test]
    fn a_request_from_another_site_is_named() {
        for bad in [
            vec![("sec-fetch-site", "cross-site")],
            vec![("sec-fetch-site", "same-site")],
            vec![
                ("host", "127.0.0.1:8000"),
                ("origin", "http://evil.example"),
            ],
            vec![
                ("host", "127.0.0.1:8000"),
                ("origin", "http://127.0.0.1:8001"),
            ],
            vec![("host", "127.0.0.1:8000"), ("origin", "null")],
            vec![("origin", "http://127.0.0.1:8000")],
        ] {
            assert!(cross_site(&headers(&bad)).is_some(), "{bad:?}");
        }
    }
}
