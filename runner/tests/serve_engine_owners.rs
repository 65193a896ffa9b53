//! Registered engines have owners (issue 53): an engine is changed or removed only by who
//! registered it or an admin (403 otherwise, on the API and the engines page's forms, and
//! in the actions log); a plain user's change waits for an approver (the engine keeps its
//! repository and build until then); a trusted user's does not; an engine registered
//! before engines had owners is changed only by an admin.

mod serve_common;

use std::path::Path;

use serde_json::{json, Value};
use serve_common::accounts::{accepted, add_admin, api, server_with_admin, Session, PASSWORD};
use serve_common::{tiny_engine, Server};

fn engine(s: &Server, name: &str) -> Value {
    let (code, e) = s.json("GET", &format!("/api/engines/{name}"), None);
    assert_eq!(code, 200, "{e}");
    e
}

fn error(v: &Value) -> &str {
    v["error"].as_str().unwrap_or_default()
}

/// `(who, detail)` of the actions of kind `action`, oldest first.
fn logged(s: &Server, action: &str) -> Vec<(String, String)> {
    let (code, v) = s.json("GET", &format!("/api/actions?action={action}"), None);
    assert_eq!(code, 200, "{v}");
    let mut rows: Vec<(String, String)> = v["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let f = |k: &str| a[k].as_str().unwrap_or_default().to_string();
            (f("who"), f("detail"))
        })
        .collect();
    rows.reverse();
    rows
}

fn canonical(p: &Path) -> String {
    p.canonicalize().unwrap().to_str().unwrap().to_string()
}

#[test]
fn an_engine_is_changed_by_its_owner_or_an_admin_and_a_users_change_waits() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let root = Session::new(&server, "root");
    for (name, role) in [("ann", "user"), ("bob", "user"), ("vic", "approver")] {
        accepted(&server, &root, name, role);
    }
    let (ann, bob, vic) = (
        Session::new(&server, "ann"),
        Session::new(&server, "bob"),
        Session::new(&server, "vic"),
    );
    let (ann_t, bob_t, vic_t) = (ann.token(&server), bob.token(&server), vic.token(&server));
    let (repo, other) = (dir.path().join("tiny"), dir.path().join("other"));
    tiny_engine(&repo, &dir.path().join("builds.txt"));
    tiny_engine(&other, &dir.path().join("builds.txt"));
    let (repo_s, other_s) = (canonical(&repo), canonical(&other));

    // Ann registers it: she owns it.
    let body = json!({"name": "tiny", "repo": repo_s}).to_string();
    let (code, e) = api(&server, "POST", "/api/engines", &ann_t, &body);
    assert_eq!(code, 201, "{e}");
    assert_eq!(e["owner"], "ann", "{e}");

    // Bob (a user) and Vic (an approver) may neither change nor remove it: API and forms.
    let change = json!({"repo": other_s}).to_string();
    for (who, token) in [("bob", &bob_t), ("vic", &vic_t)] {
        let (code, v) = api(&server, "PATCH", "/api/engines/tiny", token, &change);
        assert_eq!(code, 403, "{who}: {v}");
        assert!(
            error(&v).contains("engine tiny is ann's: only its owner or an admin may change it"),
            "{v}"
        );
        let (code, v) = api(&server, "DELETE", "/api/engines/tiny", token, "");
        assert_eq!(code, 403, "{who}: {v}");
        assert!(error(&v).contains("may remove it"), "{v}");
    }
    let form_change = format!("repo={other_s}&build=make");
    let r = bob.post(&server, "/engines/tiny/edit", &form_change);
    assert_eq!(r.code, 403, "{r:?}");
    assert!(r.body.contains("engine tiny is ann&#39;s"), "{}", r.body);
    let r = bob.post(&server, "/engines/tiny/remove", "");
    assert_eq!(r.code, 403, "{r:?}");
    let e = engine(&server, "tiny");
    assert_eq!(
        (e["repo"].as_str(), e["removed"].is_null()),
        (Some(repo_s.as_str()), true)
    );

    // Ann's change of repository waits for an approver: the engine keeps its repository.
    let (code, e) = api(&server, "PATCH", "/api/engines/tiny", &ann_t, &change);
    assert_eq!(code, 202, "{e}");
    assert_eq!(e["repo"].as_str(), Some(repo_s.as_str()), "{e}");
    assert_eq!(e["pending"]["repo"].as_str(), Some(other_s.as_str()), "{e}");
    assert_eq!(e["pending"]["by"], "ann", "{e}");
    let page = root.post(&server, "/engines/nope/approve", "");
    assert_eq!(page.code, 404, "{page:?}");
    let page = serve_common::accounts::get(&server, "/engines", None).body;
    assert!(page.contains("id=\"pending-tiny\""), "{page}");
    assert!(page.contains("action=\"/engines/tiny/approve\""), "{page}");
    // She cannot approve it (a user), nor can Bob; Vic can.
    for token in [&ann_t, &bob_t] {
        let (code, v) = api(&server, "POST", "/api/engines/tiny/approve", token, "");
        assert_eq!(code, 403, "{v}");
        assert!(error(&v).contains("only an approver or an admin"), "{v}");
    }
    assert_eq!(
        engine(&server, "tiny")["repo"].as_str(),
        Some(repo_s.as_str())
    );
    let (code, e) = api(&server, "POST", "/api/engines/tiny/approve", &vic_t, "");
    assert_eq!(code, 200, "{e}");
    assert_eq!(e["repo"].as_str(), Some(other_s.as_str()), "{e}");
    assert!(e["pending"].is_null(), "{e}");
    let (code, v) = api(&server, "POST", "/api/engines/tiny/approve", &vic_t, "");
    assert_eq!(code, 409, "no change waits: {v}");

    // Her change of build through the form waits too; the admin approves it on the page.
    let r = ann.post(
        &server,
        "/engines/tiny/edit",
        &format!("repo={other_s}&build=spar"),
    );
    assert_eq!(r.code, 303, "{r:?}");
    let e = engine(&server, "tiny");
    assert_eq!(
        (e["build"].as_str(), e["pending"]["build"].as_str()),
        (Some("make"), Some("spar"))
    );
    assert_eq!(root.post(&server, "/engines/tiny/approve", "").code, 303);
    assert_eq!(engine(&server, "tiny")["build"], "spar");

    // A trusted user's change of their own engine is made at once.
    assert_eq!(
        root.post(&server, "/users/bob/trust", "trusted=yes").code,
        303
    );
    let body = json!({"name": "bobs", "repo": repo_s}).to_string();
    let (code, e) = api(&server, "POST", "/api/engines", &bob_t, &body);
    assert_eq!(code, 201, "{e}");
    let (code, e) = api(&server, "PATCH", "/api/engines/bobs", &bob_t, &change);
    assert_eq!(code, 200, "{e}");
    assert_eq!(e["repo"].as_str(), Some(other_s.as_str()), "{e}");
    // Trusted is not an owner: Ann's engine stays hers.
    let (code, v) = api(&server, "DELETE", "/api/engines/tiny", &bob_t, "");
    assert_eq!(code, 403, "{v}");

    // The admin changes and removes anyone's engine at once; Ann removes hers on the page.
    let root_t = root.token(&server);
    let back = json!({"repo": repo_s}).to_string();
    let (code, e) = api(&server, "PATCH", "/api/engines/bobs", &root_t, &back);
    assert_eq!(code, 200, "{e}");
    assert_eq!(e["repo"].as_str(), Some(repo_s.as_str()), "{e}");
    let (code, e) = api(&server, "DELETE", "/api/engines/bobs", &root_t, "");
    assert_eq!((code, e["removed"].is_null()), (200, false), "{e}");
    assert_eq!(ann.post(&server, "/engines/tiny/remove", "").code, 303);
    assert!(!engine(&server, "tiny")["removed"].is_null());

    // The actions log: who was refused what, who asked, who approved.
    let refused = logged(&server, "engine-refused");
    let who: Vec<&str> = refused.iter().map(|(w, _)| w.as_str()).collect();
    assert_eq!(
        who,
        ["bob", "bob", "vic", "vic", "bob", "bob", "ann", "bob", "bob"],
        "{refused:?}"
    );
    assert!(
        refused[0]
            .1
            .starts_with("engine-change: engine tiny is ann's"),
        "{refused:?}"
    );
    assert!(refused[1].1.starts_with("engine-remove: "), "{refused:?}");
    assert!(refused[6].1.starts_with("engine-approve: "), "{refused:?}");
    let approved: Vec<String> = logged(&server, "engine-approve")
        .into_iter()
        .map(|(w, _)| w)
        .collect();
    assert_eq!(approved, ["vic", "root"]);
    let asked = logged(&server, "engine-change");
    assert_eq!(asked[0].0, "ann");
    assert!(asked[0].1.ends_with("waits for an approver"), "{asked:?}");
}

#[test]
fn an_engine_registered_before_owners_is_changed_only_by_an_admin() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let repo = dir.path().join("tiny");
    tiny_engine(&repo, &dir.path().join("builds.txt"));
    let repo_s = canonical(&repo);
    // Registered on the server before it had accounts: no owner.
    let mut before = Server::start(&data, &dir.path().join("serve.log"));
    let (code, e) = before.json(
        "POST",
        "/api/engines",
        Some(&json!({"name": "old", "repo": repo_s})),
    );
    assert_eq!(code, 201, "{e}");
    assert!(e["owner"].is_null(), "{e}");
    before.kill9();
    let o = add_admin(&data, "root", &format!("{PASSWORD}\n"));
    assert!(o.status.success(), "{o:?}");
    let server = Server::start(&data, &dir.path().join("serve.log"));
    let root = Session::new(&server, "root");
    accepted(&server, &root, "ann", "approver");
    let ann = Session::new(&server, "ann").token(&server);
    let change = json!({"build": "spar"}).to_string();
    let (code, v) = api(&server, "PATCH", "/api/engines/old", &ann, &change);
    assert_eq!(code, 403, "{v}");
    assert!(
        error(&v).contains("registered before engines had owners: only an admin may change it"),
        "{v}"
    );
    let (code, v) = api(&server, "DELETE", "/api/engines/old", &ann, "");
    assert_eq!(code, 403, "{v}");
    let r = root.post(&server, "/engines/old/edit", "repo=&build=spar");
    assert_eq!(r.code, 303, "{r:?}");
    assert_eq!(engine(&server, "old")["build"], "spar");
}
