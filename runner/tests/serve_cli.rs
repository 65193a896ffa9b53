//! `spar serve` and `spar submit` as a user runs them: a run submitted to the server
//! plays exactly the games of the same words from the CLI; bad input is refused with a
//! 4xx and stores nothing; stop, resume, priority (a preempted run resumes with the same
//! games), delete (to the archive); downloads confined to the run directory; kill -9 of
//! the server during a run, restart, and the run finishes with the CLI's games.

mod common;
mod serve_common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use serve_common::{read, state, Server};

/// A server on a free port, killed (-9) when dropped.
fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

fn games(v: &Value) -> u64 {
    v["live"]["games"].as_u64().unwrap_or(0)
}

/// `spar submit` of `kind words`: the output.
fn submit(server: &Server, kind: &str, w: &str) -> std::process::Output {
    let mut args = vec![
        "submit".to_string(),
        "--server".into(),
        server.url(),
        kind.into(),
    ];
    args.extend(words(w));
    run(&args)
}

/// The id at the end of a run's URL that `spar submit` printed.
fn submitted(o: &std::process::Output) -> i64 {
    let url = ok(o);
    url.trim().rsplit('/').next().unwrap().parse().unwrap()
}

/// The results rows and PGN games (times left out) of `spar KIND WORDS` from the CLI.
fn cli(kind: &str, w: &str, dir: &Path) -> (Vec<String>, String) {
    let csv = dir.join("cli.csv");
    let pgn = dir.join("cli.pgn");
    let mut args = vec![kind.to_string()];
    args.extend(words(w));
    args.extend(["--results".into(), path_str(&csv).into()]);
    args.extend(["--pgnout".into(), path_str(&pgn).into(), "--quiet".into()]);
    ok(&run(&args));
    (rows_without_time(&csv), pgn_without_time(&pgn))
}

fn served(data: &Path, id: i64) -> (Vec<String>, String) {
    let dir = data.join("runs").join(id.to_string());
    (
        rows_without_time(&dir.join("results.csv")),
        pgn_without_time(&dir.join("games.pgn")),
    )
}

const MATCH: &str = "--engine name=a --engine name=b --each nodes=400 --games 8 --seed 3";

#[test]
fn a_submitted_match_plays_the_clis_games_and_bad_input_stores_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));

    // One server per data directory.
    let second = spar()
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("another spar serve"),
        "{}",
        stderr(&second)
    );

    let o = submit(&server, "match", MATCH);
    let id = submitted(&o);
    assert!(stdout(&o).starts_with(&format!("{}/runs/", server.url())));
    let v = server.wait(id, "finished", |v| state(v) == "finished");
    assert_eq!(games(&v), 8, "{v}");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(served(&data, id), cli("match", MATCH, tmp.path()));

    // Bad input: a 4xx with the message, and nothing stored.
    let bad: &[(&str, &str, &str)] = &[
        (
            "match",
            "--engine name=a --engine name=b --frobnicate",
            "--frobnicate",
        ),
        (
            "match",
            "--engine name=a --engine name=b --results x.csv",
            "--results",
        ),
        ("sprt", "--engine name=a --engine name=b --slurm", "--slurm"),
        (
            "match",
            "--engine name=a --engine name=b --concurrency 4",
            "--concurrency",
        ),
        (
            "match",
            "--engine name=a bogus=1 --engine name=b --each nodes=400",
            "bogus",
        ),
        (
            "sprt",
            "--engine name=a --engine name=b --each nodes=400 --elo0 5 --elo1 0",
            "elo0",
        ),
        ("texel", "--games 2", "unknown kind"),
        ("datagen", "--nodes 500", "--games"),
    ];
    for (kind, w, needle) in bad {
        let body = json!({"kind": kind, "words": words(w)});
        let (code, v) = server.json("POST", "/api/runs", Some(&body));
        assert_eq!(code, 400, "{kind} {w}: {v}");
        let msg = v["error"].as_str().unwrap_or("");
        assert!(msg.contains(needle), "{kind} {w}: {msg}");
        let o = submit(&server, kind, w);
        assert_eq!(o.status.code(), Some(2), "{kind} {w}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
    }
    for body in [
        r#"{"kind": "match"}"#,
        r#"{"kind": "match", "words": [], "bogus": 1}"#,
        "not json",
        r#"{"kind": "match", "words": ["--games", "2"], "throughput": 0}"#,
    ] {
        let (code, _) = server.http("POST", "/api/runs", Some(body));
        assert!((400..500).contains(&code), "{body}: {code}");
    }
    let (_, list) = server.json("GET", "/api/runs", None);
    assert_eq!(list["runs"].as_array().unwrap().len(), 1, "{list}");
    let dirs = std::fs::read_dir(data.join("runs")).unwrap().count();
    assert_eq!(dirs, 1);

    // Downloads: plain names of the run's files only.
    let (code, csv) = server.http("GET", &format!("/runs/{id}/files/results.csv"), None);
    assert_eq!(code, 200);
    assert_eq!(csv, read(&data.join(format!("runs/{id}/results.csv"))));
    for bad in [
        "..%2F..%2Fspar.db",
        "..",
        "%2E%2E",
        "%2Fetc%2Fpasswd",
        "..%5C..%5Cspar.db",
        "results.csv.lock",
        "nothing.csv",
        ".hidden",
    ] {
        let (code, body) = server.http("GET", &format!("/runs/{id}/files/{bad}"), None);
        assert!((400..500).contains(&code), "{bad}: {code} {body}");
    }
    let (code, _) = server.http("GET", &format!("/runs/{id}/files/../../spar.db"), None);
    assert!((400..500).contains(&code), "{code}");

    // Pages.
    let (code, index) = server.http("GET", "/", None);
    assert_eq!(code, 200);
    assert!(index.contains(&format!("href=\"/runs/{id}\"")), "{index}");
    assert!(index.contains("name=a --engine name=b"));
    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200);
    assert!(page.contains("spar match --engine name=a"), "{page}");
    assert!(page.contains("results.csv"));
    assert!(page.contains("W-L-D"));
    assert!(page.contains(&format!("<iframe src=\"/runs/{id}/status.html\"")));
    let (code, status) = server.http("GET", &format!("/runs/{id}/status.html"), None);
    assert_eq!(code, 200);
    assert!(status.contains("<html"), "{status}");
    let (_, found) = server.http(
        "GET",
        "/search?kind=match&state=finished&q=nodes%3D400",
        None,
    );
    assert!(found.contains(&format!("id=\"run-{id}\"")), "{found}");
    let (_, none) = server.http("GET", "/search?kind=sprt", None);
    assert!(!none.contains(&format!("id=\"run-{id}\"")));
    let (_, none) = server.http("GET", "/search?q=nodes%3D999", None);
    assert!(none.contains("No run matches"));
}

#[test]
fn the_new_run_form_refuses_bad_words_in_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let body = "kind=match&words=--engine+name%3Da+--engine+name%3Db+--pgnout+%3Cx%3E.pgn&note=";
    let r = server.form_body("/runs", body);
    assert_eq!(r.code, 400, "{r:?}");
    assert!(r.body.contains("--pgnout is the server"), "{r:?}");
    // The words come back in the form, escaped.
    assert!(r.body.contains("&lt;x&gt;.pgn"), "{r:?}");
    let (_, list) = server.json("GET", "/api/runs", None);
    assert!(list["runs"].as_array().unwrap().is_empty());
    // A good form stores the run and sends the browser to its page.
    let body = "kind=match&words=--engine+name%3Da+--engine+name%3Db%0D%0A--each+nodes%3D300+\
                --games+2&priority=&throughput=&note=from+the+form";
    let r = server.form_body("/runs", body);
    assert_eq!(r.code, 303, "{r:?}");
    assert_eq!(r.header("location").as_deref(), Some("/runs/1"), "{r:?}");
    let v = server.wait(1, "finished", |v| state(v) == "finished");
    assert_eq!(v["note"], "from the form");
    assert_eq!(
        v["words"],
        json!(words(
            "--engine name=a --engine name=b --each nodes=300 --games 2"
        ))
    );
}

#[test]
fn stop_resume_priority_and_delete() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let long = "--engine name=a --engine name=b --each nodes=400 --games 60 --seed 5";
    let a = submitted(&submit(&server, "match", long));
    server.wait(a, "games", |v| state(v) == "running" && games(v) >= 4);

    // A run of a higher priority takes every core: the first waits, queued.
    let o = run(&[
        "submit",
        "--server",
        &server.url(),
        "--priority",
        "1",
        "match",
        "--engine",
        "name=a",
        "--engine",
        "name=b",
        "--each",
        "nodes=400",
        "--games",
        "400",
    ]);
    let b = submitted(&o);
    server.wait(a, "preempted", |v| state(v) == "queued");
    let v = server.wait(b, "running", |v| state(v) == "running" && v["cores"] == 2);
    assert_eq!(v["priority"], 1);

    // Stopped: the first goes on, resumed from its files.
    let (code, v) = server.json("POST", &format!("/api/runs/{b}/stop"), None);
    assert_eq!(code, 200, "{v}");
    assert_eq!(state(&v), "stopped");
    let (code, _) = server.json("POST", &format!("/api/runs/{b}/stop"), None);
    assert_eq!(code, 409);
    server.wait(b, "its child gone", |v| v["cores"].is_null());
    server.wait(a, "finished", |v| state(v) == "finished");
    assert_eq!(served(&data, a), cli("match", long, tmp.path()));
    assert_eq!(state(&server.run(b)), "stopped");

    // Note and priority.
    let (code, v) = server.json(
        "POST",
        &format!("/api/runs/{b}/note"),
        Some(&json!({"note": "<i>rfp</i>"})),
    );
    assert_eq!(code, 200);
    assert_eq!(v["note"], "<i>rfp</i>");
    let (_, page) = server.http("GET", &format!("/runs/{b}"), None);
    assert!(page.contains("&lt;i&gt;rfp&lt;/i&gt;") && !page.contains("<i>rfp"));
    let (code, v) = server.json(
        "POST",
        &format!("/api/runs/{b}/priority"),
        Some(&json!({"priority": 0, "throughput": 50})),
    );
    assert_eq!(code, 200);
    assert_eq!(
        (v["priority"].as_i64(), v["throughput"].as_i64()),
        (Some(0), Some(50))
    );
    let (code, _) = server.json(
        "POST",
        &format!("/api/runs/{b}/priority"),
        Some(&json!({"priority": 0, "throughput": 0})),
    );
    assert_eq!(code, 400);

    // Resumed, then deleted while it plays: its files move to the archive.
    let before = games(&server.run(b));
    let (code, _) = server.json("POST", &format!("/api/runs/{b}/resume"), None);
    assert_eq!(code, 200);
    server.wait(b, "more games", |v| {
        state(v) == "running" && games(v) > before + 2
    });
    let (code, v) = server.json("DELETE", &format!("/api/runs/{b}"), None);
    assert_eq!(code, 200, "{v}");
    let archived = PathBuf::from(v["archived"].as_str().unwrap());
    assert_eq!(
        archived,
        data.canonicalize().unwrap().join(format!("archive/{b}"))
    );
    assert!(archived.join("results.csv").is_file());
    assert!(!data.join(format!("runs/{b}")).exists());
    let (code, _) = server.json("GET", &format!("/api/runs/{b}"), None);
    assert_eq!(code, 404);
    let (_, list) = server.json("GET", "/api/runs", None);
    assert_eq!(list["runs"].as_array().unwrap().len(), 1);
    let (_, list) = server.json("GET", "/api/runs?state=finished&kind=match", None);
    assert_eq!(list["runs"][0]["id"], a);
}

#[test]
fn kill_9_of_the_server_during_a_run_then_a_restart_finishes_it_as_the_cli_would() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let log = tmp.path().join("serve.log");
    let w = "--engine name=a --engine name=b --each nodes=400 --games 60 --seed 7";
    let mut server = Server::start(&data, &log);
    let id = submitted(&submit(&server, "match", w));
    server.wait(id, "games", |v| state(v) == "running" && games(v) >= 4);
    server.kill9();
    // The child died with the server: its output's lock is free at once (or very soon).
    let lock = data.join(format!("runs/{id}/results.csv.lock"));
    let start = Instant::now();
    while lock.exists() && is_locked(&lock) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!is_locked(&lock), "the child outlived the server");
    // A directory without its row is reported, never deleted.
    std::fs::create_dir_all(data.join("runs/999")).unwrap();
    std::fs::write(data.join("runs/999/keep.txt"), "x").unwrap();
    let server = Server::start(&data, &log);
    let v = server.wait(id, "finished", |v| state(v) == "finished");
    assert_eq!(games(&v), 60);
    assert_eq!(served(&data, id), cli("match", w, tmp.path()));
    assert!(
        read(&log).contains("resumes from its files"),
        "{}",
        read(&log)
    );
    assert!(
        read(&log).contains("runs/999 has no run in the database"),
        "{}",
        read(&log)
    );
    assert!(data.join("runs/999/keep.txt").is_file());
    drop(server);
}

/// Whether some process holds a lock on `lock` (a shared lock cannot be taken).
fn is_locked(lock: &Path) -> bool {
    match std::fs::File::open(lock) {
        Ok(f) => matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock)),
        Err(_) => false,
    }
}

#[test]
fn sprt_tune_and_datagen_runs_write_the_clis_files() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let sprt = "--engine name=base option.Eval=hce --engine name=weak option.Eval=hce \
                option.material_mg_knight=150 option.material_eg_knight=150 \
                option.material_mg_bishop=150 option.material_eg_bishop=150 \
                --each nodes=300 --elo0 0 --elo1 100 --seed 1";
    let tune = "--param rfp_margin --each nodes=300 --iterations 3 --pairs-per-iteration 2 \
                --no-verify --seed 4";
    let datagen = "--games 4 --nodes 500 --seed 2";
    let mut ids = Vec::new();
    for (kind, w) in [("sprt", sprt), ("tune", tune), ("datagen", datagen)] {
        let body = json!({"kind": kind, "words": words(w), "note": kind});
        let (code, v) = server.json("POST", "/api/runs", Some(&body));
        assert_eq!(code, 201, "{v}");
        ids.push(v["id"].as_i64().unwrap());
    }
    let done: Vec<Value> = ids
        .iter()
        .map(|&id| server.wait(id, "finished", |v| state(v) == "finished"))
        .collect();

    // The SPRT: its verdict, its games, and a green row.
    assert_eq!(done[0]["live"]["verdict"], "H1", "{}", done[0]);
    assert!(done[0]["live"]["llr"].as_f64().unwrap() >= done[0]["live"]["upper"].as_f64().unwrap());
    assert_eq!(served(&data, ids[0]), cli("sprt", sprt, tmp.path()));
    let (_, index) = server.http("GET", "/", None);
    assert!(
        index.contains(&format!("id=\"run-{}\" class=\"H1\"", ids[0])),
        "{index}"
    );

    // The tune: the same trajectory and final values.
    assert_eq!(done[1]["live"]["iteration"], 3, "{}", done[1]);
    let (csv, out) = (tmp.path().join("t.csv"), tmp.path().join("t.txt"));
    let mut args = vec!["tune".to_string()];
    args.extend(words(tune));
    args.extend([
        "--csv".into(),
        path_str(&csv).into(),
        "--out".into(),
        path_str(&out).into(),
    ]);
    ok(&run(&args));
    let dir = data.join("runs").join(ids[1].to_string());
    assert_eq!(read(&dir.join("tune.csv")), read(&csv));
    assert_eq!(read(&dir.join("tuned.txt")), read(&out));
    let (code, page) = server.http("GET", &format!("/runs/{}/status.html", ids[1]), None);
    assert_eq!(code, 200, "{page}");

    // Datagen: the same positions.
    assert_eq!(done[2]["live"]["games"], 4, "{}", done[2]);
    let vf = tmp.path().join("p.vf");
    let mut args = vec!["datagen".to_string()];
    args.extend(words(datagen));
    args.extend(["--out".into(), path_str(&vf).into()]);
    ok(&run(&args));
    let dir = data.join("runs").join(ids[2].to_string());
    assert_eq!(bytes(&dir.join("positions")), bytes(&vf));
}

#[test]
fn a_failed_run_shows_the_last_lines_of_its_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    // An engine that answers the UCI handshake (the check passes) and dies on `go`.
    let engine = tmp.path().join("crashy.sh");
    std::fs::write(
        &engine,
        "#!/bin/sh\nwhile read line; do case \"$line\" in\n\
         uci) echo 'id name crashy'; echo uciok;;\n isready) echo readyok;;\n\
         go*) echo 'crashy: <out of cheese>' >&2; exit 3;;\n quit) exit 0;;\n esac; done\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&engine).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&engine, perms).unwrap();
    let w = format!(
        "--engine name=crashy cmd={} --engine name=b --each nodes=300 --games 2",
        path_str(&engine)
    );
    let body = json!({"kind": "match", "words": words(&w)});
    let (code, v) = server.json("POST", "/api/runs", Some(&body));
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    let v = server.wait(id, "failed", |v| state(v) == "failed");
    let code = v["exit_code"].as_i64().unwrap();
    assert_ne!(code, 0, "{v}");
    let tail = v["stderr_tail"].as_str().unwrap();
    assert!(tail.contains("crashy"), "{tail}");
    // The page: the exit code, the last stderr lines (escaped), the command to replay it.
    let (_, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert!(page.contains("<h2>Failure</h2>"), "{page}");
    assert!(
        page.contains(&format!("<span id=\"exit-code\">{code}</span>")),
        "{page}"
    );
    let stderr = page.split("<pre id=\"stderr\">").nth(1).unwrap_or_default();
    assert!(stderr.contains("engine &#39;crashy&#39; crashed"), "{page}");
    let replay = page
        .split("<pre id=\"replay\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("no replay command: {page}"));
    assert!(replay.starts_with("cd "), "{replay}");
    assert!(
        replay.contains(&format!(
            "spar match --engine name=crashy cmd={}",
            path_str(&engine)
        )),
        "{replay}"
    );
    assert!(replay.contains("--results "), "{replay}");
    // The event log has the failure, with the exit code and the last stderr line.
    let (_, ev) = server.json("GET", &format!("/api/events?run={id}&kind=failure"), None);
    let ev = ev["events"].as_array().unwrap();
    assert_eq!(ev.len(), 1, "{ev:?}");
    let message = ev[0]["message"].as_str().unwrap();
    assert!(message.contains(&format!("exit {code}")), "{message}");
    assert!(message.contains("crashy"), "{message}");
    // The run resumes on request (and fails again: the engine still crashes).
    let (code, _) = server.json("POST", &format!("/api/runs/{id}/resume"), None);
    assert_eq!(code, 200);
}

#[test]
fn ctrl_c_stops_the_server_and_its_runs_which_resume_at_the_next_start() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let log = tmp.path().join("serve.log");
    let w = "--engine name=a --engine name=b --each nodes=400 --games 60 --seed 9";
    let mut server = Server::start(&data, &log);
    let id = submitted(&submit(&server, "match", w));
    server.wait(id, "games", |v| state(v) == "running" && games(v) >= 2);
    let pid = nix::unistd::Pid::from_raw(server.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the server did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "{}", read(&log));
    assert!(read(&log).contains("spar serve: stopped"), "{}", read(&log));
    let lock = data.join(format!("runs/{id}/results.csv.lock"));
    assert!(!is_locked(&lock), "the child outlived the server");
    let server = Server::start(&data, &log);
    server.wait(id, "finished", |v| state(v) == "finished");
    assert_eq!(served(&data, id), cli("match", w, tmp.path()));
}

#[test]
fn a_damaged_or_newer_database_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let serve = |data: &Path| {
        spar()
            .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
            .arg(data)
            .output()
            .unwrap()
    };
    let damaged = tmp.path().join("damaged");
    std::fs::create_dir_all(&damaged).unwrap();
    std::fs::write(damaged.join("spar.db"), vec![b'x'; 4096]).unwrap();
    let o = serve(&damaged);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not a readable spar serve database"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(damaged.join("spar.db")).unwrap(),
        vec![b'x'; 4096]
    );

    let newer = tmp.path().join("newer");
    std::fs::create_dir_all(&newer).unwrap();
    let conn = rusqlite::Connection::open(newer.join("spar.db")).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let o = serve(&newer);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("schema version 99"), "{}", stderr(&o));
}
