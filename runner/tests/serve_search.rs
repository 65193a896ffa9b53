//! The search (issue 31): runs found by engine, branch, author, kind, verdict, date range
//! and free text, the filters in the URL of the page and of `GET /api/runs`, so a search
//! can be shared; a bad filter is a 400 that names it, the form keeping what was typed.

mod common;
mod serve_common;

use serde_json::{json, Value};
use serve_common::accounts::{accepted, api, get, server_with_admin, Session};
use serve_common::{state, tiny_engine, Server};

/// The ids `GET /api/runs?QUERY` answers, newest first.
fn found(s: &Server, query: &str) -> Vec<i64> {
    let (code, v) = s.json("GET", &format!("/api/runs?{query}"), None);
    assert_eq!(code, 200, "{query}: {v}");
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

/// Submits `words` of `kind` with an API token and waits for the run's end.
fn played(s: &Server, token: &str, kind: &str, words: &str) -> Value {
    let words: Vec<&str> = words.split_whitespace().collect();
    let body = json!({"kind": kind, "words": words}).to_string();
    let (code, v) = api(s, "POST", "/api/runs", token, &body);
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    s.wait(id, "finished", |r| state(r) == "finished")
}

#[test]
fn runs_are_found_by_engine_branch_author_kind_verdict_days_and_text() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let root = Session::new(&server, "root");
    accepted(&server, &root, "ann", "approver");
    let (root_token, ann_token) = (
        root.token(&server),
        Session::new(&server, "ann").token(&server),
    );
    let repo = dir.path().join("tiny");
    tiny_engine(&repo, &dir.path().join("builds.txt"));
    let body = json!({"name": "tiny", "repo": repo.to_str().unwrap()}).to_string();
    let (code, e) = api(&server, "POST", "/api/engines", &ann_token, &body);
    assert_eq!(code, 201, "{e}");

    // Root's SPRT of the embedded engine decides quickly (wide bounds); Ann's match of the
    // tiny engine at two branches has no verdict.
    let sprt = played(
        &server,
        &root_token,
        "sprt",
        "--engine name=nnue --engine name=hce option.Eval=hce --each nodes=300 --elo0 0 \
         --elo1 400",
    );
    let verdict = sprt["live"]["verdict"].as_str().unwrap().to_string();
    let other = if verdict == "H1" { "H0" } else { "H1" };
    let matched = played(
        &server,
        &ann_token,
        "match",
        "--engine name=dev engine=tiny rev=main bench=2000 --engine name=base engine=tiny \
         rev=base bench=1000 --each nodes=300 --games 2",
    );
    let (a, b) = (
        sprt["id"].as_i64().unwrap(),
        matched["id"].as_i64().unwrap(),
    );
    let sha = matched["engines"][0]["sha"].as_str().unwrap().to_string();

    for (query, want) in [
        ("", vec![b, a]),
        ("engine=tiny", vec![b]),
        ("engine=nosuch", vec![]),
        ("branch=base", vec![b]),
        (&format!("branch={}", &sha[..8]), vec![b]),
        ("branch=nosuch", vec![]),
        ("author=ann", vec![b]),
        ("author=root", vec![a]),
        ("author=bob", vec![]),
        (&format!("verdict={verdict}"), vec![a]),
        (&format!("verdict={other}"), vec![]),
        ("verdict=none", vec![b]),
        ("kind=sprt", vec![a]),
        ("kind=match&author=ann&engine=tiny&branch=main", vec![b]),
        ("kind=sprt&author=ann", vec![]),
        ("from=1970-01-01", vec![b, a]),
        ("from=2000-01-01&to=2000-12-31", vec![]),
        ("q=elo1+400", vec![a]),
        ("q=--games+2", vec![b]),
    ] {
        assert_eq!(found(&server, query), want, "{query}");
    }

    // The page: the same filters in its URL, the form keeping them.
    let page = get(&server, "/search?engine=tiny&branch=base&author=ann", None).body;
    assert!(page.contains(&format!("href=\"/runs/{b}\"")), "{page}");
    assert!(!page.contains(&format!("href=\"/runs/{a}\"")), "{page}");
    assert!(page.contains("<option selected>tiny</option>"), "{page}");
    assert!(page.contains("name=\"branch\" value=\"base\""), "{page}");
    let page = get(&server, &format!("/search?verdict={verdict}"), None).body;
    assert!(page.contains(&format!("href=\"/runs/{a}\"")), "{page}");
    assert!(!page.contains(&format!("href=\"/runs/{b}\"")), "{page}");

    // Bad filters: a 400 naming the field, on the API and the page (escaped, kept).
    for (query, named) in [
        ("verdict=H2", "verdict 'H2'"),
        ("from=yesterday", "from 'yesterday'"),
        ("to=2025-13-01", "to '2025-13-01'"),
        ("state=done", "state 'done'"),
    ] {
        let (code, v) = server.json("GET", &format!("/api/runs?{query}"), None);
        assert_eq!(code, 400, "{query}: {v}");
        assert!(v["error"].as_str().unwrap().contains(named), "{v}");
        let r = get(&server, &format!("/search?{query}"), None);
        assert_eq!(r.code, 400, "{query}");
        let shown = named.replace('\'', "&#39;");
        assert!(r.body.contains(&shown), "{}", r.body);
    }
    let r = get(&server, "/search?from=%3Cscript%3Ealert(1)", None);
    assert_eq!(r.code, 400);
    assert!(!r.body.contains("<script>alert(1)"), "{}", r.body);
    assert!(r.body.contains("&lt;script&gt;alert(1)"), "{}", r.body);
}
