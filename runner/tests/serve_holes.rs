//! The holes of issue 53 that a plain account holder could use, each tried as a security
//! reviewer would over HTTP and shown closed: every spelling of another user's run id on
//! every run route of router.rs; two admins demoting each other at once; a server whose
//! admins are gone; sign-in from another site; a locked name told from an unknown one;
//! names that differ only in case; many sign-ins at once and the server's memory.

mod common;
mod serve_common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use serve_common::accounts::{
    accepted, add_admin, api, form, get, server_with_admin, Session, PASSWORD,
};
use serve_common::{state, Reply, Server};

/// A long match (400 games): it never finishes while the test runs.
fn long_match() -> Value {
    let words = "--engine name=a --engine name=b --each nodes=300 --games 400";
    json!({ "kind": "match", "words": words.split(' ').collect::<Vec<_>>() })
}

/// A run of a plain user, submitted with an API token: it waits for approval (and plays
/// nothing) while the test runs. Its id.
fn waiting_run(s: &Server, token: &str, note: &str) -> i64 {
    let mut body = long_match();
    body["note"] = json!(note);
    let (code, v) = api(s, "POST", "/api/runs", token, &body.to_string());
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    s.wait(id, "waiting", |v| state(v) == "pending-approval");
    id
}

/// Every route of router.rs that names a run (`{id}`), with its other parameters filled.
fn run_routes() -> Vec<String> {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/serve/router.rs"))
        .unwrap();
    let routes: Vec<String> = src
        .split(".route(\"")
        .skip(1)
        .map(|r| r.split('"').next().unwrap().to_string())
        .filter(|r| r.starts_with("/runs/{id}") || r.starts_with("/api/runs/{id}"))
        .map(|r| r.replace("{name}", "results.csv"))
        .collect();
    assert!(routes.len() >= 15, "{routes:?}");
    routes
}

/// The spellings of run `id` that are not its plain decimal number.
fn spellings(id: i64) -> Vec<String> {
    let digits = id.to_string();
    let first = digits.as_bytes()[0];
    let rest = &digits[1..];
    vec![
        format!("%{first:02X}{rest}"),
        format!("%{first:02x}{rest}"),
        format!("%25{first:02X}{rest}"),
        format!("%2B{digits}"),
        format!("%2b{digits}"),
        format!("+{digits}"),
        format!("0{digits}"),
        format!("00{digits}"),
        format!("{digits};x"),
        format!("{digits}%3Bx"),
        format!("{digits}%2F"),
        format!("{digits}%00"),
        format!("{digits}%20"),
        format!("{digits}/"),
        format!("{digits}/."),
        format!("./{digits}"),
    ]
}

/// What a request that changes a run sends: a form and a JSON body that would change the
/// run's note or priority if they got through.
fn bodies(route: &str) -> (String, String) {
    let form = "note=pwned&priority=99&throughput=7".to_string();
    let json = if route.ends_with("/note") {
        json!({ "note": "pwned" })
    } else if route.ends_with("/priority") {
        json!({ "priority": 99, "throughput": 7 })
    } else {
        json!({})
    };
    (form, json.to_string())
}

/// `method path` by `eve`'s session (a form) and by her token (JSON), each written byte
/// for byte (an odd spelling reaches the server as spelt): the answers.
fn attempt(s: &Server, method: &str, path: &str, eve: &Session, token: &str) -> [Reply; 2] {
    let (form, json) = bodies(path);
    let by_form = s.raw_request(
        method,
        path,
        &[
            "Content-Type: application/x-www-form-urlencoded".into(),
            format!("Cookie: spar_session={}", eve.cookie),
        ],
        &format!("{form}&csrf={}", eve.csrf),
    );
    let by_token = s.raw_request(
        method,
        path,
        &[
            format!("Authorization: Bearer {token}"),
            "Content-Type: application/json".into(),
        ],
        &json,
    );
    [by_form, by_token]
}

#[test]
fn every_spelling_of_another_users_run_id_meets_the_owner_check() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let root = Session::new(&server, "root");
    accepted(&server, &root, "vic", "user");
    let vic_token = Session::new(&server, "vic").token(&server);
    let first = waiting_run(&server, &vic_token, "vic's first");
    let second = waiting_run(&server, &vic_token, "vic's second");
    accepted(&server, &root, "eve", "user");
    let eve = Session::new(&server, "eve");
    let eve_token = eve.token(&server);
    let routes = run_routes();
    let mut tried = 0;
    for id in [first, second] {
        for route in &routes {
            for spelling in std::iter::once(id.to_string()).chain(spellings(id)) {
                let path = route.replace("{id}", &spelling);
                for method in ["POST", "PUT", "PATCH", "DELETE"] {
                    for r in attempt(&server, method, &path, &eve, &eve_token) {
                        tried += 1;
                        let what = format!("eve: {method} {path}: {} {}", r.code, r.body);
                        // Refused (403), no such run or route (404, 405), or a malformed
                        // request (400): never done.
                        assert!(matches!(r.code, 400 | 403 | 404 | 405), "{what}");
                        if spelling != id.to_string() {
                            assert_ne!(r.code, 403, "an odd spelling reached a run: {what}");
                        }
                    }
                }
            }
        }
    }
    assert!(tried > 1000, "{tried}");
    // Nothing of vic's runs changed.
    for (id, note) in [(first, "vic's first"), (second, "vic's second")] {
        let v = server.run(id);
        assert_eq!(state(&v), "pending-approval", "{v}");
        assert_eq!(v["note"], note, "{v}");
        assert_eq!(v["priority"], 0, "{v}");
        assert_eq!(v["deleted"], false, "{v}");
    }
    // Eve's own run takes her changes, by its plain id only.
    let mine = {
        let (code, v) = api(
            &server,
            "POST",
            "/api/runs",
            &eve_token,
            &long_match().to_string(),
        );
        assert_eq!(code, 201, "{v}");
        v["id"].as_i64().unwrap()
    };
    let (code, v) = api(
        &server,
        "POST",
        &format!("/api/runs/{mine}/note"),
        &eve_token,
        "{\"note\":\"mine\"}",
    );
    assert_eq!(code, 200, "{v}");
    for spelling in spellings(mine) {
        let path = format!("/api/runs/{spelling}/note");
        let bearer = [
            format!("Authorization: Bearer {eve_token}"),
            "Content-Type: application/json".into(),
        ];
        let r = server.raw_request("POST", &path, &bearer, "{\"note\":\"odd\"}");
        assert!(r.code == 404 || r.code == 400, "{path}: {r:?}");
        let r = server.raw_request("GET", &format!("/runs/{spelling}"), &[], "");
        assert!(r.code == 404 || r.code == 400, "GET {spelling}: {r:?}");
    }
    assert_eq!(server.run(mine)["note"], "mine");
}

/// The admins of the users page (`<tr>` rows whose role is admin).
/// The admins of the users page as the first of `who` that may see it shows them (none
/// when no one of them may).
fn admins(s: &Server, who: &[&Session]) -> Vec<String> {
    let Some(page) = who
        .iter()
        .map(|w| get(s, "/users", Some(&w.cookie)))
        .find(|r| r.code == 200)
    else {
        return Vec::new();
    };
    let page = page.body;
    ["root", "ann"]
        .into_iter()
        .filter(|n| {
            page.split("<tr").any(|row| {
                row.contains(&format!("id=\"user-{n}\""))
                    && row.contains("<td>active</td><td>admin</td>")
            })
        })
        .map(String::from)
        .collect()
}

/// A form POST of `who` sent but for the last byte of its body: the connection, and that
/// byte for [`finish`].
fn held_post(s: &Server, who: &Session, path: &str, body: &str) -> (TcpStream, u8) {
    let body = format!("{body}&csrf={}", who.csrf);
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let (first, last) = body.split_at(body.len() - 1);
    write!(
        c,
        "POST {path} HTTP/1.1\r\nHost: {}\r\nCookie: spar_session={}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{first}",
        s.addr,
        who.cookie,
        body.len()
    )
    .unwrap();
    c.flush().unwrap();
    (c, last.as_bytes()[0])
}

/// Sends the last byte of a [`held_post`]: its answer.
fn finish((mut c, last): (TcpStream, u8)) -> Reply {
    c.write_all(&[last]).unwrap();
    let mut reply = String::new();
    c.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    Reply {
        code: head.split_whitespace().nth(1).unwrap().parse().unwrap(),
        head: head.to_string(),
        body: body.to_string(),
    }
}

#[test]
fn two_admins_demoting_each_other_at_once_leave_exactly_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let root = Session::new(&server, "root");
    accepted(&server, &root, "ann", "admin");
    let ann = Session::new(&server, "ann");
    let anonymous = long_match().to_string();
    // Each round, both admins send the other's demotion at the same moment: each request's
    // head and all of its body but the last byte go first, so that the server has found
    // both callers admins (the check of who asks) before either demotion is made; then the
    // last bytes, and an anonymous write.
    for round in 0..50 {
        let a = held_post(&server, &root, "/users/ann/accept", "role=user");
        let b = held_post(&server, &ann, "/users/root/accept", "role=user");
        std::thread::sleep(Duration::from_millis(150));
        let (a, b) = std::thread::scope(|scope| {
            let a = scope.spawn(|| finish(a));
            let b = scope.spawn(|| finish(b));
            (a.join().unwrap(), b.join().unwrap())
        });
        let (anon, _) = server.http("POST", "/api/runs", Some(&anonymous));
        assert_eq!(anon, 401, "round {round}: an anonymous write was accepted");
        let left = admins(&server, &[&root, &ann]);
        assert_eq!(
            left.len(),
            1,
            "round {round}: admins left: {left:?}; {a:?} {b:?}"
        );
        let done = [&a, &b].iter().filter(|r| r.code == 303).count();
        assert_eq!(done, 1, "round {round}: {a:?} {b:?}");
        let (winner, loser) = if left[0] == "root" {
            (&root, "ann")
        } else {
            (&ann, "root")
        };
        let r = winner.post(&server, &format!("/users/{loser}/accept"), "role=admin");
        assert_eq!(r.code, 303, "round {round}: {r:?}");
    }
    // The last admin cannot be demoted by anyone (an admin cannot demote themselves).
    let r = root.post(&server, "/users/ann/accept", "role=user");
    assert_eq!(r.code, 303, "{r:?}");
    let r = root.post(&server, "/users/root/accept", "role=user");
    assert_eq!(r.code, 400, "{r:?}");
    assert_eq!(admins(&server, &[&root]), ["root"]);
}

/// Makes every account of `data` a plain user (as a database restored from an old backup,
/// or edited by hand, may be).
fn no_admins_left(data: &Path) {
    let db = rusqlite::Connection::open(data.join("spar.db")).unwrap();
    db.execute("UPDATE users SET role = 'user'", []).unwrap();
}

#[test]
fn a_server_whose_admins_are_gone_refuses_every_change_until_one_is_added() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut server = server_with_admin(dir.path());
    let root = Session::new(&server, "root");
    let token = root.token(&server);
    server.kill9();
    no_admins_left(&data);
    let server = Server::start(&data, &dir.path().join("serve2.log"));
    let body = long_match().to_string();
    // Not the one-person mode: an anonymous write is refused, and so is everyone's.
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&serde_json::from_str(&body).unwrap()),
    );
    assert_eq!(code, 503, "{v}");
    assert!(v["error"].as_str().unwrap().contains("--add-admin"), "{v}");
    let (code, v) = api(&server, "POST", "/api/runs", &token, &body);
    assert_eq!(code, 503, "{v}");
    let root = Session::new(&server, "root");
    let r = root.post(&server, "/runs", "kind=match&words=--games+2");
    assert_eq!(r.code, 503, "{r:?}");
    let (code, v) = server.json("GET", "/api/runs", None);
    assert_eq!((code, v["runs"].as_array().map(Vec::len)), (200, Some(0)));
    // An admin made from the command line lets the server work again, with accounts.
    let o = add_admin(&data, "boss", &format!("{PASSWORD}\n"));
    assert!(o.status.success(), "{o:?}");
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&serde_json::from_str(&body).unwrap()),
    );
    assert_eq!(code, 401, "{v}");
    let boss = Session::new(&server, "boss");
    let boss_token = boss.token(&server);
    let (code, v) = api(&server, "POST", "/api/runs", &boss_token, &body);
    assert_eq!(code, 201, "{v}");
}

#[test]
fn sign_in_and_sign_up_from_another_site_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let own = format!("Origin: http://{}", server.addr);
    let credentials = format!("name=root&password={PASSWORD}");
    let post = |path: &str, headers: &[&str], body: &str| {
        let mut h = vec!["Content-Type: application/x-www-form-urlencoded".to_string()];
        h.extend(headers.iter().map(|s| s.to_string()));
        server.request("POST", path, &h, body)
    };
    for headers in [
        vec!["Origin: http://evil.example"],
        vec!["Origin: null"],
        vec!["Sec-Fetch-Site: cross-site", own.as_str()],
        vec!["Sec-Fetch-Site: same-site"],
    ] {
        let r = post("/login", &headers, &credentials);
        assert_eq!(r.code, 403, "{headers:?}: {r:?}");
        assert!(r.header("set-cookie").is_none(), "{headers:?}: {r:?}");
        assert!(r.body.contains("cross-site"), "{}", r.body);
        let r = post("/signup", &headers, "name=mallory&password=long-enough");
        assert_eq!(r.code, 403, "{headers:?}: {r:?}");
    }
    // The server's own pages, and programs that send no origin, sign in.
    for headers in [
        vec![own.as_str()],
        vec!["Sec-Fetch-Site: same-origin", own.as_str()],
        vec![],
    ] {
        let r = post("/login", &headers, &credentials);
        assert_eq!(r.code, 303, "{headers:?}: {r:?}");
    }
    // Mallory never got an account.
    let root = Session::new(&server, "root");
    assert!(!get(&server, "/users", Some(&root.cookie))
        .body
        .contains("mallory"));
}

#[test]
fn a_one_person_server_refuses_a_cross_site_post_too() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("data"), &dir.path().join("serve.log"));
    let r = server.request(
        "POST",
        "/api/runs",
        &[
            "Content-Type: application/json".into(),
            "Origin: http://evil.example".into(),
        ],
        &long_match().to_string(),
    );
    assert_eq!(r.code, 403, "{r:?}");
    let (code, v) = server.json("GET", "/api/runs", None);
    assert_eq!(
        (code, v["runs"].as_array().map(Vec::len)),
        (200, Some(0)),
        "{v}"
    );
}

#[test]
fn an_unknown_name_and_a_real_one_answer_alike_at_every_stage() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let try_as = |name: &str, password: &str| {
        let r = form(
            &server,
            "/login",
            None,
            &format!("name={name}&password={password}"),
        );
        // The seconds left may differ by one between the two.
        let body = r.body.replace(name, "NAME");
        let body = match body.split_once("try again in ") {
            Some((head, tail)) => format!(
                "{head}try again in N{}",
                tail.trim_start_matches(char::is_numeric)
            ),
            None => body,
        };
        (r.code, body)
    };
    for attempt in 0..7 {
        let real = try_as("root", "wrong-pass");
        let unknown = try_as("nobody", "wrong-pass");
        assert_eq!(real, unknown, "attempt {attempt}");
        let expected = if attempt < 5 { 401 } else { 429 };
        assert_eq!(real.0, expected, "attempt {attempt}: {}", real.1);
    }
    // Locked, even the right password waits (and an unknown name's does alike).
    let (code, body) = try_as("root", PASSWORD);
    assert_eq!(code, 429, "{body}");
    assert!(body.contains("try again in"), "{body}");
    // The case of the name does not escape the lock.
    assert_eq!(try_as("ROOT", PASSWORD).0, 429);
}

#[test]
fn names_that_differ_only_in_case_are_one_name() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = server_with_admin(dir.path());
    let root = Session::new(&server, "root");
    accepted(&server, &root, "bob", "user");
    for name in ["Bob", "BOB", "ROOT", "Root"] {
        let r = form(
            &server,
            "/signup",
            None,
            &format!("name={name}&password={PASSWORD}"),
        );
        assert_eq!(r.code, 409, "{name}: {r:?}");
        assert!(r.body.contains("is taken"), "{}", r.body);
    }
    let o = add_admin(&data, "BOB", &format!("{PASSWORD}\n"));
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    // Signing in takes the name in any case, as the account it is.
    let bob = Session::new(&server, "BoB");
    let page = get(&server, "/account", Some(&bob.cookie)).body;
    assert!(page.contains(">bob<"), "{page}");
}

#[test]
fn many_sign_ins_at_once_keep_the_server_small() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let o = add_admin(&data, "root", &format!("{PASSWORD}\n"));
    assert!(o.status.success(), "{o:?}");
    // 200 clients on one address: more than the default bound of connections per address.
    let server = Server::start_with(
        &data,
        &dir.path().join("serve.log"),
        &["--connections-per-address", "400"],
        None,
        dir.path(),
    );
    let credentials = format!("name=root&password={PASSWORD}");
    let before = server.rss_mib();
    for wave in [32, 200] {
        let codes: Vec<u16> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..wave)
                .map(|_| scope.spawn(|| form(&server, "/login", None, &credentials).code))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let signed_in = codes.iter().filter(|&&c| c == 303).count();
        assert!(codes.iter().all(|&c| c == 303 || c == 503), "{codes:?}");
        assert!(
            signed_in >= wave.min(66),
            "{wave}: {signed_in} of {codes:?}"
        );
        std::thread::sleep(Duration::from_millis(300));
        let rss = server.rss_mib();
        println!(
            "{wave} sign-ins at once: {signed_in} signed in, RSS {rss} MiB (before: {before} MiB)"
        );
        assert!(
            rss < 400,
            "{wave} sign-ins at once: {rss} MiB (before: {before} MiB)"
        );
    }
}

/// The parameters of handler `module::name` as handlers/MODULE.rs declares them.
fn handler_params(module: &str, name: &str) -> String {
    let path = format!(
        "{}/src/serve/handlers/{module}.rs",
        env!("CARGO_MANIFEST_DIR")
    );
    let src = std::fs::read_to_string(&path).unwrap();
    let at = src
        .find(&format!("pub async fn {name}("))
        .unwrap_or_else(|| panic!("no handler {module}::{name} in {path}"));
    let rest = &src[at..];
    rest[..rest.find(") ->").unwrap()].to_string()
}

#[test]
fn every_run_route_reads_its_id_through_the_extractors_and_changes_need_the_owner() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/serve/router.rs"))
        .unwrap();
    let mut checked = 0;
    for route in src.split(".route(\"").skip(1) {
        let path = route.split('"').next().unwrap();
        if !(path.starts_with("/runs/{id}") || path.starts_with("/api/runs/{id}")) {
            continue;
        }
        let methods = &route[..route.find("\n        .").unwrap_or(route.len())];
        let mut pairs = Vec::new();
        for method in ["get", "post", "delete", "patch", "put"] {
            for (at, _) in methods.match_indices(&format!("{method}(")) {
                let before = methods[..at].chars().last().unwrap_or(' ');
                if before.is_alphanumeric() || before == '_' || before == ':' {
                    continue;
                }
                let rest = &methods[at + method.len() + 1..];
                pairs.push((method, rest.split(')').next().unwrap()));
            }
        }
        for (method, handler) in pairs {
            let (module, name) = handler.split_once("::").unwrap();
            let params = handler_params(module, name);
            let what = format!("{method} {path} → {handler}: {params}");
            assert!(!params.contains("Path<i64>"), "{what}");
            if method == "get" {
                assert!(params.contains("RunId"), "{what}");
            } else {
                assert!(params.contains("OwnRun"), "{what}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 17, "{checked}");
}
