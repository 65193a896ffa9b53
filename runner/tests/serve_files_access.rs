//! What a run submitted to `spar serve` may read (issue 53, item 2), as an account holder
//! meets it over HTTP: words that name the server's environment (`/proc/self/environ`), its
//! accounts (`/etc/passwd`) or a secret file outside the allowed directories — by `--book`,
//! `cmd=` or `params=`, directly or by a link — are refused, and neither the API's answer
//! nor the form's page holds a byte of them; a bad book inside an allowed directory is
//! refused with its file and line, never the line's text; `--allow-files DIR` admits DIR.

mod serve_common;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;
use serve_common::accounts::{accepted, add_admin, api, Session, PASSWORD};
use serve_common::Server;

/// A line no file or page holds by chance.
fn secret() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("SECRET-{}-{nanos}", std::process::id())
}

/// A test's directories: `srv` (where the server starts: allowed by default), `data` (its
/// data directory), `outside` (allowed by nothing), and the server's environment secret.
struct Site {
    _tmp: tempfile::TempDir,
    srv: PathBuf,
    data: PathBuf,
    outside: PathBuf,
    env_secret: String,
}

fn site() -> Site {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let (srv, data, outside) = (root.join("srv"), root.join("data"), root.join("outside"));
    std::fs::create_dir_all(&srv).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let o = add_admin(&data, "boss", &format!("{PASSWORD}\n"));
    assert!(o.status.success(), "{o:?}");
    Site {
        _tmp: tmp,
        srv,
        data,
        outside,
        env_secret: secret(),
    }
}

/// The site's server, with `extra` flags, its environment holding the site's secret.
fn serve(site: &Site, extra: &[&str]) -> Server {
    let log = site.srv.join("serve.log");
    let env = [("SPAR_FILES_TEST_SECRET", site.env_secret.as_str())];
    Server::start_env(&site.data, &log, extra, &env, &site.srv)
}

/// The admin `boss` signed in, and the plain user `alice` (accepted by him) signed in.
fn sessions(s: &Server) -> (Session, Session) {
    let admin = Session::new(s, "boss");
    accepted(s, &admin, "alice", "user");
    let alice = Session::new(s, "alice");
    (admin, alice)
}

/// A value URL-encoded as a browser encodes a form field.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A match's words with `extra` (the file words) added.
fn words(extra: &str) -> Vec<String> {
    format!("--engine name=a --engine name=b --each nodes=300 --games 2 {extra}")
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Submits `extra` by the API (with `token`) and by the form (of `who`): both answers, as
/// (status, whole body).
fn submit_both(s: &Server, token: &str, who: &Session, extra: &str) -> [(u16, String); 2] {
    let w = words(extra);
    let body = json!({"kind": "match", "words": w}).to_string();
    let (code, v) = api(s, "POST", "/api/runs", token, &body);
    let r = who.post(
        s,
        "/runs",
        &format!("kind=match&words={}", enc(&w.join(" "))),
    );
    [(code, v.to_string()), (r.code, r.body)]
}

/// The first line of /etc/passwd (what a leak of it would show).
fn passwd_line() -> String {
    std::fs::read_to_string("/etc/passwd")
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or("root:x:0:0")
        .to_string()
}

#[test]
fn files_outside_the_allowed_directories_are_refused_and_never_shown() {
    let site = site();
    let file_secret = secret();
    let secret_book = site.outside.join("secret.epd");
    std::fs::write(&secret_book, format!("{file_secret} w - -\n")).unwrap();
    let s = serve(&site, &[]);
    let (_admin, alice) = sessions(&s);
    let token = alice.token(&s);
    let passwd = passwd_line();
    let outside = secret_book.display().to_string();
    for (file, why) in [
        ("/proc/self/environ", "never reads"),
        ("/etc/passwd", "never reads"),
        (outside.as_str(), "outside the directories"),
    ] {
        for extra in [
            format!("--book {file}"),
            format!("--book={file} order=sequential"),
            format!("--engine name=c cmd={file}"),
            format!("--engine name=c params={file}"),
        ] {
            // Not a match of three engines: the refusal comes before any such check.
            for (code, body) in submit_both(&s, &token, &alice, &extra) {
                assert_eq!(code, 403, "{extra}: {body}");
                assert!(body.contains(why), "{extra}: {body}");
                for leak in [
                    site.env_secret.as_str(),
                    file_secret.as_str(),
                    passwd.as_str(),
                    "root:x:",
                ] {
                    assert!(!body.contains(leak), "{extra}: {leak} in {body}");
                }
            }
        }
    }
    // Nothing was stored.
    let (code, v) = api(&s, "GET", "/api/runs", &token, "");
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["runs"].as_array().map(Vec::len), Some(0), "{v}");
}

#[test]
fn a_link_inside_an_allowed_directory_is_judged_by_where_it_leads() {
    let site = site();
    std::os::unix::fs::symlink("/etc/passwd", site.srv.join("passwd.epd")).unwrap();
    let file_secret = secret();
    std::fs::write(site.outside.join("s.epd"), format!("{file_secret} w - -\n")).unwrap();
    std::os::unix::fs::symlink(site.outside.join("s.epd"), site.srv.join("s.epd")).unwrap();
    let s = serve(&site, &[]);
    let (_admin, alice) = sessions(&s);
    let token = alice.token(&s);
    let passwd = passwd_line();
    for extra in [
        "--book passwd.epd",
        "--book s.epd",
        "--engine name=c params=passwd.epd",
    ] {
        for (code, body) in submit_both(&s, &token, &alice, extra) {
            assert_eq!(code, 403, "{extra}: {body}");
            for leak in [passwd.as_str(), "root:x:", file_secret.as_str()] {
                assert!(!body.contains(leak), "{extra}: {leak} in {body}");
            }
        }
    }
}

/// Writes a book whose second line is a secret, not a position.
fn bad_book(path: &Path) -> String {
    let line = secret();
    std::fs::write(
        path,
        format!("4k3/8/8/8/8/8/8/4K3 w - - 0 1\n{line}/8 w - - 0 1\n"),
    )
    .unwrap();
    line
}

#[test]
fn a_bad_book_inside_is_named_by_file_and_line_never_by_its_text() {
    let site = site();
    let line = bad_book(&site.srv.join("bad.epd"));
    let params_line = secret();
    std::fs::write(site.srv.join("p.txt"), format!("{params_line}, 5\n")).unwrap();
    let s = serve(&site, &[]);
    let (_admin, alice) = sessions(&s);
    let token = alice.token(&s);
    for (extra, at) in [
        ("--book bad.epd", "bad.epd:2: bad FEN placement: expected"),
        ("--each params=p.txt", "p.txt:1: unknown parameter"),
    ] {
        for (code, body) in submit_both(&s, &token, &alice, extra) {
            assert_eq!(code, 400, "{extra}: {body}");
            assert!(body.contains(at), "{extra}: {body}");
            assert!(
                !body.contains(&line) && !body.contains(&params_line),
                "{body}"
            );
            assert!(!body.contains("SECRET"), "{extra}: {body}");
        }
    }
    // The command line, for the person who owns the file, still quotes it.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_spar"))
        .current_dir(&site.srv)
        .arg("match")
        .args(words("--book bad.epd"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&line), "the CLI quotes the line: {err}");
}

#[test]
fn allow_files_admits_its_directory_and_only_it() {
    let site = site();
    let good = site.outside.join("good.epd");
    std::fs::write(&good, "4k3/8/8/8/8/8/8/4K2R w K - 0 1\n").unwrap();
    std::fs::write(
        site.srv.join("here.epd"),
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1\n",
    )
    .unwrap();
    let book = format!("--book {}", good.display());
    // By default: the server's directory, not `outside`.
    {
        let s = serve(&site, &[]);
        let (_admin, alice) = sessions(&s);
        let token = alice.token(&s);
        let [(code, body), _] = submit_both(&s, &token, &alice, &book);
        assert_eq!(code, 403, "{body}");
        let [(code, body), (form, page)] = submit_both(&s, &token, &alice, "--book here.epd");
        assert_eq!((code, form), (201, 303), "{body} {page}");
    }
    let outside = site.outside.display().to_string();
    let s = serve(&site, &["--allow-files", &outside]);
    let alice = Session::new(&s, "alice");
    let token = alice.token(&s);
    let [(code, body), (form, page)] = submit_both(&s, &token, &alice, &book);
    assert_eq!((code, form), (201, 303), "{body} {page}");
    // The defaults are replaced: the server's own directory is no longer read.
    let [(code, body), _] = submit_both(&s, &token, &alice, "--book here.epd");
    assert_eq!(code, 403, "{body}");
    assert!(
        body.contains(&outside),
        "the allowed directory is named: {body}"
    );
    // A directory that does not exist is refused at start.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_spar"))
        .args(["serve", "--bind", "127.0.0.1:0", "--allow-files"])
        .arg(site.outside.join("no-such-dir"))
        .arg("--data-dir")
        .arg(&site.data)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--allow-files"), "{err}");
}

#[test]
fn a_server_without_accounts_refuses_system_files_but_reads_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let (srv, outside) = (root.join("srv"), root.join("outside"));
    std::fs::create_dir_all(&srv).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let good = outside.join("good.epd");
    std::fs::write(&good, "4k3/8/8/8/8/8/8/4K2R w K - 0 1\n").unwrap();
    let line = bad_book(&outside.join("bad.epd"));
    let s = Server::start_with(&root.join("data"), &root.join("serve.log"), &[], None, &srv);
    let submit = |extra: &str| {
        let v = json!({"kind": "match", "words": words(extra)});
        let (code, body) = s.http("POST", "/api/runs", Some(&v.to_string()));
        (code, body)
    };
    let (code, body) = submit(&format!("--book {}", good.display()));
    assert_eq!(code, 201, "{body}");
    let (code, body) = submit("--book /etc/passwd");
    assert_eq!(code, 403, "{body}");
    assert!(!body.contains("root:x:"), "{body}");
    let (code, body) = submit(&format!("--book {}", outside.join("bad.epd").display()));
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("bad.epd:2:") && !body.contains(&line),
        "{body}"
    );
}
