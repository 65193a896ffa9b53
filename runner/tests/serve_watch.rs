//! The server watches a branch (issue 55, "Done when"): a repository whose engine is the
//! spar under test through a script made by `make` (the `tiny_engine` convention), one of
//! whose commits weakens it (`spar uci --setoption Eval=hce`: about a hundred Elo weaker
//! at 300 nodes). Four commits pushed at once with the weakening one among them, then the
//! push hook: each commit's test and the push's batch test play on their own, the batch
//! test fails, and — with a spar that has the bisect kind — the bisect runs at a lower
//! priority and finds the weakening commit, which the progression page marks with a link
//! to it (checked in Chromium by `serve_browser_watch.py`). Also: the push token (a wrong
//! or missing one changes nothing), approvals (a plain user's watch runs wait unbuilt),
//! unwatching (the history stays), and a force-push (the watch starts again from the new
//! tip, testing nothing).

mod serve_common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use serve_common::accounts::{accepted, server_with_admin, Session};
use serve_common::*;

/// The test words and bounds of the watches: equal engines pass at once, the weakened one
/// fails at once.
const NODES: &str = "nodes=300";
const BOUNDS: [f64; 2] = [-60.0, 0.0];

/// The engine script of a commit: `word` is a harmless comment, `weak` the weakening.
fn script(word: &str, weak: bool) -> String {
    format!(
        "#!/bin/sh\n# {word}\nif [ \"$1\" = bench ]; then echo \"1000 nodes 1000 nps\"; exit 0; fi\n\
         exec {} uci{}\n",
        env!("CARGO_BIN_EXE_spar"),
        if weak { " --setoption Eval=hce" } else { "" }
    )
}

/// Commits the engine script of `word` (weakened from then on once `weak`): its sha.
fn commit(repo: &Path, word: &str, weak: bool, subject: &str) -> String {
    std::fs::write(repo.join("engine.sh"), script(word, weak)).unwrap();
    git(repo, &["commit", "--quiet", "-am", subject]);
    head(repo)
}

fn head(repo: &Path) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A repository whose `main` has one commit: the engine script and its Makefile.
fn repo(dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("engine");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(
        repo.join("Makefile"),
        "EXE ?= tiny\n$(EXE): engine.sh\n\tcp engine.sh $(EXE)\n\tchmod +x $(EXE)\n",
    )
    .unwrap();
    std::fs::write(repo.join("engine.sh"), script("start", false)).unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "--quiet", "-m", "the first engine"]);
    repo
}

/// The watch settings of the tests.
fn settings(branch: &str) -> Value {
    json!({
        "branch": branch, "each": [NODES], "elo0": BOUNDS[0], "elo1": BOUNDS[1], "poll": 3600
    })
}

/// The watch events' messages, oldest first.
fn watch_events(s: &Server) -> Vec<String> {
    let (code, v) = s.json("GET", "/api/events?kind=watch&limit=1000", None);
    assert_eq!(code, 200, "{v}");
    let mut m: Vec<String> = v["events"]
        .as_array()
        .or(v.as_array())
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| e["message"].as_str().unwrap_or("").to_string())
        .collect();
    m.reverse();
    m
}

/// Waits (at most `secs`) until the watch events hold `text`.
fn wait_event(s: &Server, text: &str, secs: u64) {
    let start = Instant::now();
    while !watch_events(s).iter().any(|m| m.contains(text)) {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "no watch event with {text:?}: {:#?}\n{}",
            watch_events(s),
            read(&s.log)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A push hook call with `token` (none when `None`): the status and the answer.
fn push(s: &Server, engine: &str, token: Option<&str>) -> (u16, String) {
    let headers: Vec<String> = token
        .map(|t| format!("Authorization: Bearer {t}"))
        .into_iter()
        .collect();
    let r = s.request("POST", &format!("/api/engines/{engine}/push"), &headers, "");
    (r.code, r.body)
}

fn runs(s: &Server) -> Vec<Value> {
    let (code, v) = s.json("GET", "/api/runs", None);
    assert_eq!(code, 200, "{v}");
    v.as_array()
        .or(v["runs"].as_array())
        .cloned()
        .unwrap_or_default()
}

/// The progression of `engine` (JSON).
fn progression(s: &Server, engine: &str) -> Value {
    let (code, v) = s.json("GET", &format!("/api/engines/{engine}/progression"), None);
    assert_eq!(code, 200, "{v}");
    v
}

/// Whether this spar has the bisect kind.
fn has_bisect() -> bool {
    spar()
        .args(["bisect", "--help"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Registers `repo` as engine `tiny` and watches its `main` (no accounts): the push token,
/// once the first look remembered the tip.
fn watched(s: &Server, repo: &Path) -> String {
    let body = json!({ "name": "tiny", "repo": repo, "build": "make" });
    let (code, v) = s.json("POST", "/api/engines", Some(&body));
    assert_eq!(code, 201, "{v}");
    let (code, v) = s.json("PUT", "/api/engines/tiny/watch", Some(&settings("main")));
    assert_eq!(code, 200, "{v}");
    let token = v["token"].as_str().unwrap().to_string();
    assert_eq!(token.len(), 64, "{v}");
    wait_event(s, "first look", 60);
    token
}

/// Four commits pushed at once, the weakening one at `weak` (0 to 3), then the hook; waits
/// until the four commit tests and the batch test have finished: the shas.
fn four_commits_pushed(s: &Server, repo: &Path, token: &str, weak: usize) -> Vec<String> {
    let shas: Vec<String> = (0..4)
        .map(|k| {
            let subject = if k == weak {
                format!("commit {k}: a <simpler> evaluation")
            } else {
                format!("commit {k}: a harmless word")
            };
            commit(repo, &format!("word {k}"), k >= weak, &subject)
        })
        .collect();
    let (code, body) = push(s, "tiny", Some(token));
    assert_eq!(code, 202, "{body}");
    let start = Instant::now();
    loop {
        let p = progression(s, "tiny");
        let points = p["points"].as_array().cloned().unwrap_or_default();
        let batch = p["runs"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["role"] == "batch").cloned());
        let ended = |id: &Value| {
            id.as_i64()
                .is_some_and(|id| state(&s.run(id)) == "finished")
        };
        if points.len() == 4
            && points.iter().all(|x| ended(&x["run_id"]))
            && batch.is_some_and(|b| ended(&b["run_id"]))
        {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "the tests did not finish: {p:#}\n{}",
            read(&s.log)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    shas
}

/// Where the weakening commit goes: somewhere in the four, by the clock.
fn weak_place() -> usize {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    (nanos % 4) as usize
}

#[test]
fn four_commits_pushed_at_once_are_tested_and_the_failed_push_is_bisected() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let s = Server::start(&tmp.path().join("data"), &tmp.path().join("serve.log"));
    let token = watched(&s, &repo);
    let weak = weak_place();
    let shas = four_commits_pushed(&s, &repo, &token, weak);
    let p = progression(&s, "tiny");
    let points = p["points"].as_array().unwrap();
    for (k, x) in points.iter().enumerate() {
        assert_eq!(x["sha"], shas[k].as_str(), "{p:#}");
        let parent = if k == 0 {
            None
        } else {
            Some(shas[k - 1].as_str())
        };
        if let Some(parent) = parent {
            assert_eq!(x["parent"], parent, "{p:#}");
        }
        assert_eq!(x["position"], k as i64 + 1);
        assert_eq!(x["batch"], 4);
        // Each commit against its parent: only the weakening one is worse.
        let want = if k == weak { "H0" } else { "H1" };
        assert_eq!(x["verdict"], want, "commit {k} (weak {weak}): {p:#}");
        let run = s.run(x["run_id"].as_i64().unwrap());
        let words = run["words"].as_array().unwrap();
        assert!(words.iter().any(|w| w == NODES), "{run}");
        assert_eq!(run["priority"], 0);
    }
    // The sum drops by the weakening commit's Elo there.
    let sum = |k: usize| points[k]["cumulative"].as_f64().unwrap();
    let before = if weak == 0 { 0.0 } else { sum(weak - 1) };
    assert!(sum(weak) < before - 30.0, "{p:#}");
    assert!(points[weak]["band"].as_f64().unwrap() > 0.0);
    // The batch test (the tip against the base) failed.
    let runs_of = |p: &Value, role: &str| -> Vec<Value> {
        p["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["role"] == role)
            .cloned()
            .collect()
    };
    let batch = &runs_of(&p, "batch")[0];
    assert_eq!(batch["tip"], shas[3].as_str());
    let batch_run = s.run(batch["run_id"].as_i64().unwrap());
    assert_eq!(
        batch_run["verdict"]
            .as_str()
            .or(batch_run["live"]["verdict"].as_str()),
        Some("H0"),
        "{batch_run}"
    );
    // The page: the line, every commit's run linked, the failed one marked, escaped.
    let (code, page) = s.http("GET", "/engines/tiny/progression", None);
    assert_eq!(code, 200);
    assert!(page.contains("id=\"progression-line\""), "{page}");
    for x in points {
        assert!(
            page.contains(&format!("href=\"/runs/{}\"", x["run_id"])),
            "{page}"
        );
    }
    assert!(page.contains("class=\"point failed\""), "{page}");
    assert!(page.contains("a &lt;simpler&gt; evaluation") && !page.contains("<simpler>"));
    // Searchable: by subject and by sha.
    let (_, found) = s.http("GET", "/engines/tiny/progression?q=simpler", None);
    assert!(
        found.contains(&format!("id=\"commit-{}\"", shas[weak])),
        "{found}"
    );
    let other = shas[(weak + 1) % 4].as_str();
    assert!(
        !found.contains(&format!("id=\"commit-{other}\"")),
        "{found}"
    );
    let (_, v) = s.json(
        "GET",
        &format!("/api/engines/tiny/progression?q={}", &other[..8]),
        None,
    );
    assert_eq!(v["points"].as_array().unwrap().len(), 1, "{v}");
    // The engines page links the watch and the progression.
    let (_, engines) = s.http("GET", "/engines", None);
    assert!(
        engines.contains("href=\"/engines/tiny/progression\""),
        "{engines}"
    );
    if !has_bisect() {
        wait_event(&s, "no kind for a bisect", 30);
        eprintln!("serve_watch: this spar has no bisect kind: the bisect's part is skipped");
        return;
    }
    // The bisect: submitted on its own at a lower priority, it finds the weakening commit.
    wait_event(&s, "a bisect is submitted", 30);
    let start = Instant::now();
    let bisect = loop {
        let p = progression(&s, "tiny");
        if let Some(b) = runs_of(&p, "bisection")
            .first()
            .filter(|b| !b["found"].is_null())
        {
            break b.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "the bisect found nothing: {p:#}\n{}",
            read(&s.log)
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(bisect["found"], shas[weak].as_str(), "{bisect}");
    let id = bisect["run_id"].as_i64().unwrap();
    assert!(s.run(id)["priority"].as_i64().unwrap() < 0);
    let p = progression(&s, "tiny");
    assert_eq!(p["points"][weak]["found_by"], id, "{p:#}");
    let (_, page) = s.http("GET", "/engines/tiny/progression", None);
    assert!(
        page.contains(&format!("<a class=\"found\" href=\"/runs/{id}\">")),
        "{page}"
    );
    assert!(page.contains("▼ found"), "{page}");
}

#[test]
fn the_push_token_is_checked_and_a_force_push_and_unwatching_test_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let s = Server::start(&tmp.path().join("data"), &tmp.path().join("serve.log"));
    let first = head(&repo);
    let token = watched(&s, &repo);
    // An anchor test after every commit: the tip against the first commit, two games.
    let mut anchored = settings("main");
    anchored["anchor"] = json!(first);
    anchored["anchor_games"] = json!(2);
    anchored["anchor_every"] = json!(1);
    let (code, v) = s.json("PUT", "/api/engines/tiny/watch", Some(&anchored));
    assert_eq!(code, 200, "{v}");
    assert!(v["token"].is_null(), "the token stays: {v}");
    // The change asks for a look: done before the next commit.
    let start = Instant::now();
    while s.json("GET", "/api/engines/tiny/watch", None).1["watch"]["poked"] != false {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no look after the change"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Only the owner sees the token once: never again in the API.
    let (_, v) = s.json("GET", "/api/engines/tiny/watch", None);
    assert!(
        v["watch"]["branch"] == "main" && !v.to_string().contains(&token),
        "{v}"
    );
    commit(&repo, "one", false, "one harmless commit");
    let (code, body) = push(&s, "tiny", None);
    assert_eq!(code, 401, "{body}");
    let (code, body) = push(&s, "tiny", Some(&"0".repeat(64)));
    assert_eq!(code, 403, "{body}");
    // An engine not watched answers as a wrong token does.
    let (code, body) = push(&s, "nobody", Some(&token));
    assert_eq!(code, 403, "{body}");
    std::thread::sleep(Duration::from_secs(3));
    assert!(runs(&s).is_empty(), "{:?}", runs(&s));
    assert!(progression(&s, "tiny")["points"]
        .as_array()
        .unwrap()
        .is_empty());
    // The right token: the one commit is tested (its own batch).
    assert_eq!(push(&s, "tiny", Some(&token)).0, 202);
    wait_event(&s, "1 new commit", 30);
    // The look records the commit, its batch, then its anchor test.
    let start = Instant::now();
    let p = loop {
        let p = progression(&s, "tiny");
        if p["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["role"] == "anchor")
        {
            break p;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{p:#}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(p["points"].as_array().unwrap().len(), 1, "{p:#}");
    assert_eq!(runs(&s).len(), 2, "the commit test and the anchor test");
    let anchor = p["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "anchor")
        .cloned()
        .unwrap_or_else(|| panic!("no anchor test: {p:#}"));
    assert_eq!(anchor["base"], first.as_str());
    let id = anchor["run_id"].as_i64().unwrap();
    let run = s.wait(id, "the anchor test's end", |v| state(v) == "finished");
    assert_eq!(run["kind"], "match", "{run}");
    assert!(
        run["words"].to_string().contains("\"--games\",\"2\""),
        "{run}"
    );
    let (_, page) = s.http("GET", "/engines/tiny/progression", None);
    assert!(page.contains("class=\"anchor\""), "{page}");
    assert!(
        page.contains(&format!("<a href=\"/runs/{id}\"><path class=\"anchor\"")),
        "{page}"
    );
    // A force-push that rewrote history: started again from the new tip, nothing tested.
    git(&repo, &["reset", "--quiet", "--hard", "HEAD~1"]);
    let new_tip = commit(&repo, "two", false, "a rewritten commit");
    assert_eq!(push(&s, "tiny", Some(&token)).0, 202);
    wait_event(&s, "history rewritten", 30);
    assert!(watch_events(&s).iter().any(|m| m.contains(&new_tip[..12])));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(runs(&s).len(), 2);
    // A rotated token: the old one no longer works.
    let mut again = anchored.clone();
    again["rotate_token"] = json!(true);
    let (code, v) = s.json("PUT", "/api/engines/tiny/watch", Some(&again));
    assert_eq!(code, 200, "{v}");
    let rotated = v["token"].as_str().unwrap().to_string();
    assert_ne!(rotated, token);
    assert_eq!(push(&s, "tiny", Some(&token)).0, 403);
    // Unwatched: the hook is refused, the history stays.
    let (code, v) = s.json("DELETE", "/api/engines/tiny/watch", None);
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["watch"]["active"], false);
    assert_eq!(push(&s, "tiny", Some(&rotated)).0, 403);
    assert_eq!(
        progression(&s, "tiny")["points"].as_array().unwrap().len(),
        1
    );
    let (_, page) = s.http("GET", "/engines/tiny/watch", None);
    assert!(page.contains("Not watched"), "{page}");
    // Bad settings are refused with their reason, nothing stored.
    let mut bad = settings("main");
    bad["elo0"] = json!(5);
    let (code, v) = s.json("PUT", "/api/engines/tiny/watch", Some(&bad));
    assert_eq!(code, 400, "{v}");
    let mut bad = settings("main");
    bad["extra"] = json!(["--results", "x.csv"]);
    let (code, v) = s.json("PUT", "/api/engines/tiny/watch", Some(&bad));
    assert_eq!(code, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("--results"), "{v}");
    // A run's `--repo` names a registered engine, never a path; the flags the server adds
    // to it are its own.
    for (extra, says) in [
        (vec!["--repo", "/etc"], "registered engine"),
        (vec!["--repo", "nobody"], "registered engine"),
        (vec!["--builds", "/tmp"], "--builds"),
        (vec!["--name", "x"], "--name"),
    ] {
        let mut words: Vec<&str> = LITTLE_MATCH.to_vec();
        words.extend(extra);
        let body = json!({ "kind": "match", "words": words });
        let (code, v) = s.json("POST", "/api/runs", Some(&body));
        assert_eq!(code, 400, "{v}");
        assert!(v["error"].as_str().unwrap().contains(says), "{says}: {v}");
    }
}

#[test]
fn a_plain_users_watch_runs_wait_for_approval_unbuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let s = server_with_admin(tmp.path());
    let root = Session::new(&s, "root");
    accepted(&s, &root, "ann", "user");
    accepted(&s, &root, "bob", "user");
    let ann = Session::new(&s, "ann");
    let api_token = ann.token(&s);
    let call = |method: &str, path: &str, token: &str, body: &Value| {
        let headers = [
            "Content-Type: application/json".to_string(),
            format!("Authorization: Bearer {token}"),
        ];
        let r = s.request(method, path, &headers, &body.to_string());
        (
            r.code,
            serde_json::from_str::<Value>(&r.body).unwrap_or(Value::Null),
        )
    };
    let body = json!({ "name": "tiny", "repo": repo, "build": "make" });
    let (code, v) = call("POST", "/api/engines", &api_token, &body);
    assert_eq!(code, 201, "{v}");
    // Only its owner (or an admin) watches it.
    let bob = Session::new(&s, "bob").token(&s);
    let (code, v) = call("PUT", "/api/engines/tiny/watch", &bob, &settings("main"));
    assert_eq!(code, 403, "{v}");
    let (code, v) = call(
        "PUT",
        "/api/engines/tiny/watch",
        &api_token,
        &settings("main"),
    );
    assert_eq!(code, 200, "{v}");
    let push_token = v["token"].as_str().unwrap().to_string();
    wait_event(&s, "first look", 60);
    commit(&repo, "one", false, "one commit");
    // The hook needs no account: its push token is enough (an account's token is not one).
    assert_eq!(push(&s, "tiny", Some(&api_token)).0, 403);
    assert_eq!(push(&s, "tiny", Some(&push_token)).0, 202);
    wait_event(&s, "waits for an approver", 30);
    let (code, v) = call("GET", "/api/runs", &api_token, &json!(null));
    assert_eq!(code, 200);
    let list = v
        .as_array()
        .or(v["runs"].as_array())
        .cloned()
        .unwrap_or_default();
    assert_eq!(list.len(), 1, "{v}");
    let run = &list[0];
    assert_eq!(state(run), "pending-approval", "{run}");
    assert_eq!(run["owner"], "ann");
    std::thread::sleep(Duration::from_secs(2));
    let run = s.run(run["id"].as_i64().unwrap());
    let engines = run["engines"].as_array().unwrap();
    assert!(engines.iter().all(|e| e["sha"] == ""), "{run}");
    assert!(
        !tmp.path().join("data/builds/tiny").exists(),
        "built before approval"
    );
}

/// The browser check: the progression page shows the line and links every point to its run
/// (`serve_browser_watch.py`, Chromium through Selenium; skipped without them unless
/// `CI=true`).
#[test]
fn a_browser_sees_the_progression_line_and_its_links() {
    const DRIVER: &str = "/usr/bin/chromedriver";
    let selenium = Command::new("python3")
        .args(["-c", "import selenium"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !(selenium && Path::new(DRIVER).is_file() && Path::new("/usr/bin/chromium").is_file()) {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "serve_watch: chromium, chromedriver or selenium missing"
        );
        eprintln!("serve_watch: chromium, chromedriver or selenium missing: skipped");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let s = Server::start(&tmp.path().join("data"), &tmp.path().join("serve.log"));
    let token = watched(&s, &repo);
    let weak = weak_place();
    let shas = four_commits_pushed(&s, &repo, &token, weak);
    let bisect = if has_bisect() {
        let start = Instant::now();
        loop {
            let p = progression(&s, "tiny");
            let found = p["points"][weak]["found_by"].as_i64();
            if let Some(id) = found {
                break id.to_string();
            }
            assert!(start.elapsed() < Duration::from_secs(600), "{p:#}");
            std::thread::sleep(Duration::from_millis(500));
        }
    } else {
        String::new()
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/serve_browser_watch.py");
    let out = Command::new("python3")
        .arg(&script)
        .args([&s.url(), DRIVER, &shas[weak], &bisect])
        .env("SE_OFFLINE", "true")
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("all steps passed"),
        "{stdout}\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        read(&s.log)
    );
}
