//! `spar serve`'s networks, as users meet them over HTTP: uploads by the API (the raw
//! file) and by the nets page's form (multipart), stored once by SHA-256, checked with the
//! engine's net loader for the embedded engine, bounded (413, nothing stored); runs that
//! name a net (`net=NAME`) or get their engine's default, recording the sha; a used net
//! never removed, an unused one archived; uploads refused without an account on a server
//! with an admin.

mod common;
mod serve_common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use serve_common::{state, Server};
use sha2::{Digest, Sha256};

const NET: &str = "../engine/nets/default.nnue";

fn default_net() -> Vec<u8> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read(here.join(NET)).expect("the committed net")
}

/// Another valid net: the committed one with another output bias.
fn other_net(bias: i32) -> Vec<u8> {
    let mut n = engine::nnue::Network::from_bytes(&default_net()).unwrap();
    n.output_bias[0] += bias;
    n.to_bytes()
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One request with a binary body (its length declared unless `headers` declare it or
/// chunk it): the status and the body.
fn send(s: &Server, method: &str, path: &str, headers: &[String], body: &[u8]) -> (u16, String) {
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
    let length = if headers
        .iter()
        .any(|h| h.to_ascii_lowercase().starts_with("content-length") || h.contains("chunked"))
    {
        String::new()
    } else {
        format!("Content-Length: {}\r\n", body.len())
    };
    write!(
        c,
        "{method} {path} HTTP/1.1\r\nHost: {}\r\n{extra}{length}Connection: close\r\n\r\n",
        s.addr
    )
    .unwrap();
    // A refusal may come before the body is read: what is left unsent is dropped.
    let _ = c.write_all(body);
    let mut reply = Vec::new();
    let _ = c.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply).into_owned();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (code, body.to_string())
}

fn upload(s: &Server, name: &str, engine: &str, bytes: &[u8]) -> (u16, Value) {
    let (code, body) = send(
        s,
        "POST",
        &format!("/api/nets?name={name}&engine={engine}"),
        &[],
        bytes,
    );
    (code, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// The nets page's upload form as a browser posts it.
fn upload_form(s: &Server, path: &str, cookie: Option<&str>, name: &str, bytes: &[u8]) -> u16 {
    let mut body = Vec::new();
    for (k, v) in [("name", name), ("engine", "embedded")] {
        write!(
            body,
            "--b0undary\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
        )
        .unwrap();
    }
    body.extend_from_slice(
        b"--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.nnue\"\r\n\
          Content-Type: application/octet-stream\r\n\r\n",
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(b"\r\n--b0undary--\r\n");
    let mut headers = vec!["Content-Type: multipart/form-data; boundary=b0undary".to_string()];
    if let Some(c) = cookie {
        headers.push(format!("Cookie: spar_session={c}"));
    }
    send(s, "POST", path, &headers, &body).0
}

fn names(s: &Server) -> Vec<String> {
    let (code, v) = s.json("GET", "/api/nets", None);
    assert_eq!(code, 200, "{v}");
    v["nets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap().to_string())
        .collect()
}

/// The files under `dir` (names), sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn data(dir: &Path) -> PathBuf {
    dir.join("data")
}

#[test]
fn uploads_are_stored_once_by_sha_checked_bounded_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_with(
        &data(dir.path()),
        &dir.path().join("serve.log"),
        &["--net-limit", "1"],
        None,
        &std::env::current_dir().unwrap(),
    );
    let net = default_net();
    let (code, v) = upload(&s, "main", "embedded", &net);
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["sha"], sha(&net));
    assert_eq!(v["size"], net.len());
    assert_eq!(v["engine"], "embedded");
    let nets = data(dir.path()).join("nets");
    assert_eq!(common::bytes(&nets.join(sha(&net))), net);
    // The same file under another name: one file.
    let (code, v) = upload(&s, "same", "embedded", &net);
    assert_eq!(code, 201, "{v}");
    assert_eq!(files(&nets), vec![sha(&net)]);

    // Refused, nothing stored: garbage for the embedded engine, a name taken, a bad name,
    // an unknown engine.
    let (code, v) = upload(&s, "junk", "embedded", b"not a net at all, surely");
    assert_eq!(code, 400, "{v}");
    let e = v["error"].as_str().unwrap();
    assert!(
        e.contains("net junk: not a network spar's engine can load") && e.contains("SPARNNUE"),
        "{e}"
    );
    // (Refused before the body is read: a short one.)
    let (code, v) = upload(&s, "main", "embedded", b"x");
    assert_eq!(code, 409, "{v}");
    let (code, v) = upload(&s, "..%2Fx", "embedded", b"x");
    assert_eq!(code, 400, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("net name '../x'"),
        "{v}"
    );
    let (code, v) = upload(&s, "x", "nope", b"x");
    assert_eq!(code, 400, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("engine 'nope'"),
        "{v}"
    );

    // Beyond --net-limit 1 (MiB): a 413, declared or streamed, and nothing stored.
    let over = (1 << 20) + 1;
    let (code, body) = send(
        &s,
        "POST",
        "/api/nets?name=big&engine=embedded",
        &[format!("Content-Length: {over}")],
        b"",
    );
    assert_eq!(code, 413, "{body}");
    assert!(body.contains("larger than 1048576 bytes"), "{body}");
    let mut chunked = Vec::new();
    for _ in 0..16 {
        write!(chunked, "{:x}\r\n", 1 << 16).unwrap();
        chunked.extend(vec![7u8; 1 << 16]);
        chunked.extend_from_slice(b"\r\n");
    }
    // The byte past the limit, and no more (all that is sent is read: a clean close).
    chunked.extend_from_slice(b"1\r\nX");
    let (code, body) = send(
        &s,
        "POST",
        "/api/nets?name=big&engine=embedded",
        &["Transfer-Encoding: chunked".to_string()],
        &chunked,
    );
    assert_eq!(code, 413, "{body}");
    assert_eq!(files(&nets), vec![sha(&net)]);
    assert!(files(&nets.join("tmp")).is_empty());
    assert_eq!(names(&s), vec!["main", "same"]);

    // The page's form (multipart): stored, then the page lists every net.
    assert_eq!(upload_form(&s, "/nets", None, "from-page", &net), 303);
    let (code, page) = s.http("GET", "/nets", None);
    assert_eq!(code, 200);
    for want in [
        "from-page",
        "main",
        "same",
        &sha(&net)[..12],
        &net.len().to_string(),
        "embedded",
    ] {
        assert!(page.contains(want), "{want}: {page}");
    }
    assert_eq!(files(&nets), vec![sha(&net)]);
    // A bad file by the form: the page again with the message, a 400.
    assert_eq!(upload_form(&s, "/nets", None, "junk", b"junk"), 400);
    assert_eq!(names(&s), vec!["from-page", "main", "same"]);

    // A registered engine's net is any file.
    let repo = dir.path().join("ext");
    std::fs::create_dir(&repo).unwrap();
    serve_common::git(&repo, &["init", "-q"]);
    let path = repo.to_string_lossy().into_owned();
    let (code, v) = s.json(
        "POST",
        "/api/engines",
        Some(&json!({"name": "ext", "repo": path})),
    );
    assert_eq!(code, 201, "{v}");
    let (code, v) = upload(&s, "ext-net", "ext", b"whatever ext reads");
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["engine"], "ext");
    assert_eq!(files(&nets).len(), 2);
}

#[test]
fn runs_use_nets_by_name_or_their_engines_default_and_used_nets_stay() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(dir.path());
    let s = Server::start(&d, &dir.path().join("serve.log"));
    let (main, alt) = (default_net(), other_net(3));
    assert_eq!(upload(&s, "main", "embedded", &main).0, 201);
    assert_eq!(upload(&s, "alt", "embedded", &alt).0, 201);
    let alt_file = d.join("nets").join(sha(&alt));
    let submit = |words: &str| {
        let words: Vec<&str> = words.split_whitespace().collect();
        s.json(
            "POST",
            "/api/runs",
            Some(&json!({"kind": "match", "words": words})),
        )
    };

    // net=NAME: the stored file as option.EvalFile, the sha recorded, the run played.
    let (code, run) = submit("--engine name=a net=alt --engine name=b --each nodes=300 --games 2");
    assert_eq!(code, 201, "{run}");
    let eval_file = format!("option.EvalFile={}", alt_file.display());
    assert_eq!(run["words"][2], eval_file.as_str(), "{run}");
    assert_eq!(run["nets"][0]["sha"], sha(&alt));
    assert_eq!(run["nets"][0]["variant"], "a");
    assert_eq!(run["nets"][0]["how"], "named");
    assert_eq!(run["nets"].as_array().unwrap().len(), 1);
    let id = run["id"].as_i64().unwrap();
    let done = s.wait(id, "finished", |v| state(v) == "finished");
    assert_eq!(done["live"]["games"], 2, "{done}");
    let (_, page) = s.http("GET", &format!("/runs/{id}"), None);
    assert!(
        page.contains("<h2>Nets</h2>") && page.contains(&sha(&alt)),
        "{page}"
    );
    // The equivalent command line (the child's words) carries the file.
    assert!(page.contains(&eval_file), "{page}");

    // Refused, nothing stored: an unknown net, net= in --each, net= beside EvalFile.
    let runs_before = s.json("GET", "/api/runs", None).1["runs"]
        .as_array()
        .unwrap()
        .len();
    let (code, v) = submit("--engine name=a net=nope --engine name=b --each nodes=300 --games 2");
    assert_eq!(code, 400, "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("net=nope: no net 'nope'"),
        "{v}"
    );
    let (code, v) = submit("--engine name=a --engine name=b --each net=alt nodes=300");
    assert_eq!(code, 400, "{v}");
    let (code, v) =
        submit("--engine name=a net=alt option.EvalFile=x.nnue --engine name=b --each nodes=300");
    assert_eq!(code, 400, "{v}");
    let runs_after = s.json("GET", "/api/runs", None).1["runs"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(runs_before, runs_after);

    // The embedded engine's default net: a side naming no net (and not choosing hce) gets it.
    let (code, v) = s.json(
        "POST",
        "/api/engines/embedded/net",
        Some(&json!({"net": "main"})),
    );
    assert_eq!(code, 200, "{v}");
    let (code, v) = s.json(
        "POST",
        "/api/engines/nope/net",
        Some(&json!({"net": "main"})),
    );
    assert_eq!(code, 400, "{v}");
    let (code, run) =
        submit("--engine name=a --engine name=b option.Eval=hce --each nodes=300 --games 2");
    assert_eq!(code, 201, "{run}");
    let main_file = format!(
        "option.EvalFile={}",
        d.join("nets").join(sha(&main)).display()
    );
    let words: Vec<&str> = run["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(
        words[..3],
        ["--engine", "name=a", main_file.as_str()],
        "{run}"
    );
    assert_eq!(words.iter().filter(|w| w.contains("EvalFile")).count(), 1);
    assert_eq!(run["nets"][0]["how"], "default");
    assert_eq!(run["nets"][0]["sha"], sha(&main));
    let id2 = run["id"].as_i64().unwrap();
    s.wait(id2, "finished", |v| state(v) == "finished");
    // spar submit sends the words as typed: the same expansion (net=, then the default).
    let o = common::run(&[
        "submit",
        "--server",
        &s.url(),
        "match",
        "--engine",
        "name=a",
        "net=alt",
        "--engine",
        "name=b",
        "--each",
        "nodes=300",
        "--games",
        "2",
    ]);
    let url = common::ok(&o);
    let id3: i64 = url.trim().rsplit('/').next().unwrap().parse().unwrap();
    let run3 = s.wait(id3, "finished", |v| state(v) == "finished");
    let how: Vec<(&str, &str)> = run3["nets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["net"].as_str().unwrap(), n["how"].as_str().unwrap()))
        .collect();
    assert_eq!(how, [("alt", "named"), ("main", "default")], "{run3}");
    let (_, nets) = s.json("GET", "/api/nets", None);
    let main_row = &nets["nets"].as_array().unwrap()[1];
    assert_eq!(main_row["name"], "main");
    assert_eq!(main_row["default_for"], json!(["embedded"]));
    assert_eq!(main_row["runs"], json!([id2, id3]));

    // Never removed once used (a finished run too), nor while a default; an unused one is
    // archived; the page's remove button does the same.
    let (code, v) = s.json("DELETE", "/api/nets/alt", None);
    assert_eq!(code, 409, "{v}");
    let e = v["error"].as_str().unwrap();
    assert!(e.contains(&format!("runs {id}, {id3} used it")), "{v}");
    assert!(alt_file.is_file());
    let (code, v) = s.json("DELETE", "/api/nets/main", None);
    assert_eq!(code, 409, "{v}");
    let spare = other_net(5);
    assert_eq!(upload(&s, "spare", "embedded", &spare).0, 201);
    let (code, v) = s.json("DELETE", "/api/nets/spare", None);
    assert_eq!(code, 200, "{v}");
    assert!(!d.join("nets").join(sha(&spare)).exists());
    assert_eq!(
        common::bytes(&d.join("archive/nets").join(sha(&spare))),
        spare
    );
    assert_eq!(s.json("GET", "/api/nets/spare", None).0, 404);
    assert_eq!(upload(&s, "spare2", "embedded", &main).0, 201);
    assert_eq!(s.form("/nets/spare2/remove", &[]).0, 303);
    assert_eq!(s.form("/nets/alt/remove", &[]).0, 409);
    assert_eq!(names(&s), vec!["alt", "main"]);
    // Still there: the shared file of main.
    assert!(d.join("nets").join(sha(&main)).is_file());
    // Each upload, removal and default change is in the event log.
    let (code, v) = s.json("GET", "/api/events?kind=net", None);
    assert_eq!(code, 200, "{v}");
    let log: Vec<&str> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    for want in [
        "net alt uploaded by anyone",
        "the default net of engine embedded is main",
        "net spare removed by anyone: its file is in",
        "net spare2 removed by anyone: its file stays",
    ] {
        assert!(log.iter().any(|m| m.starts_with(want)), "{want}: {log:?}");
    }
}

#[test]
fn uploads_need_an_account_on_a_server_with_an_admin() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_spar"))
        .args(["serve", "--add-admin", "root", "--data-dir"])
        .arg(&d)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(b"s3cret-pass\n");
    assert!(child.wait().unwrap().success());
    let s = Server::start(&d, &dir.path().join("serve.log"));
    let net = default_net();
    let (code, v) = upload(&s, "main", "embedded", b"x");
    assert_eq!(code, 401, "{v}");
    assert_eq!(upload_form(&s, "/nets", None, "main", b"x"), 303); // to /login
    let (code, v) = s.json(
        "POST",
        "/api/engines/embedded/net",
        Some(&json!({"net": null})),
    );
    assert_eq!(code, 401, "{v}");
    assert!(names(&s).is_empty());
    assert!(files(&d.join("nets")).is_empty());

    // Signed in, the page's form carries the CSRF token in its action, and the net is
    // stored with its uploader.
    let root = login(&s, "root");
    let (action, root_csrf) = csrf(&s, &root);
    assert_eq!(upload_form(&s, "/nets", Some(&root), "main", b"x"), 403);
    assert_eq!(upload_form(&s, &action, Some(&root), "main", &net), 303);
    let (_, v) = s.json("GET", "/api/nets/main", None);
    assert_eq!(v["uploader"], "root", "{v}");

    // A user (not an approver) sets no default and removes only her own nets.
    assert_eq!(
        post(&s, None, "/signup", "name=ann&password=s3cret-pass"),
        200
    );
    let accept = format!("role=user&csrf={root_csrf}");
    assert_eq!(post(&s, Some(&root), "/users/ann/accept", &accept), 303);
    let ann = login(&s, "ann");
    let (ann_action, ann_csrf) = csrf(&s, &ann);
    let set = format!("engine=embedded&net=main&csrf={ann_csrf}");
    assert_eq!(post(&s, Some(&ann), "/nets/default", &set), 403);
    let remove = format!("csrf={ann_csrf}");
    assert_eq!(post(&s, Some(&ann), "/nets/main/remove", &remove), 403);
    assert_eq!(
        upload_form(&s, &ann_action, Some(&ann), "anns", &other_net(2)),
        303
    );
    let (_, v) = s.json("GET", "/api/nets/anns", None);
    assert_eq!(v["uploader"], "ann", "{v}");
    assert_eq!(post(&s, Some(&ann), "/nets/anns/remove", &remove), 303);
    let set = format!("engine=embedded&net=main&csrf={root_csrf}");
    assert_eq!(post(&s, Some(&root), "/nets/default", &set), 303);
    let (_, v) = s.json("GET", "/api/nets", None);
    assert_eq!(v["nets"][0]["default_for"], json!(["embedded"]), "{v}");
    // No run used it, but it is a default: kept.
    let remove = format!("csrf={root_csrf}");
    assert_eq!(post(&s, Some(&root), "/nets/main/remove", &remove), 409);
    assert_eq!(names(&s), vec!["main"]);
}

/// A URL-encoded form posted with a session (or none): the status.
fn post(s: &Server, cookie: Option<&str>, path: &str, body: &str) -> u16 {
    let mut headers = vec!["Content-Type: application/x-www-form-urlencoded".to_string()];
    if let Some(c) = cookie {
        headers.push(format!("Cookie: spar_session={c}"));
    }
    s.request("POST", path, &headers, body).code
}

/// Signs in (the password of every account here): the session token.
fn login(s: &Server, name: &str) -> String {
    let r = s.request(
        "POST",
        "/login",
        &["Content-Type: application/x-www-form-urlencoded".to_string()],
        &format!("name={name}&password=s3cret-pass"),
    );
    assert_eq!(r.code, 303, "{r:?}");
    let cookie = r.header("set-cookie").unwrap();
    cookie
        .strip_prefix("spar_session=")
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_string()
}

/// The nets page of a session: its upload form's action (with the CSRF token) and the
/// CSRF token of its other forms.
fn csrf(s: &Server, cookie: &str) -> (String, String) {
    let page = s
        .request(
            "GET",
            "/nets",
            &[format!("Cookie: spar_session={cookie}")],
            "",
        )
        .body;
    let action = page
        .split("action=\"")
        .find(|a| a.starts_with("/nets?csrf="))
        .and_then(|a| a.split('"').next())
        .unwrap_or_else(|| panic!("no upload form with its CSRF token: {page}"));
    let at = page
        .find("name=\"csrf\" value=\"")
        .unwrap_or_else(|| panic!("no CSRF field: {page}"));
    (action.to_string(), page[at + 19..at + 19 + 64].to_string())
}
