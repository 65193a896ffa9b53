//! `spar serve` attacked as an outsider would, on a server WITH an admin (issue 32,
//! exposure): path traversal in downloads, oversized bodies on the API and the forms,
//! injection attempts (SQL, shell, HTML/JS) in every text field — each stored literally or
//! refused, never executed, escaped on every page —, 100 submissions in parallel each
//! stored once, HTTPS served with rustls and its `Secure` cookie, and the refusals of
//! `--public`, `--tls-cert`/`--tls-key` and `--behind-proxy` at start.

mod common;
mod serve_common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use serve_common::tls::{self, certificates};
use serve_common::{spar, Reply, Server};

const PASSWORD: &str = "s3cret-pass";
const WORDS: [&str; 8] = serve_common::LITTLE_MATCH;

/// `spar serve --data-dir DATA --add-admin root`, the password piped in.
fn add_admin(data: &Path) {
    let mut child = spar()
        .args(["serve", "--add-admin", "root", "--data-dir"])
        .arg(data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{PASSWORD}\n").as_bytes());
    common::ok(&child.wait_with_output().unwrap());
}

/// A server with the admin `root`, started in `dir` (relative paths in its words and the
/// children's working directory are there).
fn server_with_admin(dir: &Path) -> Server {
    let data = dir.join("data");
    add_admin(&data);
    Server::start_with(&data, &dir.join("serve.log"), &[], None, dir)
}

/// A value URL-encoded as a browser encodes a form field.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            b' ' => "+".to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A form POST of a session (its cookie and CSRF token added).
fn form(s: &Server, path: &str, session: &(String, String), fields: &[(&str, &str)]) -> Reply {
    let mut body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect();
    body.push(format!("csrf={}", session.1));
    let headers = [
        "Content-Type: application/x-www-form-urlencoded".to_string(),
        format!("Cookie: spar_session={}", session.0),
    ];
    s.request("POST", path, &headers, &body.join("&"))
}

fn get(s: &Server, path: &str, session: &(String, String)) -> Reply {
    let cookie = format!("Cookie: spar_session={}", session.0);
    s.request("GET", path, &[cookie], "")
}

/// Signs in as root: the session cookie and its CSRF token.
fn sign_in(s: &Server) -> (String, String) {
    let headers = ["Content-Type: application/x-www-form-urlencoded".to_string()];
    let r = s.request(
        "POST",
        "/login",
        &headers,
        &format!("name=root&password={PASSWORD}"),
    );
    assert_eq!(r.code, 303, "{r:?}");
    let set = r.header("set-cookie").unwrap();
    let cookie = set
        .strip_prefix("spar_session=")
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_string();
    let page = s
        .request("GET", "/", &[format!("Cookie: spar_session={cookie}")], "")
        .body;
    let at = page.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    (cookie, page[at..at + 64].to_string())
}

/// A new API token of the session's account, made on /account with `label`.
fn api_token(s: &Server, session: &(String, String), label: &str) -> String {
    let r = form(s, "/account/tokens", session, &[("label", label)]);
    assert_eq!(r.code, 200, "{r:?}");
    let at = r.body.find("<pre id=\"token\">").expect("the new token") + 16;
    r.body[at..at + 64].to_string()
}

/// A JSON request with an API token.
fn api(s: &Server, method: &str, path: &str, token: &str, body: &Value) -> (u16, Value) {
    let headers = [
        "Content-Type: application/json".to_string(),
        format!("Authorization: Bearer {token}"),
    ];
    let r = s.request(method, path, &headers, &body.to_string());
    (r.code, serde_json::from_str(&r.body).unwrap_or(Value::Null))
}

/// Every run the API lists (deleted ones left out).
fn runs(s: &Server) -> Vec<Value> {
    let (code, v) = s.json("GET", "/api/runs?limit=100000", None);
    assert_eq!(code, 200, "{v}");
    v["runs"].as_array().unwrap().clone()
}

/// Reads a whole answer from `stream` (an early close after the answer is no failure).
fn answer(stream: &mut impl Read) -> Reply {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Reply {
        code,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// A POST that declares a `size`-byte body and waits to be told to send it (`Expect:
/// 100-continue`): the body is sent only after a `100 Continue`; the final answer.
fn declared(s: &Server, path: &str, kind: &str, size: usize) -> Reply {
    let mut stream = TcpStream::connect(&s.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: {kind}\r\nContent-Length: {size}\r\n\
         Expect: 100-continue\r\nConnection: close\r\n\r\n",
        s.addr
    )
    .unwrap();
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).unwrap();
    if first.starts_with(b"HTTP/1.1 100") {
        let mut skip = Vec::new();
        while !skip.ends_with(b"\r\n\r\n") {
            let mut b = [0u8; 1];
            stream.read_exact(&mut b).unwrap();
            skip.push(b[0]);
        }
        stream.write_all(&vec![b' '; size]).unwrap();
        return answer(&mut stream);
    }
    let mut reply = answer(&mut stream);
    reply.code = String::from_utf8_lossy(&first[9..12]).parse().unwrap();
    reply.head = format!("{}{}", String::from_utf8_lossy(&first), reply.head);
    reply
}

/// A chunked POST (no `Content-Length`) of `size` bytes of `fill`, the last chunk never
/// closed: the answer.
fn chunked(s: &Server, path: &str, kind: &str, size: usize) -> Reply {
    let mut stream = TcpStream::connect(&s.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: {kind}\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        s.addr
    )
    .unwrap();
    let mut left = size;
    while left > 0 {
        let n = left.min(64 << 10);
        let chunk = format!("{n:x}\r\n{}\r\n", " ".repeat(n));
        if stream.write_all(chunk.as_bytes()).is_err() {
            break;
        }
        left -= n;
    }
    answer(&mut stream)
}

#[test]
fn downloads_stay_in_the_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let session = sign_in(&server);
    let token = api_token(&server, &session, "downloads");
    let (code, v) = api(
        &server,
        "POST",
        "/api/runs",
        &token,
        &json!({"kind": "match", "words": WORDS}),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    server.wait(id, "finished", |v| serve_common::state(v) == "finished");
    // Secrets beside and inside the run directory that no download may reach.
    std::fs::write(dir.path().join("secret.txt"), "SECRET outside\n").unwrap();
    let run_dir = dir.path().join("data/runs").join(id.to_string());
    std::fs::write(run_dir.join(".hidden"), "SECRET hidden\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), run_dir.join("link.csv")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", run_dir.join("passwd.txt")).unwrap();
    std::fs::create_dir(run_dir.join("sub")).unwrap();
    std::fs::write(run_dir.join("sub/inner.txt"), "SECRET inner\n").unwrap();
    let base = format!("/runs/{id}/files/");
    let ok = server.request("GET", &format!("{base}results.csv"), &[], "");
    assert_eq!(ok.code, 200, "{ok:?}");
    assert!(ok.body.lines().count() >= 2, "{}", ok.body);
    for (attempt, code) in [
        ("..", 400),
        (".", 400),
        ("%2e%2e", 400),
        ("%2E%2E", 400),
        ("%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.txt", 400),
        ("..%2f..%2f..%2fsecret.txt", 400),
        ("..%5c..%5c..%5csecret.txt", 400),
        ("%2fetc%2fpasswd", 400),
        ("%2Fetc%2Fpasswd", 400),
        (".hidden", 400),
        ("%2ehidden", 400),
        ("sub%2finner.txt", 400),
        ("results.csv%00.txt", 400),
        ("../../../secret.txt", 404),
        ("sub/inner.txt", 404),
        ("sub", 404),
        ("link.csv", 404),
        ("passwd.txt", 404),
        ("nothing.csv", 404),
    ] {
        // Byte for byte: a client could refuse or rewrite these paths.
        let r = server.raw_request("GET", &format!("{base}{attempt}"), &[], "");
        eprintln!("download {attempt}: {}", r.code);
        assert_eq!(r.code, code, "{attempt}: {r:?}");
        assert!(
            !r.body.contains("SECRET") && !r.body.contains("root:"),
            "{attempt}: {}",
            r.body
        );
    }
    // The links and the hidden file are not offered on the run's page either.
    let page = get(&server, &format!("/runs/{id}"), &session).body;
    assert!(page.contains("results.csv"), "{page}");
    // (As links: the page's script has `.hidden` of its own.)
    assert!(!page.contains("inner.txt"), "{page}");
    for hidden in ["link.csv", "passwd.txt", ".hidden", "sub"] {
        let link = format!("/files/{hidden}\"");
        assert!(!page.contains(&link), "{hidden} offered: {page}");
    }
}

#[test]
fn oversized_bodies_are_refused_with_413_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let session = sign_in(&server);
    let before = runs(&server).len();
    let json_kind = "application/json";
    let form_kind = "application/x-www-form-urlencoded";
    // Declared sizes over the limit: refused before a byte of the body is sent.
    for (path, kind, size, limit) in [
        ("/api/runs", json_kind, 2 << 20, 1 << 20),
        ("/api/engines", json_kind, (1 << 20) + 1, 1 << 20),
        ("/runs", form_kind, (256 << 10) + 1, 256 << 10),
        ("/runs/1/note", form_kind, 1 << 20, 256 << 10),
        ("/login", form_kind, (16 << 10) + 1, 16 << 10),
        ("/signup", form_kind, 1 << 20, 16 << 10),
    ] {
        let r = declared(&server, path, kind, size);
        eprintln!("{path} declaring {size} bytes: {}", r.code);
        assert_eq!(r.code, 413, "{path} {size}: {r:?}");
        assert!(r.body.contains(&format!("at most {limit} bytes")), "{r:?}");
        if path.starts_with("/api/") {
            let v: Value = serde_json::from_str(&r.body).unwrap();
            assert!(v["error"].as_str().unwrap().contains("API request"), "{v}");
        } else {
            assert!(r.body.contains("id=\"error\""), "{}", r.body);
        }
    }
    // Bodies without a length: refused once the reading passes the limit.
    let r = chunked(&server, "/api/runs", json_kind, (1 << 20) + 1);
    assert_eq!(r.code, 413, "{r:?}");
    assert!(r.body.contains("\"error\""), "{}", r.body);
    let r = chunked(&server, "/runs", form_kind, (256 << 10) + 1);
    assert_eq!(r.code, 413, "{r:?}");
    assert_eq!(runs(&server).len(), before, "nothing stored");
    // A body under the limit is served: 900 KiB of JSON (mostly blanks) is a run.
    let token = api_token(&server, &session, "big");
    let run = json!({"kind": "match", "words": WORDS}).to_string();
    let padded = format!("{run}{}", " ".repeat(900 << 10));
    let headers = [
        "Content-Type: application/json".to_string(),
        format!("Authorization: Bearer {token}"),
    ];
    let r = server.request("POST", "/api/runs", &headers, &padded);
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(runs(&server).len(), before + 1);
    // Too many headers: hyper's own bound (431).
    let many: Vec<String> = (0..120).map(|i| format!("X-Filler-{i}: x")).collect();
    let r = server.request("GET", "/", &many, "");
    assert_eq!(r.code, 431, "{r:?}");
}

#[test]
fn injection_attempts_are_stored_literally_or_refused_never_run_and_always_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let session = sign_in(&server);
    let marks: Vec<_> = (1..=8)
        .map(|i| dir.path().join(format!("mark{i}")))
        .collect();
    let script = "<script>alert(1)</script>";
    let img = "\"><img src=x onerror=alert(1)>";
    let attempts = [
        "'; DROP TABLE runs; --".to_string(),
        "$(touch mark1)".to_string(),
        "`touch mark2`".to_string(),
        "x; touch mark3".to_string(),
        script.to_string(),
        img.to_string(),
    ];
    let token = api_token(&server, &session, script);
    let mut played = Vec::new();
    // Notes: stored exactly as sent, by the API and by the note form.
    let (code, v) = api(
        &server,
        "POST",
        "/api/runs",
        &token,
        &json!({"kind": "match", "words": WORDS, "note": attempts.join(" | ")}),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    assert_eq!(server.run(id)["note"], attempts.join(" | "));
    let second = api(
        &server,
        "POST",
        "/api/runs",
        &token,
        &json!({"kind": "match", "words": WORDS}),
    );
    let id2 = second.1["id"].as_i64().unwrap();
    for a in &attempts {
        let r = form(
            &server,
            &format!("/runs/{id2}/note"),
            &session,
            &[("note", a)],
        );
        assert_eq!(r.code, 303, "{a}: {r:?}");
        assert_eq!(server.run(id2)["note"], a.as_str());
    }
    // Words: an engine named with HTML, shell in a book, an option and a limit: each
    // stored literally or refused with the words in the message.
    for (at, bad) in [
        (1, format!("name={script}")),
        (1, "name=$(touch mark4)".to_string()),
        (3, format!("name=b{img}")),
        (1, "name=a`touch mark7`;".to_string()),
    ] {
        let mut words: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
        words[at] = bad.clone();
        let (code, v) = api(
            &server,
            "POST",
            "/api/runs",
            &token,
            &json!({"kind": "match", "words": words}),
        );
        assert!(code == 201 || code == 400, "{bad}: {code} {v}");
        eprintln!("words {bad}: {code} {v}");
        if code == 201 {
            let run = server.run(v["id"].as_i64().unwrap());
            assert_eq!(run["words"][at], bad.as_str());
            played.push(v["id"].as_i64().unwrap());
        }
    }
    for (at, extra) in [
        (8, "--book|$(touch mark5)"),
        (8, "--book|`touch mark6`;"),
        (2, "option.Hash=1; touch mark7"),
        (6, "tc=$(touch mark7)"),
    ] {
        let mut words: Vec<&str> = WORDS.to_vec();
        for (i, w) in extra.split('|').enumerate() {
            words.insert(at + i, w);
        }
        let (code, v) = api(
            &server,
            "POST",
            "/api/runs",
            &token,
            &json!({"kind": "match", "words": words}),
        );
        assert_eq!(code, 400, "{extra:?}: {v}");
        eprintln!("words {extra:?}: {code} {v}");
        assert!(v["error"].as_str().is_some(), "{v}");
    }
    // The new-run form: refused, its words kept in the form, escaped.
    let words = format!("--engine name=a --engine name=b --book {script} --each nodes=300");
    let r = form(
        &server,
        "/runs",
        &session,
        &[("kind", "match"), ("words", &words), ("note", img)],
    );
    assert_eq!(r.code, 400, "{r:?}");
    assert!(
        !r.body.contains(script) && !r.body.contains("<img src=x"),
        "{}",
        r.body
    );
    assert!(r.body.contains("&lt;script&gt;"), "{}", r.body);
    // Engines: names are refused; a repository path with shell and HTML is only a path.
    // The runs stored with odd engine names play (the names never run), and their pages
    // and status pages show the names escaped.
    for &id in &played {
        let done = server.wait(id, "finished", |v| serve_common::state(v) == "finished");
        eprintln!("run {id} {}: {}", done["words"], serve_common::state(&done));
        for page in [format!("/runs/{id}"), format!("/runs/{id}/status.html")] {
            let r = get(&server, &page, &session);
            assert_eq!(r.code, 200, "{page}: {r:?}");
            assert!(
                !r.body.contains(script) && !r.body.contains("<img src=x"),
                "{page} shows an engine name unescaped"
            );
        }
    }
    for name in [script, img, "$(touch mark8)", "'; DROP TABLE engines; --"] {
        let (code, v) = api(
            &server,
            "POST",
            "/api/engines",
            &token,
            &json!({"name": name, "repo": "."}),
        );
        assert_eq!(code, 400, "{name}: {v}");
        eprintln!("engine name {name}: {code} {v}");
        let r = form(
            &server,
            "/engines",
            &session,
            &[("name", name), ("repo", ".")],
        );
        assert_eq!(r.code, 400, "{name}: {r:?}");
        eprintln!("engine form name {name}: {}", r.code);
        assert!(
            !r.body.contains(script) && !r.body.contains("<img src=x"),
            "{}",
            r.body
        );
    }
    let odd = dir.path().join("repo $(touch mark8) `touch mark8` <b>\"x");
    serve_common::tiny_engine(&odd, &dir.path().join("builds"));
    let odd = odd.to_str().unwrap();
    let (code, v) = api(
        &server,
        "POST",
        "/api/engines",
        &token,
        &json!({"name": "odd", "repo": odd}),
    );
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["repo"], odd);
    let (code, v) = api(
        &server,
        "POST",
        "/api/engines",
        &token,
        &json!({"name": "shell", "repo": "$(touch mark8); `touch mark8`"}),
    );
    assert_eq!(code, 400, "{v}");
    // User names: refused, the form showing the name escaped; a password is only a password.
    for name in [script, img, "x'; DROP TABLE users; --", "$(touch mark8)"] {
        let headers = ["Content-Type: application/x-www-form-urlencoded".to_string()];
        let body = format!("name={}&password={}", enc(name), enc(PASSWORD));
        let r = server.request("POST", "/signup", &headers, &body);
        assert_eq!(r.code, 400, "{name}: {r:?}");
        eprintln!("sign-up name {name}: {}", r.code);
        assert!(
            !r.body.contains(script) && !r.body.contains("<img src=x"),
            "{}",
            r.body
        );
        let body = format!("name={}&password={}", enc(name), enc(&attempts[0]));
        let r = server.request("POST", "/login", &headers, &body);
        assert!(r.code >= 400 && r.code < 500, "{name}: {r:?}");
        eprintln!("sign-in name {name}: {}", r.code);
    }
    let headers = ["Content-Type: application/x-www-form-urlencoded".to_string()];
    let body = format!("name=ann&password={}", enc("$(touch mark8)`touch mark8`"));
    let r = server.request("POST", "/signup", &headers, &body);
    assert_eq!(r.code, 200, "{r:?}");
    // Every page that shows them escapes them.
    let search = format!("/search?q={}", enc(script));
    let sql = format!("/search?q={}", enc(&attempts[0]));
    for page in [
        "/".to_string(),
        format!("/runs/{id}"),
        format!("/runs/{id2}"),
        search.clone(),
        sql,
        "/engines".to_string(),
        "/users".to_string(),
        "/account".to_string(),
        "/events".to_string(),
    ] {
        let r = get(&server, &page, &session);
        assert_eq!(r.code, 200, "{page}: {r:?}");
        assert!(
            !r.body.contains(script)
                && !r.body.contains("<img src=x")
                && !r.body.contains("<b>\"x"),
            "{page} shows an attempt unescaped"
        );
    }
    let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;";
    for page in [
        "/".to_string(),
        format!("/runs/{id}"),
        search,
        "/account".to_string(),
    ] {
        let body = get(&server, &page, &session).body;
        assert!(
            body.contains(escaped),
            "{page} lacks the escaped note or label"
        );
    }
    let engines = get(&server, "/engines", &session).body;
    assert!(engines.contains("&lt;b&gt;&quot;x"), "{engines}");
    assert!(get(&server, "/users", &session).body.contains("ann"));
    // The SQL did nothing: every run is listed, the tables answer.
    let listed = runs(&server);
    assert!(listed.iter().any(|r| r["id"] == id) && listed.iter().any(|r| r["id"] == id2));
    let (code, _) = server.json("GET", "/api/engines", None);
    assert_eq!(code, 200);
    // Nothing ran: no marker file, here or in the server's directory.
    for m in &marks {
        assert!(!m.exists(), "{} was made", m.display());
    }
}

#[test]
fn a_hundred_parallel_submissions_are_each_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    add_admin(&data);
    // A hundred connections at once from one address: more than its default bound (64).
    let log = dir.path().join("serve.log");
    let extra = ["--connections-per-address", "128"];
    let server = Arc::new(Server::start_with(&data, &log, &extra, None, dir.path()));
    let session = sign_in(&server);
    let token = Arc::new(api_token(&server, &session, "parallel"));
    let threads: Vec<_> = (0..100)
        .map(|i| {
            let (server, token) = (server.clone(), token.clone());
            std::thread::spawn(move || {
                let body =
                    json!({"kind": "match", "words": WORDS, "note": format!("parallel {i}")});
                api(&server, "POST", "/api/runs", &token, &body)
            })
        })
        .collect();
    let mut ids = BTreeSet::new();
    for t in threads {
        let (code, v) = t.join().unwrap();
        assert_eq!(code, 201, "{v}");
        assert!(ids.insert(v["id"].as_i64().unwrap()), "an id twice: {v}");
    }
    assert_eq!(ids.len(), 100);
    let listed = runs(&server);
    assert_eq!(listed.len(), 100, "each submission stored once");
    let notes: BTreeSet<String> = listed
        .iter()
        .map(|r| r["note"].as_str().unwrap().to_string())
        .collect();
    let wanted: BTreeSet<String> = (0..100).map(|i| format!("parallel {i}")).collect();
    assert_eq!(notes, wanted);
    let listed_ids: BTreeSet<i64> = listed.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(listed_ids, ids);
}

/// `spar serve --data-dir DATA ARGS…` (with its own `--bind`): the child and the address
/// of the URL it prints (`scheme` is `http://` or `https://`).
fn serve(data: &Path, args: &[&str], scheme: &str) -> (std::process::Child, String) {
    let mut child = spar()
        .args(["serve", "--cores", "1", "--data-dir"])
        .arg(data)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split(scheme)
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no {scheme} URL in {line:?}"))
        .to_string();
    (child, addr)
}

/// One HTTPS request to `addr` (as `localhost`), trusting only `ca`: the answer.
fn https(addr: &str, ca: &[u8], method: &str, path: &str, headers: &[String], body: &str) -> Reply {
    let port = addr.rsplit(':').next().unwrap();
    let url = format!("https://localhost:{port}{path}");
    serve_common::send(&tls::agent(ca), &url, method, headers, body)
}

#[test]
fn a_tls_server_speaks_https_and_its_cookie_is_secure() {
    let dir = tempfile::tempdir().unwrap();
    let ca = certificates(dir.path());
    let data = dir.path().join("data");
    add_admin(&data);
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let (mut child, addr) = serve(
        &data,
        &[
            "--public",
            "--bind",
            "127.0.0.1:0",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        "https://",
    );
    let body = format!("name=root&password={PASSWORD}");
    let form = "Content-Type: application/x-www-form-urlencoded".to_string();
    let r = https(
        &addr,
        &ca,
        "POST",
        "/login",
        std::slice::from_ref(&form),
        &body,
    );
    assert_eq!(r.code, 303, "{r:?}");
    let cookie = r.header("set-cookie").unwrap();
    assert!(
        cookie.ends_with("; Secure") && cookie.contains("HttpOnly"),
        "{cookie}"
    );
    let r = https(&addr, &ca, "GET", "/", &[], "");
    assert_eq!(r.code, 200, "{r:?}");
    assert!(r.body.contains("<h1>Runs</h1>"), "{}", r.body);
    // Plain HTTP to the TLS port gets no page.
    let mut plain = TcpStream::connect(&addr).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let _ = plain.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let r = answer(&mut plain);
    assert_ne!(r.code, 200, "{r:?}");
    // `spar submit` over HTTPS with an API token: trusting the test's CA, and refused
    // without it (the system does not know that CA).
    let session = cookie
        .strip_prefix("spar_session=")
        .and_then(|c| c.split(';').next())
        .unwrap();
    let cookie = format!("Cookie: spar_session={session}");
    let page = https(&addr, &ca, "GET", "/", std::slice::from_ref(&cookie), "").body;
    let at = page.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    let body = format!("label=cli&csrf={}", &page[at..at + 64]);
    let made = https(
        &addr,
        &ca,
        "POST",
        "/account/tokens",
        &[cookie, form],
        &body,
    );
    let at = made.body.find("<pre id=\"token\">").expect("the new token") + 16;
    let token = &made.body[at..at + 64];
    let port = addr.rsplit(':').next().unwrap();
    let url = format!("https://localhost:{port}");
    let ca_pem = dir.path().join("ca.pem");
    let submit = |ca: Option<&Path>| {
        let mut cmd = spar();
        cmd.args(["submit", "--server", &url, "--token", token]);
        if let Some(ca) = ca {
            cmd.arg("--ca").arg(ca);
        }
        cmd.arg("match").args(WORDS).output().unwrap()
    };
    let out = common::ok(&submit(Some(&ca_pem)));
    assert_eq!(out.trim(), format!("{url}/runs/1"));
    // (exit 1: the certificate is refused; 2 on a machine with no trusted certificates.)
    let o = submit(None);
    assert!(matches!(o.status.code(), Some(1 | 2)), "{o:?}");
    let err = common::stderr(&o);
    assert!(
        err.contains("certificate") && err.contains("--ca PATH"),
        "{err}"
    );
    let o = spar()
        .args(["submit", "--server", "http://127.0.0.1:1", "--ca"])
        .arg(&ca_pem)
        .arg("match")
        .args(WORDS)
        .output()
        .unwrap();
    common::usage_error(&o, "only for an https:// server");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn behind_a_proxy_it_warns_and_its_cookie_is_secure_and_on_loopback_it_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    add_admin(&data);
    let log = dir.path().join("proxy.log");
    let server = Server::start_with(&data, &log, &["--behind-proxy"], None, dir.path());
    let headers = ["Content-Type: application/x-www-form-urlencoded".to_string()];
    let body = format!("name=root&password={PASSWORD}");
    let r = server.request("POST", "/login", &headers, &body);
    assert!(
        r.header("set-cookie").unwrap().ends_with("; Secure"),
        "{r:?}"
    );
    let warned = serve_common::read(&log);
    assert!(
        warned.contains("reverse proxy") && warned.contains("must terminate TLS"),
        "{warned}"
    );
    drop(server);
    let server = Server::start_with(&data, &dir.path().join("plain.log"), &[], None, dir.path());
    let r = server.request("POST", "/login", &headers, &body);
    assert!(!r.header("set-cookie").unwrap().contains("Secure"), "{r:?}");
}

#[test]
fn exposure_is_refused_at_start_without_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    certificates(dir.path());
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let empty = p("empty");
    std::fs::write(p("junk.pem"), "not a certificate\n").unwrap();
    let config = p("serve.toml");
    std::fs::write(
        &config,
        "bind = \"0.0.0.0:0\"\npublic = true\nbehind-proxy = true\n",
    )
    .unwrap();
    let (cert, key, other, junk) = (
        p("cert.pem"),
        p("key.pem"),
        p("other-key.pem"),
        p("junk.pem"),
    );
    let refused = |extra: &[&str]| {
        let mut args = vec!["serve", "--data-dir", &empty, "--cores", "1"];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (refused(&["--bind", "0.0.0.0:0"]), "needs --public"),
        (refused(&["--bind", "[::]:0"]), "not a loopback address"),
        (
            refused(&["--public", "--bind", "0.0.0.0:0"]),
            "--public needs TLS",
        ),
        (
            refused(&["--public", "--behind-proxy", "--bind", "0.0.0.0:0"]),
            "--add-admin NAME",
        ),
        (refused(&["--config", &config]), "--add-admin NAME"),
        (
            refused(&["--behind-proxy"]),
            "--behind-proxy: the data directory",
        ),
        (
            refused(&["--public", "--tls-cert", &cert]),
            "--tls-cert needs --tls-key",
        ),
        (
            refused(&["--tls-cert", &cert, "--tls-key", &key, "--behind-proxy"]),
            "choose one",
        ),
        (
            refused(&["--public", "--tls-cert", &p("none.pem"), "--tls-key", &key]),
            "cannot read it",
        ),
        (
            refused(&["--public", "--tls-cert", &junk, "--tls-key", &key]),
            "no certificate in it",
        ),
        (
            refused(&["--public", "--tls-cert", &cert, "--tls-key", &junk]),
            "no private key in it",
        ),
        (
            refused(&["--public", "--tls-cert", &cert, "--tls-key", &other]),
            "is the key the certificate's?",
        ),
    ];
    for (args, needle) in &cases {
        let o = spar().args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = common::stderr(&o);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(
        !Path::new(&empty).exists(),
        "a refused start made its data directory"
    );
    // With an admin, a public server behind a proxy starts on every address.
    let data = dir.path().join("data");
    add_admin(&data);
    let args = ["--public", "--behind-proxy", "--bind", "0.0.0.0:0"];
    let (mut child, addr) = serve(&data, &args, "http://");
    let port = addr.rsplit(':').next().unwrap();
    let url = format!("http://127.0.0.1:{port}/");
    let r = serve_common::send(serve_common::client(), &url, "GET", &[], "");
    assert_eq!(r.code, 200, "{r:?}");
    let _ = child.kill();
    let _ = child.wait();
}
