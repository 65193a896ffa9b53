//! The new-run form's engine fields (OpenBench's dev and base: an engine, two revisions and
//! their benches) posted as a browser posts them; registered engines edited and removed
//! from the engines page and the API (refused with the run ids while a run uses them); and
//! the builds in the event log. Registered engines are built after the run is stored (the
//! scheduler's builder): what only the build tells fails the run.

mod serve_common;

use serde_json::{json, Value};
use serve_common::*;

const LIMITS: &str = "--each nodes=300 --games 4 --seed 5";

fn runs(server: &Server) -> Vec<Value> {
    let (code, v) = server.json("GET", "/api/runs", None);
    assert_eq!(code, 200);
    v["runs"].as_array().unwrap().clone()
}

/// The new-run form's fields: a match of engine `engine`, dev and base (revision, bench).
fn run_form<'a>(
    engine: &'a str,
    dev: (&'a str, &'a str),
    base: (&'a str, &'a str),
    words: &'a str,
) -> Vec<(&'a str, &'a str)> {
    vec![
        ("kind", "match"),
        ("engine", engine),
        ("dev_rev", dev.0),
        ("dev_bench", dev.1),
        ("dev_words", ""),
        ("base_rev", base.0),
        ("base_bench", base.1),
        ("base_words", ""),
        ("words", words),
        ("priority", "0"),
        ("throughput", "100"),
        ("note", "from the form"),
    ]
}

fn register(server: &Server, name: &str, repo: &str) {
    let (code, e) = server.json(
        "POST",
        "/api/engines",
        Some(&json!({"name": name, "repo": repo})),
    );
    assert_eq!(code, 201, "{e}");
}

#[test]
fn the_run_form_names_dev_and_base_by_revision_and_bench() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("tiny");
    tiny_engine(&repo, &tmp.path().join("builds.txt"));
    let server = Server::start(&tmp.path().join("data"), &tmp.path().join("serve.log"));
    register(&server, "tiny", repo.to_str().unwrap());

    let (code, page) = server.http("GET", "/", None);
    assert_eq!(code, 200);
    for needle in [
        "<option value=\"tiny\">tiny</option>",
        "<option value=\":spar\">",
        "name=\"dev_rev\"",
        "name=\"base_bench\"",
    ] {
        assert!(page.contains(needle), "{needle} not in the form:\n{page}");
    }

    // A revision of the embedded engine, a revision without an engine, a missing one: the
    // form again with the message, nothing stored.
    for (fields, needle) in [
        (
            run_form(":spar", ("main", ""), ("", ""), LIMITS),
            "spar&#39;s embedded engine",
        ),
        (
            run_form("", ("main", ""), ("", ""), LIMITS),
            "choose the engine first",
        ),
        (
            run_form("tiny", ("main", ""), ("", ""), LIMITS),
            "base revision: required",
        ),
        (
            run_form("tiny", ("main", "many"), ("base", ""), LIMITS),
            "bench",
        ),
    ] {
        let (code, page) = server.form("/runs", &fields);
        assert_eq!(code, 400, "{page}");
        assert!(page.contains(needle), "{needle}:\n{page}");
        assert!(page.contains("name=\"dev_rev\" value=\"main\""), "{page}");
    }
    assert!(runs(&server).is_empty(), "a refused form stores nothing");

    // What only the build tells (it runs after the form is stored: 303 to the run's page)
    // fails the run with the message: a wrong bench (both numbers), an unknown revision
    // (its name; of two, dev's, the first engine).
    for (fields, needle) in [
        (
            run_form("tiny", ("main", "1999"), ("base", "1000"), LIMITS),
            "its bench is 2000, not bench=1999",
        ),
        (
            run_form("tiny", ("main", ""), ("nosuch", ""), LIMITS),
            "unknown revision 'nosuch'",
        ),
        (
            run_form("tiny", ("nosuch-dev", ""), ("nosuch-base", ""), LIMITS),
            "unknown revision 'nosuch-dev'",
        ),
    ] {
        let (code, page) = server.form("/runs", &fields);
        assert_eq!(code, 303, "{page}");
        let id = runs(&server)[0]["id"].as_i64().unwrap();
        let failed = server.wait(id, "failed", |v| state(v) == "failed");
        let tail = failed["stderr_tail"].as_str().unwrap();
        assert!(tail.contains(needle), "{needle}: {failed}");
    }

    // A good one: stored with its engines, played.
    let (code, page) = server.form(
        "/runs",
        &run_form("tiny", ("main", "2000"), ("base", "1000"), LIMITS),
    );
    assert_eq!(code, 303, "{page}\n{}", read(&server.log));
    let all = runs(&server);
    assert_eq!(all.len(), 4);
    let id = all[0]["id"].as_i64().unwrap();
    let run = server.built(id);
    let engines = run["engines"].as_array().unwrap();
    let got: Vec<(&str, &str, u64)> = engines
        .iter()
        .map(|e| {
            (
                e["variant"].as_str().unwrap(),
                e["rev"].as_str().unwrap(),
                e["bench"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [("dev", "main", 2000), ("base", "base", 1000)]);
    assert_eq!(run["note"].as_str(), Some("from the form"));
    let done = server.wait(id, "finished", |v| state(v) == "finished");
    assert_eq!(done["live"]["games"].as_u64(), Some(4), "{done}");

    // The embedded engine: dev's own words, no registration.
    let mut fields = run_form(":spar", ("", ""), ("", ""), "--each nodes=300 --games 2");
    fields.push(("dev_words", "option.Hash=2"));
    fields.retain(|(k, v)| *k != "dev_words" || !v.is_empty());
    let (code, page) = server.form("/runs", &fields);
    assert_eq!(code, 303, "{page}");
    let newest = &runs(&server)[0];
    let words: Vec<&str> = newest["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(
        words[..5],
        [
            "--engine",
            "name=dev",
            "option.Hash=2",
            "--engine",
            "name=base"
        ]
    );
}

#[test]
fn engines_are_edited_and_removed_but_not_while_a_run_uses_them() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("tiny");
    tiny_engine(&repo, &tmp.path().join("builds.txt"));
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let repo_s = repo.to_str().unwrap();
    register(&server, "tiny", repo_s);
    register(&server, "other", repo_s);

    // A long run of tiny: it is running while the engine is changed.
    let words: Vec<String> = "--engine name=dev engine=tiny rev=main --engine name=base \
         engine=tiny rev=base --each nodes=1000 --games 100000"
        .split_whitespace()
        .map(String::from)
        .collect();
    let (code, run) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words})),
    );
    assert_eq!(code, 201, "{run}");
    let id = run["id"].as_i64().unwrap();
    // Used from its submission on, before its engines are built, and after.
    let ids = format!("run {id} uses it");
    let (code, v) = server.json("DELETE", "/api/engines/tiny", None);
    assert_eq!(code, 409, "{v}");
    server.built(id);
    let url = format!("file://{repo_s}");
    for (method, body, what) in [
        ("DELETE", None, "cannot remove it"),
        (
            "PATCH",
            Some(json!({"repo": url})),
            "cannot change its repository",
        ),
        (
            "PATCH",
            Some(json!({"build": "spar"})),
            "cannot change its build",
        ),
    ] {
        let (code, v) = server.json(method, "/api/engines/tiny", body.as_ref());
        assert_eq!(code, 409, "{method} {body:?}: {v}");
        let msg = v["error"].as_str().unwrap();
        assert!(msg.contains(what) && msg.contains(&ids), "{msg}");
    }
    let (code, page) = server.form("/engines/tiny/remove", &[]);
    assert_eq!(code, 409, "{page}");
    assert!(page.contains(&ids), "{page}");
    let (code, page) = server.form(
        "/engines/tiny/edit",
        &[("repo", url.as_str()), ("build", "make")],
    );
    assert_eq!(code, 409, "{page}");
    assert!(page.contains("cannot change its repository"), "{page}");
    let (_, e) = server.json("GET", "/api/engines/tiny", None);
    assert!(!e["repo"].as_str().unwrap().starts_with("file:"), "{e}");

    // Another engine, used by no run, changes: its repository becomes a URL (mirrored).
    let (code, e) = server.json(
        "PATCH",
        "/api/engines/other",
        Some(&json!({"repo": url, "build": "make"})),
    );
    assert_eq!(code, 200, "{e}");
    assert_eq!(e["repo"].as_str(), Some(url.as_str()));
    assert!(
        e["source"].as_str().unwrap().ends_with("repos/other.git"),
        "{e}"
    );
    for (name, body, code, needle) in [
        ("other", json!({"build": "cmake"}), 400, "build 'cmake'"),
        ("other", json!({"repo": "-x"}), 400, "repository '-x'"),
        ("nope", json!({"build": "make"}), 404, "no engine 'nope'"),
    ] {
        let (c, v) = server.json("PATCH", &format!("/api/engines/{name}"), Some(&body));
        assert_eq!(c, code, "{body}: {v}");
        assert!(v["error"].as_str().unwrap().contains(needle), "{v}");
    }
    // The page's forms: change the build, then remove it.
    let (code, page) = server.form(
        "/engines/other/edit",
        &[("repo", url.as_str()), ("build", "spar")],
    );
    assert_eq!(code, 303, "{page}");
    assert_eq!(
        server.json("GET", "/api/engines/other", None).1["build"],
        "spar"
    );
    let (code, page) = server.form("/engines/other/remove", &[]);
    assert_eq!(code, 303, "{page}");
    let (_, page) = server.http("GET", "/engines", None);
    assert!(page.contains("removed "), "{page}");

    // Stopped, the run no longer holds the engine: it is removed, its run keeps its page.
    let (code, v) = server.json("POST", &format!("/api/runs/{id}/stop"), None);
    assert_eq!(code, 200, "{v}");
    server.wait(id, "stopped", |v| state(v) == "stopped");
    // A stopped run resumes with its build: the build's kind stays while it may play again.
    let (code, v) = server.json(
        "PATCH",
        "/api/engines/tiny",
        Some(&json!({"build": "spar"})),
    );
    assert_eq!(code, 409, "{v}");
    let msg = v["error"].as_str().unwrap();
    assert!(
        msg.contains("cannot change its build") && msg.contains("stopped"),
        "{msg}"
    );
    let (code, e) = server.json("DELETE", "/api/engines/tiny", None);
    assert_eq!(code, 200, "{e}");
    assert!(e["removed"].as_i64().is_some(), "{e}");
    let (code, v) = server.json("DELETE", "/api/engines/tiny", None);
    assert_eq!(code, 404, "{v}");
    let sha = server.run(id)["engines"][0]["sha"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200);
    assert!(
        page.contains(&sha) && page.contains("a faster search"),
        "{page}"
    );
    // A removed engine names no new run; its name may be registered again.
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(
            &json!({"kind": "match", "words": ["--engine", "engine=tiny", "rev=main",
            "--engine", "name=b", "--games", "2", "--each", "nodes=300"]}),
        ),
    );
    assert_eq!(code, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("was removed"), "{v}");
    register(&server, "tiny", repo_s);
    let (_, e) = server.json("GET", "/api/engines/tiny", None);
    assert!(e["removed"].is_null(), "{e}");
    let (_, ev) = server.json("GET", "/api/events?kind=engine", None);
    let messages: Vec<&str> = ev["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert!(
        messages.contains(&"engine tiny removed") && messages.contains(&"engine other removed"),
        "{messages:?}"
    );
}

#[test]
fn builds_are_in_the_event_log() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("tiny");
    tiny_engine(&repo, &tmp.path().join("builds.txt"));
    let server = Server::start(&tmp.path().join("data"), &tmp.path().join("serve.log"));
    register(&server, "tiny", repo.to_str().unwrap());
    let submit = |rev: &str| {
        let words: Vec<String> =
            format!("--engine name=dev engine=tiny rev={rev} --engine name=base {LIMITS}")
                .split_whitespace()
                .map(String::from)
                .collect();
        server.json(
            "POST",
            "/api/runs",
            Some(&json!({"kind": "match", "words": words})),
        )
    };
    // Each built by the scheduler's builder after its 201, in order: main, main again (from
    // the cache), broken (its run fails).
    let ids: Vec<i64> = ["main", "main", "broken"]
        .into_iter()
        .map(|rev| {
            let (code, v) = submit(rev);
            assert_eq!(code, 201, "{v}");
            v["id"].as_i64().unwrap()
        })
        .collect();
    server.built(ids[0]);
    server.built(ids[1]);
    server.wait(ids[2], "failed", |v| state(v) == "failed");
    let events = |kind: &str| -> Vec<String> {
        let (code, v) = server.json("GET", &format!("/api/events?kind={kind}"), None);
        assert_eq!(code, 200, "{v}");
        v["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["message"].as_str().unwrap().to_string())
            .collect()
    };
    let started = events("build-start");
    assert_eq!(started.len(), 2, "{started:?}");
    let built = events("build");
    assert_eq!(built.len(), 1, "{built:?}");
    assert!(
        built[0].contains("bench 2000") && built[0].contains(" s,"),
        "{built:?}"
    );
    let cached = events("build-cached");
    assert_eq!(cached.len(), 1, "{cached:?}");
    assert!(
        cached[0].contains("from the cache (bench 2000)"),
        "{cached:?}"
    );
    let failed = events("build-failure");
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].contains("deliberate failure"), "{failed:?}");
    let (code, page) = server.http("GET", "/events?kind=build-failure", None);
    assert_eq!(code, 200);
    assert!(page.contains("deliberate failure"), "{page}");
}
