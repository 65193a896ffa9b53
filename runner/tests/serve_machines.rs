//! `spar serve`'s machines you can trust (issue 32), as a user sees them: a run with one
//! shard's results deliberately altered (its losses turned into wins, its node renamed)
//! shows that shard and its machine flagged on the run's page and in its JSON, the others
//! not, and the flag is written to the event log once; an admin excludes a machine (a
//! Slurm node, the local host: then no run starts) and lets it play again, each in the
//! actions log; the local host's bench speed is on the machines page and its API; bad
//! names and bodies are 400s that say what to fix.

mod common;
mod serve_common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use serve_common::{read, state, Server};

const MATCH: &str = "--engine name=a --engine name=b --each nodes=300 --seed 3";

fn submit(server: &Server, w: &str) -> i64 {
    let words: Vec<&str> = w.split_whitespace().collect();
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "match", "words": words})),
    );
    assert_eq!(code, 201, "{v}");
    v["id"].as_i64().unwrap()
}

/// Every game of `csv` (a shard's results) won by engine `first`.
fn all_won_by(csv: &Path, first: &str) {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let mut f: Vec<String> = line.split(',').map(String::from).collect();
        if i > 0 {
            f[6] = if f[4] == first { "1-0" } else { "0-1" }.into();
        }
        out.push_str(&f.join(","));
        out.push('\n');
    }
    std::fs::write(csv, out).unwrap();
}

/// A sharded run of 4 shards (10 pairs each) in `dir`, played by `spar shard` as array
/// tasks would; shards 0..2 on node-a, shard 3 on node-b with its results altered.
fn sharded_run_with_an_altered_shard(dir: &Path) {
    let rd = dir.join("run");
    ok(&run(&argv(&format!(
        "match {MATCH} --games 80 --slurm --plan-only --shards 4 --run-dir {} --quiet",
        path_str(&rd)
    ))));
    for i in 0..4 {
        let i = i.to_string();
        ok(&run(&[
            "shard",
            path_str(&rd),
            "--index",
            &i,
            "--concurrency",
            "1",
        ]));
        let node = rd.join(format!("shards/{i}/node"));
        assert!(read(&node).trim().len() > 1, "each shard writes its node");
        let name = if i == "3" { "node-b" } else { "node-a" };
        std::fs::write(node, format!("{name}\n")).unwrap();
    }
    all_won_by(&rd.join("shards/3/results.csv"), "a");
}

fn row<'a>(rows: &'a Value, key: &str, value: Value) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r[key] == value)
        .unwrap_or_else(|| panic!("no {key} {value} in {rows}"))
}

#[test]
fn a_shard_whose_results_were_altered_is_flagged_and_the_others_not() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start_with(
        &data,
        &tmp.path().join("serve.log"),
        &["--residual-min-games", "10"],
        None,
        tmp.path(),
    );
    // A local run: one machine, this host, never flagged.
    let id = submit(&server, &format!("{MATCH} --games 4"));
    let v = server.wait(id, "finished", |v| state(v) == "finished");
    let local = &v["machines"]["machines"];
    assert_eq!(local.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(local[0]["games"], 4);
    assert_eq!(local[0]["residual"], 0.0);
    assert_eq!(local[0]["flagged"], false);

    // Its directory now holds a sharded run with shard 3's results altered.
    sharded_run_with_an_altered_shard(&data.join(format!("runs/{id}")));
    let v = server.run(id);
    let m = &v["machines"];
    let shards = m["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 4, "{m}");
    for s in shards {
        assert_eq!(s["games"], 20, "{s}");
        let flagged = s["shard"] == 3;
        assert_eq!(s["flagged"], flagged, "{m}");
        let r = s["residual"].as_f64();
        assert!(
            if flagged {
                r > Some(2.7)
            } else {
                r.is_none_or(|r| r.abs() <= 2.7)
            },
            "{m}"
        );
    }
    assert_eq!(row(&m["shards"], "shard", json!(3))["machine"], "node-b");
    assert_eq!(row(&m["shards"], "shard", json!(3))["score"], 1.0);
    assert_eq!(
        row(&m["machines"], "machine", json!("node-b"))["flagged"],
        true
    );
    let a = row(&m["machines"], "machine", json!("node-a"));
    assert_eq!(
        (a["games"].clone(), a["flagged"].clone()),
        (json!(60), json!(false)),
        "{m}"
    );

    // The run's page: the Machines table, the flagged rows marked.
    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200);
    let table = &page[page
        .find("id=\"run-machines\"")
        .expect("the Machines table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("class=\"flagged\"").count(), 2, "{table}");
    assert!(table.contains("<tr class=\"flagged\"><td>node-b</td><td>3</td><td>20</td>"));
    assert_eq!(table.matches("class=\"ok\"").count(), 4, "{table}");

    // Logged once, however often the run is looked at.
    server.run(id);
    let (_, ev) = server.json("GET", &format!("/api/events?run={id}&kind=machine"), None);
    let ev = ev["events"].as_array().unwrap();
    let msgs: Vec<&str> = ev.iter().map(|e| e["message"].as_str().unwrap()).collect();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(
        msgs.iter()
            .any(|m| m.contains("shard 3 (on node-b) flagged")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("machine node-b flagged")),
        "{msgs:?}"
    );

    // The machines page lists the flags.
    let (_, page) = server.http("GET", "/machines", None);
    assert!(page.contains(&format!(
        "<a href=\"/runs/{id}#machines\">{id}</a></td><td>shard 3"
    )));
}

#[test]
fn an_admin_excludes_machines_and_the_local_host_then_starts_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start_with(&data, &tmp.path().join("serve.log"), &[], None, tmp.path());
    // The host's bench speed, measured once at start.
    let start = Instant::now();
    let host = loop {
        let (_, m) = server.json("GET", "/api/machines", None);
        let known = m["machines"].as_array().unwrap().clone();
        if let Some(h) = known
            .iter()
            .find(|h| h["nps"].as_u64().is_some_and(|n| n > 0))
        {
            break h["name"].as_str().unwrap().to_string();
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{m}\n{}",
            read(&server.log)
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let (_, page) = server.http("GET", "/machines", None);
    assert!(page.contains(&format!("id=\"machine-{host}\"")), "{page}");

    // A Slurm node excluded and let back, each recorded.
    let (code, v) = server.json(
        "POST",
        "/api/machines/node7/exclude",
        Some(&json!({"excluded": true})),
    );
    assert_eq!(
        (code, &v["name"], &v["excluded"]),
        (200, &json!("node7"), &json!(true)),
        "{v}"
    );
    let (_, m) = server.json("GET", "/api/machines", None);
    assert_eq!(
        row(&m["machines"], "name", json!("node7"))["excluded"],
        true
    );
    let (code, _) = server.form("/machines/node7/exclude", &[("excluded", "false")]);
    assert_eq!(code, 303);
    let (_, m) = server.json("GET", "/api/machines", None);
    assert_eq!(
        row(&m["machines"], "name", json!("node7"))["excluded"],
        false
    );
    let (_, acts) = server.json("GET", "/api/actions?action=machine-exclude", None);
    let targets: Vec<&str> = acts["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["machine node7", "machine node7"], "{acts}");

    // Bad input: a name that is none, a body without the flag. Nothing stored.
    let (code, v) = server.json(
        "POST",
        "/api/machines/-x/exclude",
        Some(&json!({"excluded": true})),
    );
    assert_eq!(code, 400);
    assert!(
        v["error"].as_str().unwrap().contains("not a machine name"),
        "{v}"
    );
    let (code, v) = server.json(
        "POST",
        "/api/machines/node7/exclude",
        Some(&json!({"on": 1})),
    );
    assert_eq!(code, 400);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("{\"excluded\": true}"),
        "{v}"
    );
    let (code, page) = server.form("/machines/node7/exclude", &[("excluded", "maybe")]);
    assert_eq!(code, 400);
    assert!(
        page.contains("excluded &#39;maybe&#39;: true or false"),
        "{page}"
    );
    let (_, m) = server.json("GET", "/api/machines", None);
    assert!(!m["machines"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["name"] == "-x"));

    // The local host excluded: a run waits; let back, it plays.
    let (code, _) = server.json(
        "POST",
        &format!("/api/machines/{host}/exclude"),
        Some(&json!({"excluded": true})),
    );
    assert_eq!(code, 200);
    let id = submit(&server, &format!("{MATCH} --games 2"));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(state(&server.run(id)), "queued");
    server.json(
        "POST",
        &format!("/api/machines/{host}/exclude"),
        Some(&json!({"excluded": false})),
    );
    let v = server.wait(id, "finished", |v| state(v) == "finished");
    assert_eq!(v["live"]["games"], 2);
}
