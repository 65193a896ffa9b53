//! `spar serve`'s operations pages as a user sees them: the event log (`/events`,
//! `/api/events`: server start, an orphan directory, submit, start, re-balance, stop,
//! finish, filtered by run and kind), the machines page (`/machines`, `/api/machines`:
//! which run holds how many cores, its games/s), a finished run's numbers kept in its row,
//! and the Slurm backend on the real local Slurm of `ci/slurm-local.sh` (skipped without
//! it, a failure under `CI=true`): a run submitted to a `spar serve --slurm` plays as a job
//! array, ends with the CLI's games, its page shows the shards and the machines page the
//! cluster's nodes with the run's shards on them; a cluster datagen run shows its positions
//! and positions/s.

mod common;
mod serve_common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use serve_common::{read, state, Server};

/// A server on a free port, killed (-9) when dropped.
/// What only these tests ask of the server (the rest is `serve_common`'s).
impl Server {
    fn submit(&self, kind: &str, w: &str) -> i64 {
        let body = json!({"kind": kind, "words": words(w)});
        let (code, v) = self.json("POST", "/api/runs", Some(&body));
        assert_eq!(code, 201, "{v}");
        v["id"].as_i64().unwrap()
    }

    /// Waits until `what` holds of `get()` (panics after `secs`).
    fn until<T>(&self, secs: u64, what: &str, get: impl Fn() -> T, ok: impl Fn(&T) -> bool) -> T
    where
        T: std::fmt::Debug,
    {
        let start = Instant::now();
        loop {
            let v = get();
            if ok(&v) {
                return v;
            }
            assert!(
                start.elapsed() < Duration::from_secs(secs),
                "waited too long for {what}: {v:?}\n{}",
                read(&self.log)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn events(&self, query: &str) -> Vec<Value> {
        let (code, v) = self.json("GET", &format!("/api/events{query}"), None);
        assert_eq!(code, 200, "{v}");
        v["events"].as_array().unwrap().clone()
    }
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

fn games(v: &Value) -> u64 {
    v["live"]["games"].as_u64().unwrap_or(0)
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
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

const LONG: &str = "--engine name=a --engine name=b --each nodes=400 --games 200 --seed 5";

#[test]
fn the_event_log_and_the_machines_page_follow_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // A run directory without its row: reported in the log, never deleted.
    std::fs::create_dir_all(data.join("runs/99")).unwrap();
    let server = Server::start_with(&data, &tmp.path().join("serve.log"), &[], None, tmp.path());
    let ev = server.events("");
    assert_eq!(kinds(&ev), ["server-start", "orphan"], "{ev:?}");
    assert!(ev[0]["run"].is_null());
    assert!(
        ev[1]["message"].as_str().unwrap().contains("runs/99"),
        "{ev:?}"
    );
    assert!(data.join("runs/99").is_dir());

    let (code, page) = server.http("GET", "/machines", None);
    assert_eq!(code, 200);
    assert!(page.contains("0 of 2 cores held, 2 free"), "{page}");
    assert!(page.contains("No run plays now"));

    // One run holds both cores; the machines page shows it and its games/s.
    let a = server.submit("match", LONG);
    server.wait(a, "games", |v| state(v) == "running" && games(v) >= 4);
    let m = server.until(
        60,
        "a games/s",
        || server.json("GET", "/api/machines", None).1,
        |m| {
            m["slots"][0]["games_per_s"]
                .as_f64()
                .is_some_and(|r| r > 0.0)
        },
    );
    assert_eq!(m["cores"], 2);
    assert_eq!(m["slurm"], false);
    assert_eq!(m["slots"][0]["run"], a);
    assert_eq!(m["slots"][0]["cores"], 2);
    let (_, page) = server.http("GET", "/machines", None);
    assert!(page.contains(&format!("id=\"slot-{a}\"")), "{page}");
    assert!(page.contains("2 of 2 cores held, 0 free"), "{page}");

    // A second run of the same priority: the first is re-balanced to one core.
    let b = server.submit(
        "match",
        "--engine name=a --engine name=b --each nodes=400 --games 400",
    );
    server.wait(b, "running", |v| state(v) == "running" && v["cores"] == 1);
    server.wait(a, "one core", |v| v["cores"] == 1);
    let ev = server.events(&format!("?run={a}"));
    assert!(ev.iter().all(|e| e["run"] == a), "{ev:?}");
    let k = kinds(&ev);
    assert!(k.contains(&"rebalance".to_string()), "{k:?}");
    assert_eq!(k.last().unwrap(), "submit", "{k:?}");
    assert!(k.iter().filter(|k| *k == "start").count() >= 2, "{k:?}");

    // Stopped by the user: a stop event, the first takes both cores again and finishes.
    let (code, _) = server.json("POST", &format!("/api/runs/{b}/stop"), None);
    assert_eq!(code, 200);
    server.wait(a, "finished", |v| state(v) == "finished");
    let stops = server.events(&format!("?run={b}&kind=stop"));
    assert!(!stops.is_empty());
    assert!(
        stops.last().unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("stopped"),
        "{stops:?}"
    );
    let finish = server.events("?kind=finish");
    assert_eq!(finish.len(), 1, "{finish:?}");
    assert_eq!(finish[0]["run"], a);
    assert_eq!(server.events("?kind=finish&limit=1").len(), 1);
    assert!(server.events("?kind=failure").is_empty());

    // The page, with the filters in the URL; a kind it does not know is refused.
    let (code, page) = server.http("GET", &format!("/events?run={a}&kind=finish"), None);
    assert_eq!(code, 200);
    assert!(page.contains(&format!("run {a} finished")), "{page}");
    assert!(!page.contains("rebalance</td>"), "{page}");
    // The page's own form sends an empty run when only the kind is chosen.
    let (code, page) = server.http("GET", "/events?run=&kind=finish", None);
    assert_eq!(code, 200, "{page}");
    assert!(page.contains(&format!("run {a} finished")), "{page}");
    let (code, _) = server.http("GET", "/events?kind=%3Cbogus%3E", None);
    assert_eq!(code, 400);
    let (code, _) = server.json("GET", "/api/events?kind=bogus", None);
    assert_eq!(code, 400);
    let (code, _) = server.json("GET", "/api/events?run=x", None);
    assert_eq!(code, 400);

    // A finished run's numbers are kept in its row: the pages need not read its files.
    let dir = data.join(format!("runs/{a}"));
    std::fs::rename(dir.join("results.csv"), dir.join("moved.csv")).unwrap();
    let v = server.run(a);
    assert_eq!(games(&v), 200, "{v}");
    std::fs::rename(dir.join("moved.csv"), dir.join("results.csv")).unwrap();
    assert_eq!(served(&data, a), cli("match", LONG, tmp.path()));
}

const MATCH: &str = "--engine name=a --engine name=b --each nodes=400 --games 8 --seed 3";

#[test]
fn a_run_on_a_slurm_server_plays_as_a_job_array_and_its_page_shows_the_shards() {
    let test = "a_run_on_a_slurm_server_plays_as_a_job_array_and_its_page_shows_the_shards";
    let Some(conf) = cluster(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start_with(
        &data,
        &tmp.path().join("serve.log"),
        &["--slurm", "--shards", "2", "--cpus-per-shard", "1"],
        Some(&conf),
        tmp.path(),
    );
    let (_, m) = server.json("GET", "/api/machines", None);
    assert_eq!(m["slurm"], true, "{m}");
    // The cluster's nodes (sinfo -N): the local cluster's one node, its state and CPUs.
    let nodes = m["nodes"].as_array().unwrap_or_else(|| panic!("{m}"));
    assert_eq!(nodes.len(), 1, "{m}");
    assert!(nodes[0]["cpus"].as_u64().unwrap() >= 1, "{m}");
    assert!(!nodes[0]["state"].as_str().unwrap().is_empty(), "{m}");
    let node = nodes[0]["name"].as_str().unwrap().to_string();
    let (code, page) = server.http("GET", "/machines", None);
    assert_eq!(code, 200);
    assert!(page.contains("<table id=\"nodes\">"), "{page}");
    assert!(page.contains(&format!("<td>{node}</td>")), "{page}");
    let id = server.submit("match", MATCH);
    // While it plays, the node shows the run's shards (squeue).
    let on_node = std::cell::RefCell::new(Vec::new());
    let v = server.until(
        180,
        "the run's end",
        || {
            let (_, m) = server.json("GET", "/api/machines", None);
            for t in m["nodes"][0]["shards"].as_array().into_iter().flatten() {
                assert_eq!(t["run"], id, "{m}");
                on_node.borrow_mut().push(t["shard"].as_u64().unwrap());
            }
            server.run(id)
        },
        |v| matches!(state(v), "finished" | "failed"),
    );
    let on_node = on_node.into_inner();
    assert!(!on_node.is_empty(), "no shard of run {id} seen on {node}");
    assert!(on_node.iter().all(|&s| s < 2), "{on_node:?}");
    let dir = data.join(format!("runs/{id}"));
    assert_eq!(
        state(&v),
        "finished",
        "{v}\n{}\n{}",
        read(&dir.join("stderr.log")),
        read(&server.log)
    );
    // A job array of the cluster run in runs/ID/run, and the CLI's games.
    let jobs = json(&dir.join("run/jobs.json"));
    assert_eq!(jobs["jobs"].as_array().map(Vec::len), Some(1), "{jobs}");
    assert_eq!(served(&data, id), cli("match", MATCH, tmp.path()));
    assert_eq!(games(&v), 8, "{v}");
    let shards = v["live"]["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 2, "{v}");
    assert_eq!(
        shards[0]["done"].as_u64().unwrap() + shards[1]["done"].as_u64().unwrap(),
        4
    );
    // The page shows the shards and the command line with the cluster flags.
    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200);
    assert!(page.contains("<h2>Shards</h2>"), "{page}");
    assert_eq!(page.matches("<tr class=\"shard\">").count(), 2, "{page}");
    assert!(page.contains("--slurm --run-dir"), "{page}");
    assert!(page.contains("--shards 2 --cpus-per-shard 1"), "{page}");
    let starts = server.events(&format!("?run={id}&kind=start"));
    assert!(
        starts[0]["message"]
            .as_str()
            .unwrap()
            .contains("Slurm job array of 2 shards"),
        "{starts:?}"
    );
}

#[test]
fn cluster_runs_are_sized_by_their_share_of_the_servers_shards() {
    let test = "cluster_runs_are_sized_by_their_share_of_the_servers_shards";
    let Some(conf) = cluster(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start_with(
        &data,
        &tmp.path().join("serve.log"),
        &["--slurm", "--shards", "4", "--cpus-per-shard", "1"],
        Some(&conf),
        tmp.path(),
    );
    // The first run plays alone (4 shards) or beside the second (2); the second, submitted
    // while the first plays, gets half of the 4 shards.
    let a = server.submit("match", MATCH);
    let b = server.submit("match", MATCH);
    for id in [a, b] {
        let v = server.wait(id, "finished", |v| {
            matches!(state(v), "finished" | "failed")
        });
        assert_eq!(state(&v), "finished", "{v}");
        assert_eq!(games(&v), 8, "{v}");
    }
    let shards =
        |id: i64| json(&data.join(format!("runs/{id}/run/manifest.json")))["shards"].clone();
    assert_eq!(shards(b), 2, "{}", read(&server.log));
    assert!(shards(a) == 4 || shards(a) == 2, "{}", shards(a));
    let starts = server.events(&format!("?run={b}&kind=start"));
    let message = starts[0]["message"].as_str().unwrap();
    assert!(message.contains("Slurm job array of 2 shards"), "{message}");
}

#[test]
fn a_cluster_datagen_runs_page_shows_its_positions_and_rate() {
    let test = "a_cluster_datagen_runs_page_shows_its_positions_and_rate";
    let Some(conf) = cluster(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start_with(
        &data,
        &tmp.path().join("serve.log"),
        &["--slurm", "--shards", "2", "--cpus-per-shard", "1"],
        Some(&conf),
        tmp.path(),
    );
    let id = server.submit("datagen", "--games 6 --nodes 500 --seed 2 --format text");
    let v = server.wait(id, "finished", |v| {
        matches!(state(v), "finished" | "failed")
    });
    let dir = data.join(format!("runs/{id}"));
    assert_eq!(
        state(&v),
        "finished",
        "{v}\n{}",
        read(&dir.join("stderr.log"))
    );
    assert_eq!(v["live"]["shards"].as_array().map(Vec::len), Some(2), "{v}");
    // The shards' positions are the merged text file's lines.
    let lines = read(&dir.join("positions")).lines().count() as u64;
    assert!(lines > 6, "{lines}");
    assert_eq!(games(&v), 6, "{v}");
    assert_eq!(v["live"]["positions"], lines, "{v}");
    assert!(v["live"]["positions_per_s"].as_f64().unwrap() > 0.0, "{v}");
    let (_, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert!(
        page.contains(&format!("<td data-f=\"positions\">{lines}</td>")),
        "{page}"
    );
    assert!(page.contains("data-f=\"positions_per_s\""), "{page}");
}

#[test]
fn the_slurm_backends_flags_need_slurm_and_sane_values() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let d = path_str(&data);
    usage_errors(&[
        (
            vec!["serve", "--data-dir", d, "--shards", "3"],
            "need --slurm",
        ),
        (
            vec!["serve", "--data-dir", d, "--slurm", "--shards", "0"],
            "at least 1",
        ),
        (
            vec!["serve", "--data-dir", d, "--slurm", "--partition", "a;b"],
            "not a partition name",
        ),
    ]);
    let conf = tmp.path().join("serve.toml");
    std::fs::write(&conf, "cpus-per-shard = 2\n").unwrap();
    usage_errors(&[(
        vec!["serve", "--data-dir", d, "--config", path_str(&conf)],
        "need --slurm",
    )]);
}
