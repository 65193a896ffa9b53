//! `spar serve`'s clocks scaled by bench speed (issue 32, OpenBench's NPS scaling), as a
//! user sees them: with `--reference-nps` twice this host's speed, a time-controlled match
//! submitted with `--scale-nps` plays its clock doubled (its games' PGN says so), its
//! factor and scaled command line are in its JSON and on its page, and the event log says
//! so; a run without a clock, or a server without `--reference-nps`, refuses the opt-in
//! with a 400 that names the fix and stores nothing. The host's speed is fixed with the
//! server's test hook `SPAR_SERVE_HOST_NPS` (so the factor is exactly 2 on any machine).

mod common;
mod serve_common;

use serde_json::{json, Value};
use serve_common::{read, state, Server};

const HOOK: &str = "SPAR_SERVE_HOST_NPS";

fn submit(server: &Server, w: &str) -> (u16, Value) {
    let words: Vec<&str> = w.split_whitespace().collect();
    server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words})),
    )
}

fn runs(server: &Server) -> usize {
    let (_, v) = server.json("GET", "/api/runs", None);
    v["runs"].as_array().unwrap().len()
}

#[test]
fn a_scaled_run_plays_its_clock_times_reference_over_host_nps() {
    let tmp = tempfile::tempdir().unwrap();
    let here = std::env::current_dir().unwrap();
    let server = Server::start_env(
        &tmp.path().join("data"),
        &tmp.path().join("log"),
        &["--reference-nps", "2000000"],
        &[(HOOK, "1000000")],
        &here,
    );
    // A run with no clock cannot be scaled: a 400 naming the fix, nothing stored.
    let (code, v) = submit(
        &server,
        "--engine name=a --engine name=b --each nodes=300 --games 2 --scale-nps",
    );
    assert_eq!(code, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("no clock"), "{v}");
    assert_eq!(runs(&server), 0);

    let (code, v) = submit(
        &server,
        "--engine name=a --engine name=b --each tc=0.1+0.005 --games 2 --seed 5 --scale-nps",
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    let v = server.wait(id, "its end", |v| state(v) == "finished");
    assert_eq!(v["nps_factor"], json!(2.0), "{v}");
    let line = v["scaled_command"].as_str().unwrap();
    assert!(line.contains(" tc=0.2+0.01 "), "{line}");
    assert!(
        !line.contains("--scale-nps") && !line.contains("tc=0.1+"),
        "{line}"
    );
    // The child played the doubled clock: its games' TimeControl tag.
    let pgn = read(&std::path::Path::new(v["dir"].as_str().unwrap()).join("games.pgn"));
    assert!(pgn.contains("[TimeControl \"0.2+0.01\"]"), "{pgn}");
    assert!(!pgn.contains("[TimeControl \"0.1+0.005\"]"), "{pgn}");
    let (_, ev) = server.json("GET", &format!("/api/events?run={id}&kind=start"), None);
    let start = ev["events"][0]["message"].as_str().unwrap().to_string();
    assert!(
        start.contains("clocks scaled")
            && start.contains("reference 2000000 nps / host 1000000 nps"),
        "{start}"
    );
    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200);
    assert!(page.contains("id=\"nps-factor\">2.000<"), "{page}");
    assert!(page.contains("tc=0.2+0.01"), "{page}");

    // A node-limited run (no opt-in) is never scaled.
    let (code, v) = submit(
        &server,
        "--engine name=a --engine name=b --each nodes=300 --games 2",
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    let v = server.wait(id, "its end", |v| state(v) == "finished");
    assert!(
        v["nps_factor"].is_null() && v["scaled_command"].is_null(),
        "{v}"
    );
}

#[test]
fn without_a_reference_speed_the_opt_in_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&tmp.path().join("data"), &tmp.path().join("log"));
    let (code, v) = submit(
        &server,
        "--engine name=a --engine name=b --each tc=1+0.01 --games 2 --scale-nps",
    );
    assert_eq!(code, 400, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("--reference-nps N"),
        "{v}"
    );
    assert_eq!(runs(&server), 0);
    let (code, page) = server.form(
        "/runs",
        &[
            ("kind", "match"),
            (
                "words",
                "--engine name=a --engine name=b --each tc=1+0.01 --scale-nps",
            ),
        ],
    );
    assert_eq!(code, 400, "{page}");
    assert!(page.contains("--reference-nps N"), "{page}");
    assert_eq!(runs(&server), 0);
}

/// A sharded run of 2 shards in `dir`, played by `spar shard` as array tasks would, with
/// the environment the server gives its coordinators (`bench`: `SPAR_SHARD_BENCH=1`);
/// shard 1's node renamed `node-nps`.
fn sharded_run(dir: &std::path::Path, bench: bool) {
    let rd = dir.join("run");
    common::ok(&common::run(&common::argv(&format!(
        "match --engine name=a --engine name=b --each nodes=300 --games 4 --slurm \
         --plan-only --shards 2 --run-dir {} --quiet",
        common::path_str(&rd)
    ))));
    for i in ["0", "1"] {
        let mut cmd = common::spar();
        cmd.args([
            "shard",
            common::path_str(&rd),
            "--index",
            i,
            "--concurrency",
            "1",
        ]);
        if bench {
            cmd.env("SPAR_SHARD_BENCH", "1");
        } else {
            cmd.env_remove("SPAR_SHARD_BENCH");
        }
        common::ok(&cmd.output().unwrap());
    }
    std::fs::write(rd.join("shards/1/node"), "node-nps\n").unwrap();
}

#[test]
fn a_shard_asked_by_the_server_benches_its_node_for_the_machines_page() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start_env(
        &data,
        &tmp.path().join("log"),
        &[],
        &[(HOOK, "1234567")],
        tmp.path(),
    );
    let (code, v) = submit(
        &server,
        "--engine name=a --engine name=b --each nodes=300 --games 2",
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    server.wait(id, "its end", |v| state(v) == "finished");
    // The hook's speed is the host's.
    let (_, m) = server.json("GET", "/api/machines", None);
    let host = m["machines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["nps"] == json!(1234567));
    assert!(host.is_some(), "{m}");

    // A shard run from the command line benches nothing.
    let plain = tmp.path().join("plain");
    sharded_run(&plain, false);
    assert!(!plain.join("run/shards/0/nps").exists());

    // Asked, each shard writes its node's speed; the server stores it when it reads the run.
    let dir = data.join(format!("runs/{id}"));
    sharded_run(&dir, true);
    let nps: u64 = read(&dir.join("run/shards/1/nps")).trim().parse().unwrap();
    assert!(nps > 0);
    server.run(id);
    let (_, m) = server.json("GET", "/api/machines", None);
    let node = m["machines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "node-nps")
        .unwrap_or_else(|| panic!("no node-nps in {m}"));
    assert_eq!(node["nps"], json!(nps), "{m}");
    let (_, page) = server.http("GET", "/machines", None);
    assert!(page.contains("node-nps"), "{page}");
}
