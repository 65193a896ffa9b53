//! `spar serve`'s live pages: a run's live stream (`GET /api/runs/{id}/events`, Server-Sent
//! Events) read with a raw socket — at least two events of a running node-limited match,
//! the last one its finished state, then the end of the stream; an unknown run's stream is
//! a 404 — and the datagen run page (positions, games, positions/s, its files).

mod serve_common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};
use serve_common::*;

fn words(w: &str) -> Vec<&str> {
    w.split_whitespace().collect()
}

/// Opens run `id`'s live stream: the status line, the headers, and every event's data
/// until the server ends the stream.
fn stream(server: &Server, id: i64) -> (String, String, Vec<Value>) {
    stream_until(server, &format!("/api/runs/{id}/events"), |_| false)
}

/// Opens the stream at `path`: the status line, the headers, and every event's data until
/// the server ends the stream or an event satisfies `until`.
fn stream_until(
    server: &Server,
    path: &str,
    until: impl Fn(&Value) -> bool,
) -> (String, String, Vec<Value>) {
    let mut s = TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(180))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\
         Connection: close\r\n\r\n",
        server.addr
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut status = String::new();
    r.read_line(&mut status).unwrap();
    let mut head = String::new();
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
        head.push_str(&line);
    }
    let mut events = Vec::new();
    let start = std::time::Instant::now();
    for line in r.lines() {
        let line = line.unwrap();
        // Keep-alives come every 15 s: a stream that never satisfies `until` ends the test.
        assert!(
            start.elapsed() < Duration::from_secs(240),
            "{path}: waited too long; events so far: {events:?}"
        );
        if let Some(data) = line.strip_prefix("data: ") {
            let v: Value = serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {data}"));
            let done = until(&v);
            events.push(v);
            if done {
                break;
            }
        }
    }
    (status, head, events)
}

#[test]
fn a_runs_stream_sends_its_changes_until_it_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let w = "--engine name=a --engine name=b --each nodes=400 --games 120 --seed 11";
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words(w)})),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();

    let (status, head, events) = stream(&server, id);
    assert!(status.contains(" 200 "), "{status}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{head}"
    );
    assert!(events.len() >= 2, "{events:?}");
    for e in &events {
        assert_eq!(e["id"], id, "{e}");
        assert!(e["live"].is_object(), "{e}");
    }
    let last = events.last().unwrap();
    assert_eq!(state(last), "finished", "{last}");
    assert_eq!(last["live"]["games"], 120, "{last}");
    // The API's answer for one run adds `machines` (judged on request, not streamed).
    let mut api = server.run(id);
    api.as_object_mut().unwrap().remove("machines");
    assert_eq!(
        last, &api,
        "the last event is the run as the API answers it"
    );
    // The games only grow, and consecutive events differ (only changes are sent).
    let games: Vec<u64> = events
        .iter()
        .map(|e| e["live"]["games"].as_u64().unwrap_or(0))
        .collect();
    assert!(games.windows(2).all(|g| g[0] <= g[1]), "{games:?}");
    // One read of the files per event (issue 56, point 9): the numbers and the status
    // lines are of the same moment.
    for (e, g) in events.iter().zip(&games) {
        let lines: Vec<&str> = e["live"]["lines"]
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if *g > 0 {
            let at = format!("Games: {g} of 120,");
            assert!(
                lines.iter().any(|l| l.starts_with(&at)),
                "{g} games in the numbers, other games in the lines: {lines:?}"
            );
        }
    }
    assert!(events.windows(2).all(|e| e[0] != e[1]), "{events:?}");

    // A finished run's stream: its state once, then the end.
    let (_, _, again) = stream(&server, id);
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(state(&again[0]), "finished");

    // The run page watches the stream (and falls back to polling).
    let (_, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert!(
        page.contains("EventSource") && page.contains("/events"),
        "{page}"
    );

    // An unknown run has no stream.
    let (code, body) = server.http("GET", "/api/runs/9999/events", None);
    assert_eq!(code, 404, "{body}");
    assert!(body.contains("no run 9999"), "{body}");
}

#[test]
fn the_index_stream_sends_the_running_runs_numbers_and_their_end() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    // Long enough (about 10 s on 2 idle cores) that the one-second looks see it mid-way,
    // even on a loaded machine.
    let w = "--engine name=a --engine name=b --each nodes=800 --games 300 --seed 12";
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words(w)})),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    // A second run, stopped at once: it leaves the queue, and the stream says so.
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words(&w.replace("300", "2000")), "priority": -1})),
    );
    assert_eq!(code, 201, "{v}");
    let other = v["id"].as_i64().unwrap();
    // A run's index row, for the live script to add a run the page has no row of.
    let (code, row) = server.http("GET", &format!("/runs/{other}/row"), None);
    assert_eq!(code, 200, "{row}");
    assert!(
        row.starts_with(&format!("<tr id=\"run-{other}\""))
            && row.contains(&format!("href=\"/runs/{other}\""))
            && row.trim_end().ends_with("</tr>"),
        "{row}"
    );
    assert_eq!(server.http("GET", "/runs/999/row", None).0, 404);

    let (status, head, events) = stream_until(&server, "/api/events/runs", |e| {
        e["id"] == id && state(e) == "finished"
    });
    assert!(status.contains(" 200 "), "{status}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{head}"
    );
    let ours: Vec<&Value> = events.iter().filter(|e| e["id"] == id).collect();
    assert!(ours.len() >= 2, "{events:?}");
    let games: Vec<u64> = ours
        .iter()
        .map(|e| e["live"]["games"].as_u64().unwrap_or(0))
        .collect();
    assert!(games.windows(2).all(|g| g[0] <= g[1]), "{games:?}");
    assert!(
        ours.iter().any(|e| state(e) == "running"
            && (1..300).contains(&e["live"]["games"].as_u64().unwrap_or(0))),
        "a running event with games in between: {games:?}"
    );
    let last = ours.last().unwrap();
    assert_eq!(last["live"]["games"], 300, "{last}");
    let mut api = server.run(id);
    api.as_object_mut().unwrap().remove("machines");
    assert_eq!(
        *last, &api,
        "the last event is the run as the API answers it"
    );
    // Only changes are sent.
    assert!(ours.windows(2).all(|e| e[0] != e[1]), "{ours:?}");
    // The lower-priority run waited, queued; it then played and finished or still plays.
    assert!(events.iter().any(|e| e["id"] == other), "{events:?}");

    // A stopped run's end is sent to a stream that saw it play.
    let events = std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            stream_until(&server, "/api/events/runs", |e| {
                e["id"] == other && state(e) == "stopped"
            })
        });
        std::thread::sleep(Duration::from_millis(2500));
        let (code, v) = server.json("POST", &format!("/api/runs/{other}/stop"), None);
        assert_eq!(code, 200, "{v}");
        watcher.join().unwrap().2
    });
    let theirs: Vec<&Value> = events.iter().filter(|e| e["id"] == other).collect();
    assert!(
        matches!(state(theirs[0]), "running" | "queued"),
        "{theirs:?}"
    );
    assert_eq!(state(theirs.last().unwrap()), "stopped", "{theirs:?}");

    // The index watches the stream, falls back to polling, and reads without it: the rows
    // have the numbers.
    let (_, page) = server.http("GET", "/", None);
    assert!(page.contains("/api/events/runs"), "{page}");
    assert!(page.contains("setInterval(poll"), "{page}");
    let row = page
        .split(&format!("<tr id=\"run-{id}\""))
        .nth(1)
        .unwrap()
        .split("</tr>")
        .next()
        .unwrap();
    assert!(row.contains("<td data-f=\"games\">300</td>"), "{row}");
}

#[test]
fn a_datagen_runs_page_shows_its_positions_rate_and_files() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let w = "--games 6 --nodes 500 --seed 2 --format both";
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "datagen", "words": words(w)})),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    let done = server.wait(id, "finished", |v| state(v) == "finished");
    let live = &done["live"];
    assert_eq!(live["games"], 6, "{done}");
    let positions = live["positions"].as_u64().unwrap();
    assert!(positions > 6, "{done}");
    // The text file holds one line per kept position of the same games.
    let dir = data.join("runs").join(id.to_string());
    let text = read(&dir.join("positions.txt"));
    assert!(text.lines().count() as u64 <= positions, "{positions}");

    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200, "{page}");
    assert!(
        page.contains(&format!("<td data-f=\"positions\">{positions}</td>")),
        "{page}"
    );
    assert!(page.contains("<th>positions/s</th>"), "{page}");
    assert!(page.contains("<h2>Training files</h2>"), "{page}");
    assert!(!page.contains("<th>LLR (bounds)</th>"), "{page}");
    for name in ["positions", "positions.txt", "positions.txt.idx"] {
        let link = format!("<a href=\"/runs/{id}/files/{name}\">{name}</a>");
        assert!(page.contains(&link), "{link}: {page}");
    }
    let (code, body) = server.http("GET", &format!("/runs/{id}/files/positions.txt"), None);
    assert_eq!(code, 200);
    assert_eq!(body, text);
}

#[test]
fn an_open_stream_does_not_hold_up_ctrl_c() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut server = Server::start(&data, &tmp.path().join("serve.log"));
    let w = "--engine name=a --engine name=b --each nodes=400 --games 4000 --seed 12";
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words(w)})),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    server.wait(id, "running", |v| state(v) == "running");
    let addr = server.addr.clone();
    let reader = std::thread::spawn(move || {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        write!(
            s,
            "GET /api/runs/{id}/events HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        BufReader::new(s)
            .lines()
            .map_while(Result::ok)
            .filter(|l| l.starts_with("data: "))
            .count()
    });
    std::thread::sleep(Duration::from_secs(2));
    let pid = server.child.id().to_string();
    let ok = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(ok.success());
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the server did not stop with a stream open: {}",
            read(&server.log)
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status:?}: {}", read(&server.log));
    assert!(
        reader.join().unwrap() >= 1,
        "the stream sent its first event"
    );
}

/// Opens run `id`'s stream and reads its status line (the stream stays open).
fn open(server: &Server, id: i64) -> (TcpStream, String) {
    let s = TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut w = s.try_clone().unwrap();
    write!(
        w,
        "GET /api/runs/{id}/events HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.addr
    )
    .unwrap();
    let mut status = String::new();
    BufReader::new(s.try_clone().unwrap())
        .read_line(&mut status)
        .unwrap();
    (s, status)
}

#[test]
fn at_most_256_streams_are_open_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // All the streams come from one address: let it hold more than the server-wide bound.
    let here = std::env::current_dir().unwrap();
    let server = Server::start_with(
        &data,
        &tmp.path().join("serve.log"),
        &["--connections-per-address", "400"],
        None,
        &here,
    );
    // A run of a higher priority holds the cores: the second waits, queued (its streams
    // stay open and cost little).
    let long = "--engine name=a --engine name=b --each nodes=400 --games 4000 --seed 13";
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words(long), "priority": 1})),
    );
    assert_eq!(code, 201, "{v}");
    let short = "--engine name=a --engine name=b --each nodes=400 --games 2 --seed 14";
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words(short)})),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    assert_eq!(state(&server.run(id)), "queued");

    let mut open_now: Vec<TcpStream> = (0..256)
        .map(|i| {
            let (s, status) = open(&server, id);
            assert!(status.contains(" 200 "), "stream {i}: {status}");
            s
        })
        .collect();
    let (_, status) = open(&server, id);
    assert!(status.contains(" 503 "), "the 257th: {status}");
    let (code, body) = server.http("GET", &format!("/api/runs/{id}/events"), None);
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("too many live streams"), "{body}");
    // The API still answers, and a closed stream frees its place.
    assert_eq!(state(&server.run(id)), "queued");
    drop(open_now.pop());
    let start = std::time::Instant::now();
    loop {
        let (s, status) = open(&server, id);
        if status.contains(" 200 ") {
            open_now.push(s);
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "a closed stream kept its place: {status}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
