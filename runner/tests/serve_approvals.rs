//! Approvals and the actions log (issue 32), as users meet them over HTTP: a user's run
//! waits and does not start; its owner cannot approve it, nor can an approver their own
//! (OpenBench #325); another approver can, once or twice, and it plays to its end; the
//! actions log lists who did what, filtered in the URL, and every kind of action appears
//! in it when done. A server without accounts starts runs at once, as before. Nothing of a
//! run that waits is built, fetched or started: no `make`, no hook of its repository, no
//! `git fetch` of its mirror, until an approver approves it; then it is built and plays.

mod common;
mod serve_common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};
use serve_common::accounts::{accepted, api, form, get, server_with_admin, Session, PASSWORD};
use serve_common::{git, state, tiny_engine, Server};

const WORDS: &str = "--engine+name=a+--engine+name=b+--each+nodes=300+--games+2";

/// A run from a session's new-run form: its id.
fn submit(s: &Server, who: &Session, words: &str) -> i64 {
    let r = who.post(s, "/runs", &format!("kind=match&words={words}"));
    assert_eq!(r.code, 303, "{r:?}");
    let at = r.header("location").unwrap();
    at.trim_start_matches("/runs/").parse().unwrap()
}

/// The actions the API lists for `query` (`user=ann&action=submit`…).
fn actions(s: &Server, query: &str) -> Vec<Value> {
    let (code, v) = s.json("GET", &format!("/api/actions?{query}"), None);
    assert_eq!(code, 200, "{v}");
    v["actions"].as_array().unwrap().clone()
}

/// `(who, action)` of each action.
fn who_did(rows: &[Value]) -> Vec<(String, String)> {
    rows.iter()
        .map(|a| {
            let s = |k: &str| a[k].as_str().unwrap_or("").to_string();
            (s("who"), s("action"))
        })
        .collect()
}

#[test]
fn a_users_run_waits_for_another_approver_then_plays() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let root = Session::new(&server, "root");
    accepted(&server, &root, "ann", "user");
    accepted(&server, &root, "vic", "user");
    let ann = Session::new(&server, "ann");
    let vic = Session::new(&server, "vic");

    // Ann's run waits: it is not started, the index shows it in its own group.
    let id = submit(&server, &ann, WORDS);
    std::thread::sleep(Duration::from_millis(1500));
    let v = server.run(id);
    assert_eq!(state(&v), "pending-approval", "{v}");
    assert!(v["started"].is_null() && v["approved_by"].is_null(), "{v}");
    let index = get(&server, "/", Some(&ann.cookie)).body;
    let group = index.split("<h2>Waiting for approval</h2>").nth(1).unwrap();
    assert!(group.contains(&format!("id=\"run-{id}\"")), "{index}");
    let page = get(&server, &format!("/runs/{id}"), Some(&ann.cookie)).body;
    assert!(page.contains("not yet: it waits"), "{page}");

    // Vic submitted a run while a user; made an approver, he cannot approve it himself.
    let his = submit(&server, &vic, WORDS);
    assert_eq!(state(&server.run(his)), "pending-approval");
    let r = root.post(&server, "/users/vic/accept", "role=approver");
    assert_eq!(r.code, 303, "{r:?}");
    let r = vic.post(&server, &format!("/runs/{his}/approve"), "");
    assert_eq!(r.code, 403, "{r:?}");
    assert!(r.body.contains("is yours: another approver"), "{}", r.body);
    // Ann cannot approve hers (a user), nor through the API.
    let r = ann.post(&server, &format!("/runs/{id}/approve"), "");
    assert_eq!(r.code, 403, "{r:?}");
    assert!(
        r.body.contains("only an approver or an admin"),
        "{}",
        r.body
    );
    let ann_token = ann.token(&server);
    let (code, e) = api(
        &server,
        "POST",
        &format!("/api/runs/{id}/approve"),
        &ann_token,
        "",
    );
    assert_eq!(code, 403, "{e}");
    assert!(e["error"].as_str().unwrap().contains("approver"), "{e}");
    assert_eq!(state(&server.run(id)), "pending-approval");

    // Vic approves Ann's run; a second approval changes nothing.
    let r = vic.post(&server, &format!("/runs/{id}/approve"), "");
    assert_eq!(r.code, 303, "{r:?}");
    let v = server.run(id);
    assert_eq!(v["approved_by"], "vic", "{v}");
    let at = v["approved_at"].as_i64().unwrap();
    assert_ne!(state(&v), "pending-approval");
    let r = vic.post(&server, &format!("/runs/{id}/approve"), "");
    assert_eq!(r.code, 303, "{r:?}");
    assert_eq!(server.run(id)["approved_at"].as_i64(), Some(at));
    // The admin approves Vic's through the API.
    let root_token = root.token(&server);
    let (code, v) = api(
        &server,
        "POST",
        &format!("/api/runs/{his}/approve"),
        &root_token,
        "",
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["approved_by"], "root", "{v}");

    // Both play to their end; the page says who approved.
    for run in [id, his] {
        server.wait(run, "finished", |v| state(v) == "finished");
    }
    let page = get(&server, &format!("/runs/{id}"), None).body;
    assert!(page.contains("<td id=\"approved\">by vic on "), "{page}");
    // An approver's and the admin's own runs need no approval.
    let own = submit(&server, &vic, WORDS);
    assert_ne!(state(&server.run(own)), "pending-approval");

    // The actions log: who submitted, who approved, filtered in the URL.
    let target = format!("target=run+{id}");
    let mut on_run = who_did(&actions(&server, &target));
    on_run.reverse();
    let ann_vic = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        on_run,
        [ann_vic("ann", "submit"), ann_vic("vic", "approve")],
        "{on_run:?}"
    );
    let approvals = who_did(&actions(&server, "action=approve"));
    assert_eq!(
        approvals,
        [ann_vic("root", "approve"), ann_vic("vic", "approve")]
    );
    assert!(who_did(&actions(&server, "user=vic&action=submit")).len() == 2);
    let page = get(&server, "/actions?user=vic&action=approve", None);
    assert_eq!(page.code, 200);
    assert!(page
        .body
        .contains(&format!("<a href=\"/runs/{id}\">run {id}</a>")));
    assert!(page.body.contains("value=\"vic\""), "{}", page.body);
    let today = &actions(&server, "")[0];
    assert!(today["time"].as_i64().unwrap() >= at - 60);
    assert!(actions(&server, "from=2000-01-01&to=2000-01-02").is_empty());
    // A bad filter is named.
    let r = get(&server, "/actions?from=yesterday", None);
    assert_eq!(r.code, 400);
    assert!(r
        .body
        .contains("from &#39;yesterday&#39;: give a day as YYYY-MM-DD"));
    let (code, e) = server.json("GET", "/api/actions?action=launch", None);
    assert_eq!(code, 400, "{e}");
    assert!(
        e["error"].as_str().unwrap().contains("unknown action"),
        "{e}"
    );
}

#[test]
fn every_kind_of_action_is_logged_when_done() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let root = Session::new(&server, "root");
    // Accounts: sign-up, accept, role, trust, reject, tokens, a lock.
    accepted(&server, &root, "ann", "user");
    accepted(&server, &root, "vic", "approver");
    let r = root.post(&server, "/users/vic/accept", "role=user");
    assert_eq!(r.code, 303, "{r:?}");
    let r = root.post(&server, "/users/ann/trust", "trusted=yes");
    assert_eq!(r.code, 303, "{r:?}");
    let users = get(&server, "/users", Some(&root.cookie)).body;
    assert!(users.contains("<td class=\"trusted\">yes</td>"), "{users}");
    let r = root.post(&server, "/users/ann/trust", "trusted=maybe");
    assert_eq!(r.code, 400, "{r:?}");
    assert!(r.body.contains("give yes or no"), "{}", r.body);
    let r = form(
        &server,
        "/signup",
        None,
        &format!("name=bob&password={PASSWORD}"),
    );
    assert_eq!(r.code, 200);
    assert_eq!(root.post(&server, "/users/bob/reject", "").code, 303);
    let ann = Session::new(&server, "ann");
    let token = ann.token(&server);
    assert_eq!(ann.post(&server, "/account/tokens/1/revoke", "").code, 303);
    for _ in 0..5 {
        let r = form(&server, "/login", None, "name=vic&password=wrong-pass");
        assert_eq!(r.code, 401, "{r:?}");
    }
    // Runs: a trusted user's run needs no approval.
    // Long enough that it cannot end before the stop below arrives, even on a loaded machine.
    let long = "--engine+name=a+--engine+name=b+--each+nodes=300+--games+100000";
    let id = submit(&server, &ann, long);
    assert_ne!(state(&server.run(id)), "pending-approval");
    let r = ann.post(&server, &format!("/runs/{id}/stop"), "");
    assert_eq!(r.code, 303, "{r:?} run {}", server.run(id));
    assert_eq!(
        ann.post(&server, &format!("/runs/{id}/resume"), "").code,
        303
    );
    let r = ann.post(
        &server,
        &format!("/runs/{id}/priority"),
        "priority=3&throughput=50",
    );
    assert_eq!(r.code, 303, "{r:?}");
    assert_eq!(
        ann.post(&server, &format!("/runs/{id}/note"), "note=%3Cb%3E")
            .code,
        303
    );
    assert_eq!(
        ann.post(&server, &format!("/runs/{id}/delete"), "").code,
        303
    );
    // Untrusted again: her next run waits for Vic.
    assert_eq!(
        root.post(&server, "/users/ann/trust", "trusted=no").code,
        303
    );
    let waits = submit(&server, &ann, WORDS);
    assert_eq!(state(&server.run(waits)), "pending-approval");
    // Vic is locked out by the failed sign-ins: the admin approves it.
    let r = form(
        &server,
        "/login",
        None,
        &format!("name=vic&password={PASSWORD}"),
    );
    assert_eq!(r.code, 429, "vic is locked: {r:?}");
    assert_eq!(
        root.post(&server, &format!("/runs/{waits}/approve"), "")
            .code,
        303
    );
    // Engines: register, change, remove.
    let repo = dir.path().join("tiny");
    tiny_engine(&repo, &dir.path().join("builds.txt"));
    let repo_s = repo.to_str().unwrap();
    let body = json!({"name": "tiny", "repo": repo_s}).to_string();
    let (code, e) = api(&server, "POST", "/api/engines", &token, &body);
    assert_eq!(code, 401, "the revoked token: {e}");
    let token = ann.token(&server);
    let (code, e) = api(&server, "POST", "/api/engines", &token, &body);
    assert_eq!(code, 201, "{e}");
    // Nets: an upload for the tiny engine (any file), its default set and cleared by the
    // admin, the net removed by its uploader.
    let (code, n) = api(
        &server,
        "POST",
        "/api/nets?name=n1&engine=tiny",
        &token,
        "net",
    );
    assert_eq!(code, 201, "{n}");
    let root_token = root.token(&server);
    for net in ["\"n1\"", "null"] {
        let body = format!("{{\"net\": {net}}}");
        let (code, e) = api(&server, "POST", "/api/engines/tiny/net", &root_token, &body);
        assert_eq!(code, 200, "{e}");
    }
    let (code, n) = api(&server, "DELETE", "/api/nets/n1", &token, "");
    assert_eq!(code, 200, "{n}");
    // Ann's change of her engine waits for an approver (she is not trusted now): she
    // cannot approve it herself; the admin does.
    let (code, e) = api(
        &server,
        "PATCH",
        "/api/engines/tiny",
        &token,
        "{\"build\":\"spar\"}",
    );
    assert_eq!(code, 202, "{e}");
    let (code, e) = api(&server, "POST", "/api/engines/tiny/approve", &token, "");
    assert_eq!(code, 403, "{e}");
    let (code, e) = api(
        &server,
        "POST",
        "/api/engines/tiny/approve",
        &root_token,
        "",
    );
    assert_eq!(code, 200, "{e}");
    assert_eq!(e["build"], "spar", "{e}");
    assert_eq!(ann.post(&server, "/engines/tiny/remove", "").code, 303);
    // Machines: only an admin excludes one.
    let r = ann.post(&server, "/machines/node7/exclude", "excluded=true");
    assert_eq!(r.code, 403, "{r:?}");
    assert!(r.body.contains("only an admin"), "{}", r.body);
    let r = root.post(&server, "/machines/node7/exclude", "excluded=true");
    assert_eq!(r.code, 303, "{r:?}");

    // Every kind the page's filter offers was recorded, with who did it.
    let page = get(&server, "/actions", None).body;
    let select = page.split("<select name=\"action\">").nth(1).unwrap();
    let select = select.split("</select>").next().unwrap();
    let kinds: Vec<&str> = select
        .split("<option>")
        .skip(1)
        .map(|o| o.split('<').next().unwrap())
        .collect();
    assert!(kinds.len() >= 21, "{kinds:?}");
    let done = who_did(&actions(&server, "limit=1000"));
    for kind in &kinds {
        assert!(
            done.iter().any(|(_, a)| a == kind),
            "{kind} not logged: {done:?}"
        );
    }
    let by = |action: &str| -> Vec<String> {
        done.iter()
            .filter(|(_, a)| a == action)
            .map(|(w, _)| w.clone())
            .collect()
    };
    assert_eq!(by("trust"), ["root", "root"]);
    assert_eq!(by("signup"), ["bob", "vic", "ann"]);
    assert_eq!(by("lock"), ["-"]);
    assert_eq!(by("note"), ["ann"]);
    assert_eq!(by("role"), ["root"]);
    let role = &actions(&server, "action=role")[0];
    assert_eq!(role["detail"], "approver to user", "{role}");
    assert_eq!(by("engine-remove"), ["ann"]);
    assert_eq!(by("engine-approve"), ["root"]);
    assert_eq!(by("engine-refused"), ["ann"]);
    assert_eq!(by("net-upload"), ["ann"]);
    assert_eq!(by("net-default"), ["root", "root"]);
    assert_eq!(by("net-remove"), ["ann"]);
    let default = &actions(&server, "action=net-default")[0];
    assert_eq!(default["target"], "engine tiny", "{default}");
    assert_eq!(default["detail"], "default net: none", "{default}");
    assert_eq!(by("machine-exclude"), ["root"]);
    let lock = &actions(&server, "action=lock")[0];
    assert_eq!(lock["target"], "user vic", "{lock}");
    // The note's text is the run's; the log and its page escape what they show.
    assert!(!page.contains("<b>"), "{page}");
}

#[test]
fn without_accounts_runs_start_at_once_and_actions_are_anonymous() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("data"), &dir.path().join("serve.log"));
    let words: Vec<&str> = WORDS.split('+').collect();
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words})),
    );
    assert_eq!(code, 201, "{v}");
    assert_ne!(state(&v), "pending-approval", "{v}");
    let id = v["id"].as_i64().unwrap();
    server.wait(id, "finished", |v| state(v) == "finished");
    let (code, e) = server.json("POST", &format!("/api/runs/{id}/approve"), None);
    assert_eq!(code, 409, "{e}");
    assert!(e["error"].as_str().unwrap().contains("no accounts"), "{e}");
    let rows = actions(&server, "");
    assert_eq!(who_did(&rows), [("-".to_string(), "submit".to_string())]);
    assert_eq!(rows[0]["target"], format!("run {id}"));
}

/// Makes every hook of the repository `repo` (and an fsmonitor command in its config)
/// append its name to `marker`.
fn hooks_that_mark(repo: &Path, marker: &Path) {
    let hooks = repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let names = [
        "post-checkout",
        "post-merge",
        "post-commit",
        "pre-commit",
        "post-rewrite",
        "reference-transaction",
        "post-index-change",
        "pre-auto-gc",
        "fsmonitor-watchman",
    ];
    for name in names {
        let hook = hooks.join(name);
        let script = format!("#!/bin/sh\necho {name} >> '{}'\n", marker.display());
        std::fs::write(&hook, script).unwrap();
        let mode = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755);
        std::fs::set_permissions(&hook, mode).unwrap();
    }
    let monitor = hooks.join("fsmonitor-watchman");
    git(
        repo,
        &["config", "core.fsmonitor", monitor.to_str().unwrap()],
    );
}

/// Whether the git directory `git_dir` has the branch `branch`.
fn has_branch(git_dir: &Path, branch: &str) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(git_dir)
        .args([
            "show-ref",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ])
        .status()
        .unwrap()
        .success()
}

#[test]
fn nothing_of_a_waiting_run_is_built_fetched_or_started_until_it_is_approved() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let root = Session::new(&server, "root");
    accepted(&server, &root, "ann", "user");
    accepted(&server, &root, "vic", "approver");
    let ann = Session::new(&server, "ann");
    let vic = Session::new(&server, "vic");
    let token = ann.token(&server);
    // Ann's repository: its Makefile counts its builds in `builds.txt`; a URL of it is
    // mirrored at its registration, then it gets a branch the mirror has not fetched;
    // then every hook of it marks `hooks.txt`.
    let repo = dir.path().join("evil");
    let (builds, marker) = (dir.path().join("builds.txt"), dir.path().join("hooks.txt"));
    tiny_engine(&repo, &builds);
    let url = format!("file://{}", repo.display());
    let register = |name: &str, repo: &str| {
        let body = json!({"name": name, "repo": repo}).to_string();
        let (code, e) = api(&server, "POST", "/api/engines", &token, &body);
        assert_eq!(code, 201, "{e}");
    };
    register("mirrored", &url);
    git(&repo, &["checkout", "--quiet", "-b", "later", "main"]);
    std::fs::write(repo.join("eval.c"), "/* later */\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "--quiet", "-m", "later"]);
    hooks_that_mark(&repo, &marker);
    register("evil", repo.to_str().unwrap());
    let mirror = dir
        .path()
        .join("data")
        .canonicalize()
        .unwrap()
        .join("repos/mirrored.git");
    assert!(has_branch(&mirror, "main") && !has_branch(&mirror, "later"));

    // Her run waits: 201 at once; a few seconds later nothing was built, no hook ran, the
    // mirror was not fetched, and the run has no commit yet.
    let words = "--engine+name=dev+engine=mirrored+rev=later+bench=2000+--engine+name=base\
                 +engine=evil+rev=base+bench=1000+--each+nodes=300+--games+2";
    let id = submit(&server, &ann, words);
    std::thread::sleep(Duration::from_secs(4));
    let v = server.run(id);
    assert_eq!(state(&v), "pending-approval", "{v}");
    assert!(!builds.exists(), "make ran before approval");
    assert!(
        !marker.exists(),
        "a hook ran: {}",
        std::fs::read_to_string(&marker).unwrap()
    );
    assert!(
        !has_branch(&mirror, "later"),
        "the mirror was fetched before approval"
    );
    let engines = v["engines"].as_array().unwrap();
    assert_eq!(engines.len(), 2, "{v}");
    assert!(engines.iter().all(|e| e["sha"] == ""), "{v}");
    let page = get(&server, &format!("/runs/{id}"), None).body;
    assert!(page.contains("<p id=\"building\">Not built yet"), "{page}");

    // Approved: the builder fetches and builds both, and the run plays to its end.
    assert_eq!(
        vic.post(&server, &format!("/runs/{id}/approve"), "").code,
        303
    );
    let done = server.wait(id, "finished", |v| state(v) == "finished");
    assert_eq!(done["live"]["games"].as_u64(), Some(2), "{done}");
    assert!(has_branch(&mirror, "later"));
    let made = std::fs::read_to_string(&builds).unwrap();
    assert_eq!(made.lines().count(), 2, "{made}");
    let engines = done["engines"].as_array().unwrap();
    assert!(
        engines
            .iter()
            .all(|e| e["sha"].as_str().unwrap().len() == 40),
        "{done}"
    );
    // No hook of her repository ran, then either.
    assert!(
        !marker.exists(),
        "{}",
        std::fs::read_to_string(&marker).unwrap()
    );
    let page = get(&server, &format!("/runs/{id}"), None).body;
    assert!(page.contains("its engines are built"), "{page}");
}
