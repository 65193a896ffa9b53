//! Every page of a server with accounts renders, for a signed-in session, the CSRF field in
//! each of its POST forms and the account's links in its navigation: the accounts guard
//! does not add them (it rewrites no answer), so a form added later without
//! `page.csrf_field()` fails here. The pages are found by following every link from the
//! index (runs, engines, nets, machines, accounts among them), then the pages that answer a
//! refused form.

mod common;
mod serve_common;

use std::collections::{BTreeSet, VecDeque};
use std::path::Path;

use serve_common::accounts::{accepted, api, form, get, server_with_admin, Session, PASSWORD};
use serve_common::{client, tiny_engine, Reply, Server, LITTLE_MATCH};

/// The words of a little match as the index's form posts them.
fn little_match() -> String {
    format!(
        "kind=sprt&words={}",
        LITTLE_MATCH.join("+").replace('=', "%3D")
    )
}

/// The `href="/…"` links of a page (entities undone, no fragment), but downloads, the API
/// and signing out.
fn links(page: &str) -> Vec<String> {
    page.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(|l| l.replace("&amp;", "&"))
        .map(|l| l.split('#').next().unwrap_or_default().to_string())
        .filter(|l| l.starts_with('/') && !l.starts_with("//"))
        .filter(|l| !l.starts_with("/api/") && !l.contains("/files/") && l != "/logout")
        .collect()
}

/// What is wrong with a page for the session whose CSRF token is `csrf`, named `name`:
/// a POST form without the field right after its opening tag, or (with a navigation)
/// missing account links.
fn faults(page: &str, csrf: &str, name: &str, admin: bool) -> Vec<String> {
    let field = format!("<input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">");
    let mut out = Vec::new();
    let lower = page.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("<form").map(|i| from + i) {
        let end = lower[at..].find('>').map_or(lower.len(), |i| at + i + 1);
        let tag = &lower[at..end];
        let post = tag.contains("method=\"post\"") || tag.contains("method=post");
        if post && !page[end..].starts_with(&field) {
            out.push(format!(
                "a POST form without the CSRF field: {}",
                &page[at..end]
            ));
        }
        from = end;
    }
    if page.contains("<nav>") {
        let account = format!("<a href=\"/account\">{name}</a>");
        let sign_out = format!("action=\"/logout\">{field}<button>sign out</button></form>");
        for needed in [account.as_str(), sign_out.as_str()] {
            if !page.contains(needed) {
                out.push(format!("no {needed} in the navigation"));
            }
        }
        if admin != page.contains("<a href=\"/users\">users</a>") {
            out.push(format!("the users link is wrong for admin={admin}"));
        }
        if page.contains("<!--account-->") {
            out.push("the account mark left in the page".into());
        }
    }
    out
}

/// Follows every link from `/` as `who` (at most 400 pages): the HTML pages seen, by path.
fn crawl(s: &Server, who: &Session) -> Vec<(String, Reply)> {
    let mut seen = BTreeSet::from(["/".to_string()]);
    let mut queue = VecDeque::from(["/".to_string()]);
    let mut pages = Vec::new();
    while let Some(path) = queue.pop_front() {
        let r = get(s, &path, Some(&who.cookie));
        if !r
            .head
            .to_ascii_lowercase()
            .contains("content-type: text/html")
        {
            continue;
        }
        for l in links(&r.body) {
            if seen.len() < 400 && seen.insert(l.clone()) {
                queue.push_back(l);
            }
        }
        pages.push((path, r));
    }
    pages
}

fn check(pages: &[(String, Reply)], who: &Session, name: &str, admin: bool) {
    let mut wrong = Vec::new();
    for (path, r) in pages {
        for f in faults(&r.body, &who.csrf, name, admin) {
            wrong.push(format!("{path} ({}): {f}", r.code));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A server with an admin, a user, a pending sign-up, an API token, a registered engine,
/// a net, runs (one waiting for approval) and the local machine.
fn busy_server(dir: &Path) -> (Server, Session, Session) {
    let s = server_with_admin(dir);
    let root = Session::new(&s, "root");
    let token = root.token(&s);
    accepted(&s, &root, "carl", "user");
    let r = form(
        &s,
        "/signup",
        None,
        &format!("name=bob&password={PASSWORD}"),
    );
    assert_eq!(r.code, 200, "{r:?}");
    let carl = Session::new(&s, "carl");
    let repo = dir.join("repo");
    tiny_engine(&repo, &dir.join("builds"));
    let body = serde_json::json!({"name": "tiny", "repo": repo.to_str().unwrap()}).to_string();
    let (code, v) = api(&s, "POST", "/api/engines", &token, &body);
    assert_eq!(code, 201, "{v}");
    let net =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/nets/default.nnue"))
            .expect("the committed net");
    let answer = client()
        .post(format!(
            "{}/api/nets?name=first&engine=tiny",
            s.url().trim_end_matches('/')
        ))
        .header("Authorization", format!("Bearer {token}"))
        .send(&net[..])
        .unwrap();
    assert_eq!(answer.status().as_u16(), 201);
    for who in [&root, &carl] {
        let r = who.post(&s, "/runs", &little_match());
        assert_eq!(r.code, 303, "{r:?}");
    }
    (s, root, carl)
}

#[test]
fn every_page_renders_the_csrf_field_in_each_post_form_and_the_account_links() {
    let dir = tempfile::tempdir().unwrap();
    let (s, root, carl) = busy_server(dir.path());
    let pages = crawl(&s, &root);
    let paths: BTreeSet<&str> = pages.iter().map(|(p, _)| p.as_str()).collect();
    for needed in [
        "/",
        "/search",
        "/runs/1",
        "/runs/2",
        "/engines",
        "/nets",
        "/machines",
        "/events",
        "/actions",
        "/account",
        "/users",
        "/engines/tiny/watch",
        "/engines/tiny/progression",
    ] {
        assert!(paths.contains(needed), "{needed} not reached: {paths:?}");
    }
    let forms: usize = pages
        .iter()
        .map(|(_, r)| r.body.matches("method=\"post\"").count())
        .sum();
    assert!(forms >= 20, "{forms} POST forms in {paths:?}");
    check(&pages, &root, "root", true);
    // Signing in and up while signed in, and the pages that answer a refused form.
    let mut answers: Vec<(String, Reply)> = ["/login", "/signup", "/runs/abc"]
        .iter()
        .map(|p| (p.to_string(), get(&s, p, Some(&root.cookie))))
        .collect();
    let long = "a".repeat(150);
    for (path, body) in [
        ("/runs", "kind=sprt&words=--bogus".to_string()),
        ("/runs/1/priority", "priority=x&throughput=1".into()),
        ("/engines", "name=bad%20name&repo=/nowhere".into()),
        ("/engines/nope/edit", "repo=/nowhere".into()),
        ("/engines/tiny/watch", "branch=-x".into()),
        ("/nets/default", "engine=nope&net=".into()),
        ("/machines/x/exclude", "excluded=maybe".into()),
        ("/account/tokens", format!("label={long}")),
        ("/users/nobody/trust", "trusted=maybe".into()),
    ] {
        let r = root.post(&s, path, &body);
        assert!((400..500).contains(&r.code), "{path}: {r:?}");
        answers.push((format!("POST {path}"), r));
    }
    check(&answers, &root, "root", true);
    // Another account's pages: its own token, no users link.
    let pages = crawl(&s, &carl);
    assert!(pages.len() >= 10, "{}", pages.len());
    check(&pages, &carl, "carl", false);
}
