//! `spar serve` with accounts, as users meet it over HTTP: `--add-admin` from a pipe, every
//! state-changing route refusing an anonymous request (the routes read from router.rs, so
//! a new one is not forgotten), sessions with their CSRF token, sign-out killing the
//! cookie, sign-up and acceptance, API tokens with `spar submit --token`, and a user kept
//! off another user's runs.

mod common;
mod serve_common;

use std::process::{Command, Output};

use serve_common::accounts::{
    add_admin, csrf, form, get, login_with as login, server_with_admin, PASSWORD,
};
use serve_common::Server;

const MATCH: &str = "--engine name=a --engine name=b --each nodes=300 --games 2";

fn words_field() -> String {
    MATCH.replace(' ', "+")
}

/// A run from the new-run form of a session: its id.
fn submit_form(s: &Server, cookie: &str, token: &str) -> i64 {
    let body = format!("kind=match&words={}&csrf={token}", words_field());
    let r = form(s, "/runs", Some(cookie), &body);
    assert_eq!(r.code, 303, "{r:?}");
    let at = r.header("location").unwrap();
    at.trim_start_matches("/runs/").parse().unwrap()
}

fn spar_submit(s: &Server, token: Option<&str>, env: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_spar"));
    cmd.args(["submit", "--server", &s.url()]);
    if let Some(t) = token {
        cmd.args(["--token", t]);
    }
    cmd.env_remove("SPAR_TOKEN");
    if let Some(t) = env {
        cmd.env("SPAR_TOKEN", t);
    }
    cmd.arg("match").args(MATCH.split(' ')).output().unwrap()
}

fn owner(s: &Server, id: i64) -> String {
    s.run(id)["owner"].as_str().unwrap_or("").to_string()
}

#[test]
fn add_admin_reads_the_password_from_a_pipe_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let o = add_admin(&data, "root", &format!("{PASSWORD}\n"));
    let out = common::ok(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains("admin root added"), "{out}");
    for (name, stdin, needle) in [
        ("root", format!("{PASSWORD}\n"), "exists"),
        ("other", "\n".to_string(), "too short"),
        ("other", "short\n".to_string(), "too short"),
        ("bad name", format!("{PASSWORD}\n"), "letters, digits"),
    ] {
        let o = add_admin(&data, name, &stdin);
        assert_eq!(o.status.code(), Some(2), "{name}: {o:?}");
        let err = common::stderr(&o);
        assert!(err.contains(needle), "{name}: {err}");
    }
    // The admin signs in with the password piped in, and with no other.
    let server = Server::start(&data, &dir.path().join("serve.log"));
    login(&server, "root", PASSWORD);
    let r = form(&server, "/login", None, "name=root&password=wrong-pass");
    assert_eq!(r.code, 401, "{r:?}");
    assert!(
        r.body.contains("the name or the password is wrong"),
        "{}",
        r.body
    );
}

/// Every route of router.rs, with its parameters filled in.
fn routes() -> Vec<String> {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/serve/router.rs"))
        .unwrap();
    let routes: Vec<String> = src
        .split(".route(\"")
        .skip(1)
        .map(|r| r.split('"').next().unwrap().to_string())
        .map(|r| r.replace("{id}", "1").replace("{name}", "root"))
        .collect();
    assert!(routes.len() > 20, "{routes:?}");
    routes
}

#[test]
fn with_an_admin_every_state_changing_request_needs_an_account() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    // Something to act on: a run of the admin.
    let admin = login(&server, "root", PASSWORD);
    let token = csrf(&server, &admin);
    let id = submit_form(&server, &admin, &token);
    assert_eq!(id, 1);
    for route in routes() {
        for method in ["POST", "PUT", "PATCH", "DELETE"] {
            let r = server.request(
                method,
                &route,
                &["Content-Type: application/json".into()],
                "{\"kind\":\"match\",\"words\":[]}",
            );
            let what = format!("anonymous {method} {route}: {r:?}");
            if route == "/login" || route == "/signup" {
                assert!(r.code >= 400, "{what}");
            } else if route.starts_with("/api/") {
                assert_eq!(r.code, 401, "{what}");
                assert!(r.body.contains("Bearer"), "{what}");
            } else {
                assert_eq!(r.code, 303, "{what}");
                assert_eq!(r.header("location").as_deref(), Some("/login"), "{what}");
            }
            // A made-up API token is no account either.
            let r = server.request(method, &route, &["Authorization: Bearer 00ff".into()], "");
            // The push hook's key is its watch's push token, not an account's: a made-up
            // one is refused as a wrong token (403), whether the engine is watched or not.
            let refused = if route.ends_with("/push") && method == "POST" {
                403
            } else {
                401
            };
            if route != "/login" && route != "/signup" {
                assert_eq!(r.code, refused, "bearer {method} {route}: {r:?}");
            }
        }
    }
    // Nothing was stored or changed: the one run is as it was, its note empty.
    let (code, v) = server.json("GET", "/api/runs", None);
    assert_eq!(code, 200);
    assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["runs"][0]["note"], "", "{v}");
    assert_ne!(v["runs"][0]["deleted"], true, "{v}");
    // The pages stay readable, with a sign-in link.
    let page = get(&server, "/", None);
    assert_eq!(page.code, 200);
    assert!(page.body.contains("href=\"/login\""), "{}", page.body);
    assert!(!page.body.contains("name=\"csrf\""), "{}", page.body);
}

#[test]
fn a_session_needs_its_csrf_token_and_dies_at_sign_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let cookie = login(&server, "root", PASSWORD);
    let token = csrf(&server, &cookie);
    let note = |csrf: Option<&str>, cookie: &str| {
        let body = match csrf {
            Some(t) => format!("note=hello&csrf={t}"),
            None => "note=hello".to_string(),
        };
        form(&server, "/runs/1/note", Some(cookie), &body)
    };
    let id = submit_form(&server, &cookie, &token);
    assert_eq!(owner(&server, id), "root");
    let r = note(None, &cookie);
    assert_eq!(r.code, 403, "{r:?}");
    assert!(r.body.contains("CSRF"), "{}", r.body);
    let wrong = "0".repeat(64);
    assert_eq!(note(Some(&wrong), &cookie).code, 403);
    // A script sends it as a header.
    let r = server.request(
        "POST",
        "/api/runs/1/note",
        &[
            format!("Cookie: spar_session={cookie}"),
            "Content-Type: application/json".into(),
        ],
        "{\"note\":\"x\"}",
    );
    assert_eq!(r.code, 403, "{r:?}");
    let r = note(Some(&token), &cookie);
    assert_eq!(r.code, 303, "{r:?}");
    assert_eq!(server.run(id)["note"], "hello");
    // Every POST form of the page carries the token; GET forms do not.
    let page = get(&server, &format!("/runs/{id}"), Some(&cookie)).body;
    let posts = page.matches("method=\"post\"").count();
    assert!(posts >= 4, "{page}");
    assert_eq!(
        page.matches(&format!("name=\"csrf\" value=\"{token}\""))
            .count(),
        posts,
        "{page}"
    );
    // Sign-out needs the token too, then the cookie is dead.
    assert_eq!(form(&server, "/logout", Some(&cookie), "").code, 403);
    let r = form(&server, "/logout", Some(&cookie), &format!("csrf={token}"));
    assert_eq!(r.code, 303, "{r:?}");
    assert!(r.header("set-cookie").unwrap().contains("Max-Age=0"));
    let r = note(Some(&token), &cookie);
    assert_eq!(r.code, 303, "{r:?}");
    assert_eq!(r.header("location").as_deref(), Some("/login"));
    let r = get(&server, "/account", Some(&cookie));
    assert_eq!(r.header("location").as_deref(), Some("/login"), "{r:?}");
}

#[test]
fn sign_up_acceptance_tokens_and_owners() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let body = format!("name=ann&password={PASSWORD}");
    let r = form(&server, "/signup", None, &body);
    assert_eq!(r.code, 200, "{r:?}");
    assert!(r.body.contains("once an admin"), "{}", r.body);
    assert_eq!(form(&server, "/signup", None, &body).code, 409);
    assert_eq!(
        form(&server, "/signup", None, "name=x&password=short").code,
        400
    );
    // Pending: no sign-in.
    let r = form(&server, "/login", None, &body);
    assert_eq!(r.code, 403, "{r:?}");
    assert!(r.body.contains("waiting for an admin"), "{}", r.body);
    // The admin accepts her.
    let admin = login(&server, "root", PASSWORD);
    let admin_csrf = csrf(&server, &admin);
    let users = get(&server, "/users", Some(&admin)).body;
    assert!(users.contains("<td>ann</td><td>pending</td>"), "{users}");
    let r = form(
        &server,
        "/users/ann/accept",
        Some(&admin),
        &format!("role=user&csrf={admin_csrf}"),
    );
    assert_eq!(r.code, 303, "{r:?}");
    let ann = login(&server, "ann", PASSWORD);
    let ann_csrf = csrf(&server, &ann);
    // A user sees no users page and cannot make herself admin.
    assert_eq!(get(&server, "/users", Some(&ann)).code, 403);
    let r = form(
        &server,
        "/users/ann/accept",
        Some(&ann),
        &format!("role=admin&csrf={ann_csrf}"),
    );
    assert_eq!(r.code, 403, "{r:?}");
    // Her API token, shown once.
    let r = form(
        &server,
        "/account/tokens",
        Some(&ann),
        &format!("label=laptop&csrf={ann_csrf}"),
    );
    assert_eq!(r.code, 200, "{r:?}");
    let at = r.body.find("<pre id=\"token\">").unwrap() + 16;
    let token = r.body[at..at + 64].to_string();
    assert!(!get(&server, "/account", Some(&ann)).body.contains(&token));
    // spar submit: refused without a token, stored with one (flag or SPAR_TOKEN).
    let o = spar_submit(&server, None, None);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(common::stderr(&o).contains("Bearer"), "{o:?}");
    let o = spar_submit(&server, Some(&token), None);
    let url = common::ok(&o);
    let mine: i64 = url.trim().rsplit('/').next().unwrap().parse().unwrap();
    assert_eq!(owner(&server, mine), "ann");
    let o = spar_submit(&server, None, Some(&token));
    common::ok(&o);
    // The admin's run is not hers to stop or delete; her own she changes.
    let theirs = submit_form(&server, &admin, &admin_csrf);
    let bearer = format!("Authorization: Bearer {token}");
    let r = server.request(
        "POST",
        &format!("/api/runs/{theirs}/stop"),
        std::slice::from_ref(&bearer),
        "",
    );
    assert_eq!(r.code, 403, "{r:?}");
    assert!(r.body.contains("root's"), "{}", r.body);
    let r = form(
        &server,
        &format!("/runs/{theirs}/delete"),
        Some(&ann),
        &format!("csrf={ann_csrf}"),
    );
    assert_eq!(r.code, 403, "{r:?}");
    assert_ne!(server.run(theirs)["deleted"], true);
    let r = server.request(
        "POST",
        &format!("/api/runs/{mine}/note"),
        &[bearer.clone(), "Content-Type: application/json".into()],
        "{\"note\":\"mine\"}",
    );
    assert_eq!(r.code, 200, "{r:?}");
    // The admin acts on any run.
    let r = form(
        &server,
        &format!("/runs/{mine}/note"),
        Some(&admin),
        &format!("note=checked&csrf={admin_csrf}"),
    );
    assert_eq!(r.code, 303, "{r:?}");
    // A revoked token is refused.
    let r = form(
        &server,
        "/account/tokens/1/revoke",
        Some(&ann),
        &format!("csrf={ann_csrf}"),
    );
    assert_eq!(r.code, 303, "{r:?}");
    let o = spar_submit(&server, Some(&token), None);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

#[test]
fn failed_sign_ins_make_a_name_wait() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    for _ in 0..5 {
        let r = form(&server, "/login", None, "name=root&password=wrong-pass");
        assert_eq!(r.code, 401, "{r:?}");
    }
    // Even the right password waits now.
    let r = form(
        &server,
        "/login",
        None,
        &format!("name=root&password={PASSWORD}"),
    );
    assert_eq!(r.code, 429, "{r:?}");
    assert!(r.body.contains("try again in"), "{}", r.body);
}
