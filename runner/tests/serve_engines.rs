//! Registered engines in `spar serve`: registration (API), a run naming a tiny git engine
//! (OpenBench's convention: `make -j EXE=NAME`, `./NAME bench`) at two revisions, stored at
//! once (201) and built by the scheduler's builder, the build cache (a second run builds
//! nothing), static refusals (unknown engines, a revision name that would be an option to
//! git: 400, nothing stored), what fails the run after its 201 (a bench that differs, with
//! both numbers; an unknown revision; a failing build's last lines, on its page too), the
//! run page's commits and diff base..dev, and `spar` builds (the git= builder) from a path
//! and from a URL.

mod serve_common;

use std::path::Path;

use serde_json::{json, Value};
use serve_common::*;

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .count()
}

fn runs(server: &Server) -> usize {
    let (code, v) = server.json("GET", "/api/runs", None);
    assert_eq!(code, 200);
    v["runs"].as_array().unwrap().len()
}

fn submit(server: &Server, words: &str) -> (u16, Value) {
    let words: Vec<&str> = words.split_whitespace().collect();
    server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words})),
    )
}

const LIMITS: &str = "--each nodes=300 --games 4 --seed 5";

#[test]
fn a_registered_engine_is_built_by_commit_benched_and_diffed() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("tiny");
    let builds = tmp.path().join("builds.txt");
    tiny_engine(&repo, &builds);
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));

    // Registration.
    let repo_s = repo.to_str().unwrap();
    let (code, e) = server.json(
        "POST",
        "/api/engines",
        Some(&json!({"name": "tiny", "repo": repo_s})),
    );
    assert_eq!(code, 201, "{e}");
    assert_eq!(
        (e["name"].as_str(), e["build"].as_str()),
        (Some("tiny"), Some("make"))
    );
    for (body, code, needle) in [
        (
            json!({"name": "tiny", "repo": repo_s}),
            409,
            "registered already",
        ),
        (
            json!({"name": "-x", "repo": repo_s}),
            400,
            "engine name '-x'",
        ),
        (
            json!({"name": "a b", "repo": repo_s}),
            400,
            "engine name 'a b'",
        ),
        (
            json!({"name": "t2", "repo": "-repo"}),
            400,
            "repository '-repo'",
        ),
        (
            json!({"name": "t2", "repo": tmp.path().to_str().unwrap()}),
            400,
            "not a git repository",
        ),
        (
            json!({"name": "t2", "repo": repo_s, "build": "cmake"}),
            400,
            "build 'cmake'",
        ),
    ] {
        let (c, v) = server.json("POST", "/api/engines", Some(&body));
        assert_eq!(c, code, "{body}: {v}");
        assert!(v["error"].as_str().unwrap().contains(needle), "{body}: {v}");
    }
    let (code, v) = server.json("GET", "/api/engines", None);
    assert_eq!(
        (code, v["engines"].as_array().unwrap().len()),
        (200, 1),
        "{v}"
    );
    let (code, v) = server.json("GET", "/api/engines/nope", None);
    assert_eq!(code, 404, "{v}");

    // A run of dev (main) against base: both built once, their benches checked.
    let words = format!(
        "--engine name=dev engine=tiny rev=main bench=2000 --engine name=base engine=tiny \
         rev=base bench=1000 {LIMITS}"
    );
    let (code, run) = submit(&server, &words);
    assert_eq!(code, 201, "{run}\n{}", read(&server.log));
    let id = run["id"].as_i64().unwrap();
    let run = server.built(id);
    assert_eq!(lines(&builds), 2, "one build per commit");
    let engines = run["engines"].as_array().unwrap();
    assert_eq!(engines.len(), 2, "{run}");
    let (dev, base) = (&engines[0], &engines[1]);
    assert_eq!(
        (dev["variant"].as_str(), dev["bench"].as_u64()),
        (Some("dev"), Some(2000))
    );
    assert_eq!(
        (base["rev"].as_str(), base["bench"].as_u64()),
        (Some("base"), Some(1000))
    );
    let dev_sha = dev["sha"].as_str().unwrap().to_string();
    let base_sha = base["sha"].as_str().unwrap().to_string();
    assert_eq!(dev_sha.len(), 40);
    assert_ne!(dev_sha, base_sha);
    // The child plays the builds: the words name the cached binaries.
    let played: Vec<&str> = run["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let cached = data
        .canonicalize()
        .unwrap()
        .join("builds/tiny")
        .join(&dev_sha)
        .join("tiny");
    assert!(
        played.contains(&format!("cmd={}", cached.display()).as_str()),
        "{played:?}"
    );
    assert!(!played
        .iter()
        .any(|w| w.starts_with("engine=") || w.starts_with("bench=")));
    let done = server.wait(id, "finished", |v| state(v) == "finished");
    assert_eq!(done["live"]["games"].as_u64(), Some(4), "{done}");

    // A second run of the same commits builds nothing.
    let (code, again) = submit(&server, &words);
    assert_eq!(code, 201, "{again}");
    server.wait(again["id"].as_i64().unwrap(), "finished", |v| {
        state(v) == "finished"
    });
    assert_eq!(lines(&builds), 2, "the second run used the cache");

    // Refusals without git or a build store nothing.
    let before = runs(&server);
    for (w, needles) in [
        (
            "--engine engine=nope rev=main --engine name=b".to_string(),
            vec!["'nope'"],
        ),
        (
            "--engine engine=tiny rev=-h --engine name=b".into(),
            vec!["'-h'"],
        ),
        (
            "--engine engine=tiny rev=--output=/tmp/x --engine name=b".into(),
            vec!["'--output=/tmp/x'"],
        ),
        (
            "--engine engine=tiny --engine name=b".into(),
            vec!["needs rev="],
        ),
        (
            "--engine rev=main --engine name=b".into(),
            vec!["add engine=NAME"],
        ),
        (
            "--engine engine=tiny rev=main cmd=/bin/sh --engine name=b".into(),
            vec!["leave cmd= out"],
        ),
        (
            "--engine name=a --engine name=b --each engine=tiny".into(),
            vec!["--each engine=tiny"],
        ),
        (
            "--engine engine=tiny rev=main bench=many --engine name=b".into(),
            vec!["bench=many"],
        ),
    ] {
        let (code, v) = submit(&server, &format!("{w} {LIMITS}"));
        assert_eq!(code, 400, "{w}: {v}");
        let msg = v["error"].as_str().unwrap_or_default();
        for n in needles {
            assert!(msg.contains(n), "{w}: {msg}");
        }
    }
    assert_eq!(runs(&server), before, "a refused run is not stored");

    // What only the build tells fails the run after its 201, with the message as its last
    // lines, on its page too: a bench that differs, an unknown revision, a failed build.
    for (w, needles) in [
        (
            "--engine engine=tiny rev=main bench=1999 --engine name=base",
            vec!["bench is 2000", "bench=1999"],
        ),
        (
            "--engine engine=tiny rev=nosuch --engine name=b",
            vec!["'nosuch'"],
        ),
        (
            "--engine engine=tiny rev=broken --engine name=b",
            vec!["the build failed", "error: deliberate failure"],
        ),
    ] {
        let (code, v) = submit(&server, &format!("{w} {LIMITS}"));
        assert_eq!(code, 201, "{w}: {v}");
        let failed = server.wait(v["id"].as_i64().unwrap(), "failed", |v| {
            state(v) == "failed"
        });
        let tail = failed["stderr_tail"].as_str().unwrap_or_default();
        for n in &needles {
            assert!(tail.contains(n), "{w}: {failed}");
        }
        assert!(failed["started"].is_null(), "{failed}");
        let (code, page) = server.http("GET", failed["url"].as_str().unwrap(), None);
        assert_eq!(code, 200);
        let log = page.split("<pre id=\"build-log\">").nth(1).unwrap_or("");
        assert!(
            log.contains(&needles[0].replace('\'', "&#39;")),
            "{w}: {page}"
        );
    }
    assert_eq!(lines(&builds), 2, "the broken build made nothing");

    // The run page: the commits, their benches, the log and the diff (escaped).
    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200);
    for needle in [
        dev_sha.as_str(),
        base_sha.as_str(),
        "a faster search",
        "search.c",
        "&lt;b&gt;&amp;&lt;/b&gt;",
        "<td class=\"bench\">2000</td>",
    ] {
        assert!(page.contains(needle), "{needle} not on the page:\n{page}");
    }
    assert!(!page.contains("<b>&</b>"));
    let (code, page) = server.http("GET", "/engines", None);
    assert_eq!(code, 200);
    assert!(
        page.contains(&dev_sha[..12]) && page.contains("2000"),
        "{page}"
    );
}

#[test]
fn the_form_registers_and_refuses_and_a_url_is_mirrored() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("tiny");
    let builds = tmp.path().join("builds.txt");
    tiny_engine(&repo, &builds);
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let repo_s = repo.to_str().unwrap();

    // The form: a refusal comes back with the message (escaped) and a 400, then a success.
    let (code, page) = server.form(
        "/engines",
        &[("name", "<b>"), ("repo", "x"), ("build", "make")],
    );
    assert_eq!(code, 400, "{page}");
    assert!(page.contains("engine name &#39;&lt;b&gt;&#39;"), "{page}");
    let (code, _) = server.form(
        "/engines",
        &[("name", "tiny"), ("repo", repo_s), ("build", "make")],
    );
    assert_eq!(code, 303);
    let (code, page) = server.http("GET", "/engines", None);
    assert_eq!(code, 200);
    assert!(page.contains("id=\"engine-tiny\""), "{page}");

    // A URL: the server clones a mirror and resolves revisions in it, fetching first.
    let url = format!("file://{repo_s}");
    let (code, e) = server.json(
        "POST",
        "/api/engines",
        Some(&json!({"name": "remote", "repo": url})),
    );
    assert_eq!(code, 201, "{e}");
    assert!(
        e["source"].as_str().unwrap().ends_with("repos/remote.git"),
        "{e}"
    );
    git(&repo, &["checkout", "--quiet", "-b", "later", "main"]);
    std::fs::write(repo.join("eval.c"), "/* later */\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "--quiet", "-m", "later"]);
    let (code, run) = submit(
        &server,
        &format!(
            "--engine name=dev engine=remote rev=later bench=2000 --engine name=base {LIMITS}"
        ),
    );
    assert_eq!(code, 201, "{run}");
    assert_eq!(run["engines"][0]["rev"].as_str(), Some("later"));
    let (code, v) = server.json(
        "POST",
        "/api/engines",
        Some(&json!({"name": "gone", "repo": "file:///nonexistent/repo"})),
    );
    assert_eq!(code, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("cannot clone"), "{v}");
    let (_, all) = server.json("GET", "/api/engines", None);
    assert_eq!(all["engines"].as_array().unwrap().len(), 2, "{all}");
}

/// A repository shaped like spar's (workspace, package `runner`, binary `spar`) that builds
/// in seconds: its `spar bench` prints `777 nodes 5 nps`, its `spar uci` runs the spar under
/// test as the UCI engine.
fn fake_spar(dir: &Path) {
    std::fs::create_dir_all(dir.join("runner/src")).unwrap();
    git(dir, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(
        dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"runner\"]\nresolver = \"2\"\n",
    )
    .unwrap();
    std::fs::write(dir.join(".gitignore"), "/target\n").unwrap();
    std::fs::write(
        dir.join("runner/Cargo.toml"),
        "[package]\nname = \"runner\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [[bin]]\nname = \"spar\"\npath = \"src/main.rs\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("runner/src/main.rs"),
        format!(
            "fn main() {{\n    let a: Vec<String> = std::env::args().skip(1).collect();\n    \
             if a.first().map(String::as_str) == Some(\"bench\") {{\n        \
             println!(\"777 nodes 5 nps\");\n        return;\n    }}\n    \
             let s = std::process::Command::new({:?}).args(&a).status().unwrap();\n    \
             std::process::exit(s.code().unwrap_or(1));\n}}\n",
            env!("CARGO_BIN_EXE_spar")
        ),
    )
    .unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", "fake spar"]);
}

#[test]
fn a_spar_engine_is_built_by_the_git_builder() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("fake");
    fake_spar(&repo);
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let (code, e) = server.json(
        "POST",
        "/api/engines",
        Some(&json!({"name": "spar2", "repo": repo.to_str().unwrap(), "build": "spar"})),
    );
    assert_eq!(code, 201, "{e}");
    let (code, v) = submit(
        &server,
        &format!("--engine name=dev engine=spar2 rev=main bench=778 --engine name=base {LIMITS}"),
    );
    assert_eq!(code, 201, "{v}");
    let v = server.wait(v["id"].as_i64().unwrap(), "failed", |v| {
        state(v) == "failed"
    });
    assert!(
        v["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("its bench is 777"),
        "{v}"
    );
    let (code, run) = submit(
        &server,
        &format!("--engine name=dev engine=spar2 rev=main bench=777 --engine name=base {LIMITS}"),
    );
    assert_eq!(code, 201, "{run}\n{}", read(&server.log));
    let run = server.built(run["id"].as_i64().unwrap());
    let words: Vec<&str> = run["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(words.contains(&"args=uci"), "{words:?}");
    let id = run["id"].as_i64().unwrap();
    let done = server.wait(id, "finished", |v| state(v) == "finished");
    assert_eq!(done["live"]["games"].as_u64(), Some(4), "{done}");
}

#[test]
fn a_spar_engine_from_a_url_is_mirrored_and_built_by_the_git_builder() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("fake");
    fake_spar(&repo);
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let url = format!("file://{}", repo.display());
    let (code, e) = server.json(
        "POST",
        "/api/engines",
        Some(&json!({"name": "spar3", "repo": url, "build": "spar"})),
    );
    assert_eq!(code, 201, "{e}");
    assert!(
        e["source"].as_str().unwrap().ends_with("repos/spar3.git"),
        "{e}"
    );
    let (code, run) = submit(
        &server,
        &format!("--engine name=dev engine=spar3 rev=main bench=777 --engine name=base {LIMITS}"),
    );
    assert_eq!(code, 201, "{run}\n{}", read(&server.log));
    let run = server.built(run["id"].as_i64().unwrap());
    assert_eq!(run["engines"][0]["bench"].as_u64(), Some(777), "{run}");
    assert!(
        run["words"]
            .as_array()
            .unwrap()
            .contains(&json!("args=uci")),
        "{run}"
    );
    // Built in a work tree sharing the mirror's objects, never in the mirror.
    let work = data.canonicalize().unwrap().join("repos/spar3.work");
    assert!(
        work.join("target/spar-builds").is_dir(),
        "{}",
        work.display()
    );
    let id = run["id"].as_i64().unwrap();
    let done = server.wait(id, "finished", |v| state(v) == "finished");
    assert_eq!(done["live"]["games"].as_u64(), Some(4), "{done}");
}
