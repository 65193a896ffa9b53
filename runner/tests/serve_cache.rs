//! `spar serve`'s run cache: a run's numbers as the index, the API, the run page and the
//! streams show them equal `spar status`'s of the same file — after rows are appended,
//! while a row is half written, after the file was cut back (what `--resume` does to a
//! half-written or extra row) or rewritten, and after the server restarted. A run whose
//! results file the test writes stays queued behind a higher-priority run that plays, so
//! that its file is the test's alone (the server treats it as one of its runs: the
//! refresher follows it). An SPRT's lines, a tune's iterations and games and a datagen's
//! games and positions are those `spar status` and `spar datagen --inspect` show of the
//! same files.

mod serve_common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use serve_common::*;

const HEAD: &str = "pair,game,opening,seed,white,black,result,termination,plies,white_nodes,black_nodes,duration_ms\n";

/// Pair `k`'s two rows (its results vary with `k`).
fn pair(k: u64) -> String {
    let results = ["1-0", "0-1", "1/2-1/2", "1-0", "1/2-1/2"];
    let (a, b) = (results[k as usize % 5], results[(k as usize / 5) % 5]);
    format!(
        "{k},0,{k},9,dev,base,{a},checkmate,80,1000,1000,700\n\
         {k},1,{k},9,base,dev,{b},draw_adjudication,90,1000,1000,900\n"
    )
}

/// `spar status FILE`'s lines.
fn status(file: &Path) -> Vec<String> {
    let out = spar().arg("status").arg(file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// The lines the API shows of run `id`.
fn lines(v: &Value) -> Vec<String> {
    v["live"]["lines"]
        .as_array()
        .map(|a| a.iter().map(|l| l.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Waits until the API's lines of run `id` are `spar status`'s of `file` (the refresher
/// looks every half second); the run's JSON then.
fn agrees(server: &Server, id: i64, file: &Path, why: &str) -> Value {
    let start = Instant::now();
    loop {
        let want = status(file);
        let v = server.run(id);
        if lines(&v) == want {
            return v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{why}: the cache shows {:?}, spar status {want:?}",
            lines(&v)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn append(file: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// A server with a run that plays (priority 1) and a queued match (priority 0) whose
/// results file is the test's: (the server, the queued run's id, its results file).
fn setup(tmp: &Path) -> (Server, i64, PathBuf) {
    let server = Server::start(&tmp.join("data"), &tmp.join("serve.log"));
    let blocker = json!({
        "kind": "match",
        "priority": 1,
        "words": ["--engine", "name=a", "--engine", "name=b", "--each", "nodes=20000",
                  "--games", "100000"],
    });
    let (code, v) = server.json("POST", "/api/runs", Some(&blocker));
    assert_eq!(code, 201, "{v}");
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({ "kind": "match", "words": LITTLE_MATCH })),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    let dir = PathBuf::from(v["dir"].as_str().unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("results.csv");
    std::fs::write(&file, HEAD).unwrap();
    assert_eq!(state(&server.run(id)), "queued");
    (server, id, file)
}

#[test]
fn the_caches_numbers_are_spar_status_s_as_the_file_grows_is_cut_and_after_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut server, id, file) = setup(tmp.path());
    agrees(&server, id, &file, "a header only");
    let rows: String = (0..30).map(pair).collect();
    append(&file, &rows);
    let v = agrees(&server, id, &file, "30 pairs appended");
    assert_eq!(v["live"]["games"], 60, "{v}");
    // A row being written: not counted, by either.
    let next = pair(30);
    let (half, rest) = next.split_at(20);
    append(&file, half);
    std::thread::sleep(Duration::from_millis(1200));
    let v = agrees(&server, id, &file, "a half-written row");
    assert_eq!(v["live"]["games"], 60, "{v}");
    append(&file, rest);
    let v = agrees(&server, id, &file, "the row completed");
    assert_eq!(v["live"]["games"], 62, "{v}");
    // Cut back to its last complete row and then some (what `--resume` does to a
    // half-written line, and to rows beyond what it keeps), then rewritten with other games.
    append(&file, "31,0,31,9,dev,ba");
    let kept: String = (0..12).map(pair).collect();
    std::fs::write(&file, format!("{HEAD}{kept}")).unwrap();
    let v = agrees(&server, id, &file, "cut back to 12 pairs");
    assert_eq!(v["live"]["games"], 24, "{v}");
    let other: String = (0..40).map(|k| pair(k + 3)).collect();
    std::fs::write(&file, format!("{HEAD}{other}")).unwrap();
    agrees(&server, id, &file, "rewritten");
    // The page, the index and the stream show the same numbers.
    let v = server.run(id);
    let w = v["live"]["wins"].as_u64().unwrap();
    let (l, d) = (
        v["live"]["losses"].as_u64().unwrap(),
        v["live"]["draws"].as_u64().unwrap(),
    );
    let wld = format!("W-L-D {w}-{l}-{d}");
    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200);
    assert!(page.contains(&wld), "{wld} not on the run page");
    let (code, list) = server.json("GET", "/api/runs", None);
    assert_eq!(code, 200);
    let listed = list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .cloned()
        .unwrap();
    assert_eq!(listed["live"], v["live"], "the list and the run agree");
    let event = first_event(&server, id);
    assert_eq!(
        event["live"], v["live"],
        "the stream sends the page's numbers"
    );
    // A restart reads the file once: the first answer has the numbers.
    server.kill9();
    let server = Server::start(&tmp.path().join("data"), &tmp.path().join("serve.log"));
    assert_eq!(lines(&server.run(id)), status(&file), "after a restart");
}

/// The first event of run `id`'s live stream.
fn first_event(server: &Server, id: i64) -> Value {
    use std::io::{BufRead, BufReader};
    let mut s = std::net::TcpStream::connect(&server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET /api/runs/{id}/events HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\
         Connection: close\r\n\r\n",
        server.addr
    )
    .unwrap();
    for line in BufReader::new(s).lines() {
        let line = line.unwrap();
        if let Some(data) = line.strip_prefix("data: ") {
            return serde_json::from_str(data).unwrap();
        }
    }
    panic!("no event");
}

#[test]
fn a_finished_runs_numbers_are_spar_status_s() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&tmp.path().join("data"), &tmp.path().join("serve.log"));
    let v = server.submit_little_match();
    let id = v["id"].as_i64().unwrap();
    let done = server.wait(id, "finished", |v| state(v) == "finished");
    let file = PathBuf::from(done["dir"].as_str().unwrap()).join("results.csv");
    let want = status(&file);
    let shown = lines(&server.run(id));
    // The numbers (the lines before the ETA or end line) are the same.
    assert_eq!(shown[..4], want[..4], "{shown:?} vs {want:?}");
    assert!(want[1].starts_with("Games: "), "{want:?}");
}

/// Runs `spar ARGS…` in `dir`; it must succeed.
fn cli(dir: &Path, args: &str) {
    let out = spar()
        .args(args.split_whitespace())
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "spar {args}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The first whole number after `label` in `text`.
fn number_after(text: &str, label: &str) -> u64 {
    let at = text
        .find(label)
        .unwrap_or_else(|| panic!("no '{label}' in {text}"))
        + label.len();
    let digits: String = text[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

/// A queued run of `kind` with `words` on `server` (behind its playing run): its id and
/// directory.
fn queued(server: &Server, kind: &str, words: &str) -> (i64, PathBuf) {
    let words: Vec<&str> = words.split_whitespace().collect();
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({ "kind": kind, "words": words })),
    );
    assert_eq!(code, 201, "{v}");
    let dir = PathBuf::from(v["dir"].as_str().unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    (v["id"].as_i64().unwrap(), dir)
}

#[test]
fn an_sprt_s_a_tune_s_and_a_datagen_s_numbers_are_those_the_cli_shows_of_their_files() {
    let tmp = tempfile::tempdir().unwrap();
    let (server, _, _) = setup(tmp.path());
    let made = tmp.path().join("cli");
    std::fs::create_dir_all(&made).unwrap();

    // An SPRT: its lines are `spar status`'s as its results file grows (without the run
    // record its child writes beside the file, neither knows its bounds: no LLR here).
    let sprt = "--engine name=dev --engine name=base --each nodes=300 --elo0 0 --elo1 5";
    let (id, dir) = queued(&server, "sprt", sprt);
    let file = dir.join("results.csv");
    std::fs::write(&file, HEAD).unwrap();
    append(&file, &(0..12).map(pair).collect::<String>());
    agrees(&server, id, &file, "an SPRT's rows");
    append(&file, &(12..40).map(pair).collect::<String>());
    let v = agrees(&server, id, &file, "an SPRT's rows appended");
    assert_eq!(v["live"]["games"], 80, "{v}");

    // A tune: the trajectory a CLI tune wrote; its iterations and games are `spar status`'s.
    let tune = "--param rfp_margin --param lmr_base --each nodes=300 --iterations 3 --no-verify";
    cli(
        &made,
        &format!("tune {tune} --csv tune.csv --out tuned.txt --seed 3"),
    );
    let (id, dir) = queued(&server, "tune", tune);
    for f in std::fs::read_dir(&made).unwrap() {
        let name = f.unwrap().file_name();
        if name.to_string_lossy().starts_with("tune") {
            std::fs::copy(made.join(&name), dir.join(&name)).unwrap();
        }
    }
    let shown = status(&made.join("tune.csv")).join("\n");
    let iterations = number_after(&shown, "Iterations:");
    let v = server.wait(id, "the tune's numbers", |v| {
        v["live"]["iteration"] == iterations
    });
    let games = number_after(&shown, &format!("{iterations}/{iterations} (100.0 %),"));
    assert_eq!(v["live"]["games"], games, "{v}\n{shown}");

    // A datagen: its games and positions are `spar datagen --inspect`'s of its file.
    cli(
        &made,
        "datagen --out positions --games 4 --nodes 300 --seed 5",
    );
    let (id, dir) = queued(&server, "datagen", "--games 4 --nodes 300");
    std::fs::copy(made.join("positions"), dir.join("positions")).unwrap();
    let out = spar()
        .args(["datagen", "--inspect"])
        .arg(made.join("positions"))
        .output()
        .unwrap();
    let inspect = String::from_utf8_lossy(&out.stdout).into_owned();
    let (games, positions) = (
        number_after(&inspect, "Games:"),
        number_after(&inspect, "positions:"),
    );
    let v = server.wait(id, "the datagen's numbers", |v| {
        v["live"]["positions"] == positions
    });
    assert_eq!(v["live"]["games"], games, "{v}\n{inspect}");
}
