//! What a careful user's bad input gets from `spar serve` (issue 56): every refusal of the
//! API as JSON with `error`, its message bounded; NUL bytes and invalid UTF-8 refused, never
//! stored or replaced; impossible dates refused by every filter; and the small things a
//! browser and a terminal show (a favicon answer, a finished run without Stop and Resume,
//! `spar submit`'s options after the words).

mod common;
mod serve_common;

use serde_json::{json, Value};
use serve_common::{state, Server};

const WORDS: [&str; 8] = serve_common::LITTLE_MATCH;

fn server(dir: &tempfile::TempDir) -> Server {
    Server::start(&dir.path().join("data"), &dir.path().join("serve.log"))
}

/// A raw request to the API: its status and the parsed JSON answer (Null when not JSON).
fn raw(
    s: &Server,
    method: &str,
    path: &str,
    kind: Option<&str>,
    body: &str,
) -> (u16, String, Value) {
    let headers: Vec<String> = kind
        .map(|k| format!("Content-Type: {k}"))
        .into_iter()
        .collect();
    let r = s.request(method, path, &headers, body);
    let json = r
        .header("content-type")
        .is_some_and(|c| c.starts_with("application/json"));
    let v = serde_json::from_str(&r.body).unwrap_or(Value::Null);
    assert!(json, "{method} {path}: not JSON: {r:?}");
    (r.code, r.body, v)
}

#[test]
fn every_refusal_of_the_api_is_json_with_a_bounded_message() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(&dir);
    s.submit_little_match();
    let cases: Vec<(&str, &str, Option<&str>, String, u16)> = vec![
        (
            "POST",
            "/api/runs",
            Some("application/json"),
            "{not json".into(),
            400,
        ),
        (
            "POST",
            "/api/runs",
            Some("application/json"),
            "{\"kind\": 3, \"words\": []}".into(),
            422,
        ),
        (
            "POST",
            "/api/runs",
            Some("application/json"),
            "{\"kind\": \"match\"}".into(),
            422,
        ),
        ("POST", "/api/runs", Some("text/plain"), "{}".into(), 415),
        ("POST", "/api/runs", None, "{}".into(), 415),
        ("GET", "/api/runs/1abc", None, String::new(), 404),
        ("GET", "/api/runs/%31", None, String::new(), 404),
        ("GET", "/api/nope", None, String::new(), 404),
        (
            "PUT",
            "/api/runs",
            Some("application/json"),
            "{}".into(),
            405,
        ),
        (
            "POST",
            "/api/runs/1/note",
            Some("application/json"),
            "{\"note\": 5}".into(),
            422,
        ),
        (
            "POST",
            "/api/runs/1/priority",
            Some("application/json"),
            "[]".into(),
            422,
        ),
        ("GET", "/api/runs?limit=x", None, String::new(), 400),
        ("GET", "/api/runs?from=2025-02-31", None, String::new(), 400),
        ("GET", "/api/runs?to=2025-02-30", None, String::new(), 400),
        (
            "GET",
            "/api/runs?from=%2B123-01-01",
            None,
            String::new(),
            400,
        ),
        (
            "GET",
            "/api/actions?from=2025-02-31",
            None,
            String::new(),
            400,
        ),
    ];
    for (method, path, kind, body, expected) in cases {
        let (code, text, v) = raw(&s, method, path, kind, &body);
        assert_eq!(code, expected, "{method} {path} {body}: {text}");
        assert!(
            v["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{method} {path}: {text}"
        );
    }
    // A 500 KB word is shown by its start and its length, not quoted whole (twice).
    let long = "x".repeat(500_000);
    let mut words: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
    words.push(format!("--{long}"));
    let (code, text, v) = raw(
        &s,
        "POST",
        "/api/runs",
        Some("application/json"),
        &json!({"kind": "match", "words": words}).to_string(),
    );
    assert_eq!(code, 400, "{}", &text[..200.min(text.len())]);
    assert!(text.len() < 2000, "{} bytes", text.len());
    assert!(v["error"].as_str().unwrap().contains("bytes)"), "{text}");
    // The search page's dates, too.
    let r = s.request("GET", "/search?from=2025-02-31", &[], "");
    assert_eq!(r.code, 400, "{r:?}");
    assert!(
        r.body.contains("from &#39;2025-02-31&#39;") || r.body.contains("from '2025-02-31'"),
        "{}",
        r.body
    );
}

#[test]
fn nul_bytes_and_invalid_utf8_are_refused_never_stored_or_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(&dir);
    // A NUL in a word, by the API and by the form.
    let mut words: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
    words[1] = "name=a\u{0}b".into();
    let (code, v) = s.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words})),
    );
    assert_eq!(code, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("words[1]"), "{v}");
    let form = |body: &str| {
        s.request(
            "POST",
            "/runs",
            &["Content-Type: application/x-www-form-urlencoded".into()],
            body,
        )
    };
    let r = form("kind=match&words=--engine+name%3Da%00b+--engine+name%3Db&note=x");
    assert_eq!(r.code, 400, "{r:?}");
    assert!(
        r.body.contains("NUL") && r.body.contains("words"),
        "{}",
        r.body
    );
    // Invalid UTF-8 in the words and in the note: refused, not replaced by U+FFFD.
    let r = form("kind=match&words=--games+2&note=caf%E9");
    assert_eq!(r.code, 400, "{r:?}");
    assert!(
        r.body.contains("UTF-8") && r.body.contains("note"),
        "{}",
        r.body
    );
    let r = form("kind=match&words=--engine+name%3D%FF&note=x");
    assert_eq!(r.code, 400, "{r:?}");
    let (code, v) = s.json("GET", "/api/runs", None);
    assert_eq!(
        (code, v["runs"].as_array().map(Vec::len)),
        (200, Some(0)),
        "{v}"
    );
}

#[test]
fn a_finished_run_offers_no_stop_or_resume_and_the_favicon_is_no_404() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(&dir);
    let v = s.submit_little_match();
    let id = v["id"].as_i64().unwrap();
    s.wait(id, "finished", |v| state(v) == "finished");
    let page = s.request("GET", &format!("/runs/{id}"), &[], "").body;
    assert!(!page.contains(&format!("/runs/{id}/stop")), "{page}");
    assert!(!page.contains(&format!("/runs/{id}/resume")), "{page}");
    assert!(page.contains(&format!("/runs/{id}/delete")), "{page}");
    assert!(
        page.contains("<link rel=\"icon\" href=\"data:,\">"),
        "{page}"
    );
    let r = s.request("GET", "/favicon.ico", &[], "");
    assert_eq!(r.code, 204, "{r:?}");
}

#[test]
fn spar_submit_takes_its_options_after_the_words_too() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(&dir);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_spar"))
        .args(["submit", "match"])
        .args(WORDS)
        .args([
            "--server",
            &s.url(),
            "--note",
            "after the words",
            "--priority",
            "3",
        ])
        .output()
        .unwrap();
    let text = common::ok(&out);
    assert!(text.contains("/runs/1"), "{text}");
    let v = s.run(1);
    assert_eq!(
        (v["note"].as_str(), v["priority"].as_i64()),
        (Some("after the words"), Some(3)),
        "{v}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_spar"))
        .args(["submit", "--note", "a", "match"])
        .args(WORDS)
        .args(["--server", &s.url(), "--note", "b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        common::stderr(&out).contains("--note is given twice"),
        "{out:?}"
    );
}
