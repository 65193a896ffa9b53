//! Cluster runs on a real single-node Slurm (`ci/slurm-local.sh`): `--slurm` coordinators,
//! `spar shard`, `spar merge`, `spar status`; the merged files against local runs, the SPRT
//! stopping the array, a cancelled task and a killed coordinator resumed, an SPRT with more
//! shards than run at once (paused at its horizon), 64 shards on one node, datagen byte for
//! byte, and the refusals. `.ci/run` starts the cluster (and exports
//! `SLURM_CONF`); outside CI the tests start it themselves — and stop it when the test
//! process ends — or skip with a notice when it cannot start. Under `CI=true` a cluster that
//! does not start is a failure.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// spar with the cluster's `SLURM_CONF`, in `dir`.
fn spar_at(dir: &Path, conf: &str) -> Command {
    let mut c = spar();
    c.current_dir(dir).env("SLURM_CONF", conf);
    c
}

fn run_at(dir: &Path, conf: &str, line: &str) -> Output {
    spar_at(dir, conf)
        .args(argv(line))
        .output()
        .expect("spawn spar")
}

/// Whether any `spar shard` process of the run in `run_dir` is left.
fn shard_processes(run_dir: &Path) -> bool {
    Command::new("pgrep")
        .args(["-f", &format!("shard {}", run_dir.display())])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the cluster still has a task of `job`.
fn queued(conf: &str, job: &str) -> bool {
    let out = Command::new("squeue")
        .env("SLURM_CONF", conf)
        .args(["-h", "-r", "-j", job])
        .output()
        .unwrap();
    !String::from_utf8_lossy(&out.stdout).trim().is_empty()
}

fn first_job(run_dir: &Path) -> String {
    let j = json(&run_dir.join("jobs.json"));
    j["jobs"][0].as_str().unwrap().to_string()
}

const MATCH: &str = "match --engine name=dev option.rfp_margin=60 --engine name=base";

#[test]
fn a_sharded_match_equals_the_local_match_pair_by_pair() {
    let Some(conf) = cluster("a_sharded_match_equals_the_local_match_pair_by_pair") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let each = "--each nodes=2000 --games 200 --seed 11";
    let o = run_at(
        d,
        &conf,
        &format!("{MATCH} {each} --slurm --run-dir run --shards 4 --results s.csv --pgnout s.pgn --json s.json"),
    );
    let sharded = ok(&o);
    let local = ok(&run_at(
        d,
        &conf,
        &format!(
            "{MATCH} {each} --concurrency 2 --results l.csv --pgnout l.pgn --json l.json --quiet"
        ),
    ));
    assert_eq!(sharded, local, "the same summary");
    let rows = rows_without_time(&d.join("s.csv"));
    assert_eq!(rows.len(), 201);
    assert_eq!(
        rows,
        rows_without_time(&d.join("l.csv")),
        "same games, same results"
    );
    assert_eq!(
        pgn_without_time(&d.join("s.pgn")),
        pgn_without_time(&d.join("l.pgn")),
        "same moves"
    );
    let (s, l) = (json(&d.join("s.json")), json(&d.join("l.json")));
    assert_eq!(s["ptnml"], l["ptnml"]);
    assert_eq!(s["games"], 200);
    // merge and status work on the run at any time, from anywhere.
    let again = ok(&run_at(d, &conf, "merge run --results m.csv"));
    assert_eq!(again, local);
    assert_eq!(rows_without_time(&d.join("m.csv")), rows);
    let status = ok(&run_at(d, &conf, "status run --html page.html"));
    assert!(status.contains("Games: 200 of 200"), "{status}");
    assert!(status.contains("shard   3: 25/25 pairs"), "{status}");
    let page = std::fs::read_to_string(d.join("page.html")).unwrap();
    assert!(
        page.contains("<svg") && !page.contains("http-equiv"),
        "finished: no refresh"
    );
    let local_status = ok(&run_at(d, &conf, "status l.csv"));
    assert!(local_status.contains("W-L-D"), "{local_status}");
}

#[test]
fn a_sharded_sprt_of_the_weakened_patch_ends_with_h0_and_stops_the_array() {
    let Some(conf) =
        cluster("a_sharded_sprt_of_the_weakened_patch_ends_with_h0_and_stops_the_array")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = run_at(
        d,
        &conf,
        "sprt --engine name=dev option.material_mg_knight=150 --engine name=base --each nodes=5000 option.Eval=hce \
         --slurm --run-dir run --shards 4 --json s.json",
    );
    let out = ok(&o);
    assert!(out.contains("H0 was accepted"), "{out}");
    assert_eq!(json(&d.join("s.json"))["decision"], "H0");
    let err = stderr(&o);
    let took: f64 = err
        .lines()
        .find_map(|l| l.split("no task left ").nth(1))
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no stop line in: {err}"));
    assert!(took < 5.0, "array stopped {took} s after the decision");
    let run_dir = d.join("run");
    assert!(!queued(&conf, &first_job(&run_dir)), "no task left");
    assert!(!shard_processes(&run_dir), "no spar shard process left");
    assert!(run_dir.join("STOP").exists());
}

/// A weakened patch and bounds that decide within a few dozen pairs.
const QUICK_SPRT: &str = "sprt --engine name=dev option.material_mg_knight=150 --engine name=base \
                          --each nodes=2000 option.Eval=hce --elo0 0 --elo1 40 --seed 2";

/// The local run of [`QUICK_SPRT`] in `d` (`l.csv`, `l.json`): its summary and JSON; it
/// ends with H0.
fn local_quick_sprt(d: &Path, conf: &str) -> (String, serde_json::Value) {
    let local = ok(&run_at(
        d,
        conf,
        &format!("{QUICK_SPRT} --concurrency 2 --results l.csv --json l.json --quiet"),
    ));
    assert!(local.contains("H0 was accepted"), "{local}");
    (local, json(&d.join("l.json")))
}

#[test]
fn a_sharded_sprt_decides_at_the_pair_the_local_sprt_does_every_time() {
    let Some(conf) = cluster("a_sharded_sprt_decides_at_the_pair_the_local_sprt_does_every_time")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (local, l) = local_quick_sprt(d, &conf);
    let local_rows = rows_without_time(&d.join("l.csv"));
    let pairs = l["pairs"].as_u64().unwrap();
    assert_eq!(local_rows.len() as u64, 2 * pairs + 1);
    for k in 1..=3 {
        let o = run_at(
            d,
            &conf,
            &format!(
                "{QUICK_SPRT} --slurm --run-dir run{k} --shards 4 --results s{k}.csv --json s{k}.json"
            ),
        );
        let sharded = ok(&o);
        assert_eq!(
            sharded, local,
            "run {k}: the local summary, verdict and LLR"
        );
        assert_eq!(
            rows_without_time(&d.join(format!("s{k}.csv"))),
            local_rows,
            "run {k}: the local run's pairs, up to the one that decided"
        );
        let s = json(&d.join(format!("s{k}.json")));
        for key in [
            "decision", "llr", "pairs", "games", "ptnml", "wins", "losses", "draws",
        ] {
            assert_eq!(s[key], l[key], "run {k}: {key}");
        }
        // The pairs the shards played after the decision are kept, named, not counted.
        let run_dir = d.join(format!("run{k}"));
        // Complete pairs: a whole line for game 1 (a shard writes game 0's row first).
        let recorded: usize = (0..4)
            .map(|i| {
                let text = std::fs::read_to_string(run_dir.join(format!("shards/{i}/results.csv")))
                    .unwrap_or_default();
                text.split_inclusive('\n')
                    .filter(|l| l.ends_with('\n') && l.split(',').nth(1) == Some("1"))
                    .count()
            })
            .sum();
        let after = recorded as u64 - pairs;
        let err = stderr(&o);
        let note = format!(
            "Not counted: {after} pair{} played after the SPRT decided (H0) at pair {}",
            if after == 1 { "" } else { "s" },
            pairs - 1
        );
        if after > 0 {
            assert!(err.contains(&note), "run {k}: {note}\n{err}");
            assert_eq!(s["not_counted"]["pairs"], after, "run {k}");
        } else {
            assert!(!err.contains("Not counted"), "run {k}: {err}");
        }
        eprintln!(
            "run {k}: {after} pairs recorded after the decision at pair {}",
            pairs - 1
        );
        let status = ok(&run_at(d, &conf, &format!("status run{k}")));
        assert!(status.contains(" - H0 accepted\n"), "{status}");
        assert!(
            status.contains(&format!(
                "Games: {} (until the SPRT decides), {pairs} pairs",
                2 * pairs
            )),
            "{status}"
        );
        assert!(status.contains("\nFinished\n"), "{status}");
        // A merge again, at any time: the same.
        assert_eq!(ok(&run_at(d, &conf, &format!("merge run{k}"))), local);
    }
}

#[test]
fn an_sprt_with_more_shards_than_run_at_once_pauses_them_at_the_horizon_and_decides_as_locally() {
    let Some(conf) = cluster(
        "an_sprt_with_more_shards_than_run_at_once_pauses_them_at_the_horizon_and_decides_as_locally",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (local, l) = local_quick_sprt(d, &conf);
    // 6 shards of 16 CPUs on the 64-CPU node: 4 run, 2 pend. Without the horizon the 4
    // would play until STOP and the count would wait at pair 4 for ever; with a window of
    // 6 pairs each shard plays about one pair ahead of the count, then pauses.
    let (out, err) = (d.join("coordinator.out"), d.join("coordinator.err"));
    let mut coordinator = spar_at(d, &conf)
        .args(argv(&format!(
            "{QUICK_SPRT} --slurm --run-dir run --shards 6 --cpus-per-shard 16 --results s.csv \
             --json s.json"
        )))
        .env("SPAR_SPRT_WINDOW", "6")
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = coordinator.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(240) {
            coordinator.kill().unwrap();
            coordinator.wait().unwrap();
            let _ = run_at(d, &conf, "status run");
            panic!(
                "the coordinator did not finish within 240 s:\n{}",
                std::fs::read_to_string(&err).unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let (sharded, err) = (
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(&err).unwrap(),
    );
    assert!(status.success(), "{err}");
    eprintln!("decided in {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(sharded, local, "the local summary, verdict and LLR");
    assert_eq!(
        rows_without_time(&d.join("s.csv")),
        rows_without_time(&d.join("l.csv")),
        "the local run's pairs, up to the one that decided"
    );
    let s = json(&d.join("s.json"));
    for key in ["decision", "llr", "pairs", "games", "ptnml"] {
        assert_eq!(s[key], l[key], "{key}");
    }
    let run_dir = d.join("run");
    assert!(err.contains("Resubmitted paused shards"), "{err}");
    let logs: String = std::fs::read_dir(run_dir.join("logs"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(logs.contains("Paused before pair "), "{logs}");
    // A pause is no failure: nothing counted against the resubmission limit.
    let jobs = json(&run_dir.join("jobs.json"));
    assert_eq!(jobs["resubmitted"], serde_json::json!({}), "{jobs}");
    assert!(jobs["jobs"].as_array().unwrap().len() >= 2, "{jobs}");
    let status = ok(&run_at(d, &conf, "status run"));
    assert!(status.contains(" - H0 accepted\n"), "{status}");
    for i in 0..6 {
        if let Ok(k) = std::fs::read_to_string(run_dir.join(format!("shards/{i}/paused"))) {
            let line = format!("shard {i:>3}: ");
            let shown = status.lines().find(|l| l.starts_with(&line)).unwrap();
            assert!(
                shown.ends_with(&format!("paused at pair {} (ahead of the count)", k.trim())),
                "{status}"
            );
        }
    }
    assert!(!status.contains("STALLED"), "{status}");
    assert!(!shard_processes(&run_dir));
}

#[test]
fn a_coordinator_killed_while_shards_are_paused_resumes_them_to_the_local_verdict() {
    let Some(conf) =
        cluster("a_coordinator_killed_while_shards_are_paused_resumes_them_to_the_local_verdict")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line = format!(
        "{QUICK_SPRT} --slurm --run-dir run --shards 6 --cpus-per-shard 16 --results s.csv \
         --json s.json --quiet"
    );
    let mut coordinator = spar_at(d, &conf)
        .args(argv(&line))
        .env("SPAR_SPRT_WINDOW", "6")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run_dir = d.join("run");
    let paused = |i: u64| run_dir.join(format!("shards/{i}/paused")).exists();
    let started = Instant::now();
    while !(0..6).any(paused) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no shard paused"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
    // Unwatched, the shards play up to the horizon and pause; the count waits for them.
    let start = Instant::now();
    while shard_processes(&run_dir) && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let o = spar_at(d, &conf)
        .args(argv(&format!("{line} --resume")))
        .env("SPAR_SPRT_WINDOW", "6")
        .output()
        .unwrap();
    let sharded = ok(&o);
    let (local, _) = local_quick_sprt(d, &conf);
    assert_eq!(sharded, local);
    assert_eq!(
        rows_without_time(&d.join("s.csv")),
        rows_without_time(&d.join("l.csv"))
    );
    let (s, l) = (json(&d.join("s.json")), json(&d.join("l.json")));
    for key in ["decision", "llr", "pairs", "ptnml"] {
        assert_eq!(s[key], l[key], "{key}");
    }
    let jobs = json(&run_dir.join("jobs.json"));
    assert_eq!(jobs["resubmitted"], serde_json::json!({}), "{jobs}");
    assert!(!shard_processes(&run_dir));
}

/// Starts the coordinator `line` (run directory `d/run`), waits until shard 1's results file
/// has `rows` lines (the header and its first pairs), cancels shard 1's task with `scancel`
/// and kills the coordinator with SIGKILL.
fn cancel_shard_1_and_kill_the_coordinator(d: &Path, conf: &str, line: &str, rows: usize) {
    let mut coordinator = spar_at(d, conf)
        .args(argv(line))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run_dir = d.join("run");
    wait_for_lines(
        &run_dir.join("shards/1/results.csv"),
        rows,
        Duration::from_millis(50),
        "shard 1 records its first pairs",
    );
    let job = first_job(&run_dir);
    let status = Command::new("scancel")
        .env("SLURM_CONF", conf)
        .arg(format!("{job}_1"))
        .status()
        .unwrap();
    assert!(status.success());
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
}

#[test]
fn a_cancelled_task_and_a_killed_coordinator_resume_to_the_uninterrupted_counts() {
    let Some(conf) =
        cluster("a_cancelled_task_and_a_killed_coordinator_resume_to_the_uninterrupted_counts")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let each = "--each nodes=3000 --games 64 --seed 5";
    let line = format!("{MATCH} {each} --slurm --run-dir run --shards 4 --results s.csv --quiet");
    let run_dir = d.join("run");
    // Once shard 1 has recorded a pair: cancel its task, then kill the coordinator.
    cancel_shard_1_and_kill_the_coordinator(d, &conf, &line, 3);
    let o = run_at(d, &conf, &format!("{line} --resume"));
    ok(&o);
    let local = ok(&run_at(
        d,
        &conf,
        &format!("{MATCH} {each} --concurrency 2 --results l.csv --quiet"),
    ));
    assert_eq!(
        rows_without_time(&d.join("s.csv")),
        rows_without_time(&d.join("l.csv")),
        "every pair once"
    );
    assert_eq!(stdout(&o), local);
    let jobs = json(&run_dir.join("jobs.json"));
    assert_eq!(jobs["resubmitted"]["1"], 1, "shard 1 resubmitted: {jobs}");
    assert!(!shard_processes(&run_dir));
}

#[test]
fn sixty_four_shards_on_one_node_run_to_completion_and_merge() {
    let Some(conf) = cluster("sixty_four_shards_on_one_node_run_to_completion_and_merge") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let each = "--each nodes=300 --games 200 --seed 2";
    let sharded = ok(&run_at(
        d,
        &conf,
        &format!("{MATCH} {each} --slurm --run-dir run --shards 64 --results s.csv --quiet"),
    ));
    let local = ok(&run_at(
        d,
        &conf,
        &format!("{MATCH} {each} --concurrency 2 --results l.csv --quiet"),
    ));
    assert_eq!(sharded, local);
    assert_eq!(
        rows_without_time(&d.join("s.csv")),
        rows_without_time(&d.join("l.csv"))
    );
    // Shard 63 played pairs 63; shards 36.. played one pair each (100 pairs).
    assert_eq!(lines_in(&d.join("run/shards/63/results.csv")), 3);
    assert_eq!(lines_in(&d.join("run/shards/0/results.csv")), 5);
}

#[test]
fn sharded_datagen_is_byte_identical_to_the_local_run() {
    let Some(conf) = cluster("sharded_datagen_is_byte_identical_to_the_local_run") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let opts = "--games 40 --nodes 1000 --format both --seed 9";
    ok(&run_at(
        d,
        &conf,
        &format!("datagen --out s.vf {opts} --slurm --run-dir run --shards 4 --quiet"),
    ));
    ok(&run_at(
        d,
        &conf,
        &format!("datagen --out l.vf {opts} --quiet"),
    ));
    for (s, l) in [
        ("s.vf", "l.vf"),
        ("s.vf.txt", "l.vf.txt"),
        ("s.vf.txt.idx", "l.vf.txt.idx"),
    ] {
        let (a, b) = (bytes(&d.join(s)), bytes(&d.join(l)));
        assert!(!a.is_empty());
        assert!(a == b, "{s} differs from {l}");
    }
    let status = ok(&run_at(d, &conf, "status run"));
    assert!(status.contains("Games: 40 of 40"), "{status}");
}

#[test]
fn a_sharded_report_merges_to_the_local_counts() {
    let Some(conf) = cluster("a_sharded_report_merges_to_the_local_counts") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Builtin engines where this spar records (`--features track`); otherwise an external
    // spar, which records nothing but plays, records and merges all the same.
    let engines = if cfg!(feature = "track") {
        "--engine name=dev option.rfp_margin=40 --engine name=base --each nodes=400".to_string()
    } else {
        format!(
            "--engine name=ext cmd={} args=uci --each nodes=300",
            env!("CARGO_BIN_EXE_spar")
        )
    };
    let each = format!("report {engines} --games 24 --seed 5 --no-build --quiet");
    let sharded = ok(&run_at(
        d,
        &conf,
        &format!("{each} --slurm --run-dir run --shards 3 --cpus-per-shard 2 --out s"),
    ));
    let local = ok(&run_at(
        d,
        &conf,
        &format!("{each} --concurrency 2 --out l"),
    ));
    assert_eq!(sharded, local, "the same terminal report");
    let (s, l) = (
        report_counts(&d.join("s/stats.json")),
        report_counts(&d.join("l/stats.json")),
    );
    assert_eq!(s, l, "the same counts, sums and histograms per site");
    if cfg!(feature = "track") {
        assert!(s[0].2.len() >= 12, "{:?}", s[0].2);
    }
    let status = ok(&run_at(d, &conf, "status run"));
    assert!(status.contains("Games: 24 of 24"), "{status}");
    let merged = ok(&run_at(d, &conf, "merge run"));
    assert_eq!(merged, local);
    let o = run_at(d, &conf, "merge run --pgnout x.pgn");
    usage_error(&o, "--pgnout is not an output of a report run");
}

#[test]
fn a_shard_refuses_a_changed_engine_and_a_bad_index() {
    let Some(conf) = cluster("a_shard_refuses_a_changed_engine_and_a_bad_index") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let engine = d.join("engine.sh");
    std::fs::write(
        &engine,
        format!("#!/bin/sh\nexec {} uci\n", env!("CARGO_BIN_EXE_spar")),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", path_str(&engine)])
        .status()
        .unwrap();
    ok(&run_at(
        d,
        &conf,
        &format!(
            "match --engine name=ext cmd={} --engine name=base --each nodes=200 --games 4 \
             --slurm --run-dir run --shards 2 --quiet",
            path_str(&engine)
        ),
    ));
    let manifest = json(&d.join("run/manifest.json"));
    assert_eq!(manifest["engines"][0]["name"], "ext");
    assert_eq!(manifest["shards"], 2);
    std::fs::write(
        &engine,
        format!(
            "#!/bin/sh\n# rebuilt\nexec {} uci\n",
            env!("CARGO_BIN_EXE_spar")
        ),
    )
    .unwrap();
    let run_dir = d.join("run");
    let r = path_str(&run_dir);
    usage_error(&run(&["shard", r, "--index", "0"]), "engine 'ext'");
    usage_error(
        &run(&["shard", r, "--index", "0"]),
        "changed since the run was planned",
    );
    usage_error(&run(&["shard", r, "--index", "2"]), "out of range");
    usage_error(
        &run(&["shard", r, "--index", "0", "--of", "3"]),
        "has 2 shards",
    );
    // A coordinator whose shards refuse stops the run with their message.
    let line = format!(
        "match --engine name=ext cmd={} --engine name=base --each nodes=200 --games 4 \
         --slurm --run-dir run2 --shards 2 --quiet",
        path_str(&engine)
    );
    ok(&run_at(d, &conf, &format!("{line} --plan-only")));
    std::fs::write(
        &engine,
        format!(
            "#!/bin/sh\n# rebuilt again\nexec {} uci\n",
            env!("CARGO_BIN_EXE_spar")
        ),
    )
    .unwrap();
    let o = run_at(d, &conf, &format!("{line} --resume"));
    usage_error(&o, "refused to run");
    assert!(
        stderr(&o).contains("changed since the run was planned"),
        "{}",
        stderr(&o)
    );
    assert!(!shard_processes(&d.join("run2")));
    // The engine restored, the same run resumes and completes.
    std::fs::write(
        &engine,
        format!(
            "#!/bin/sh\n# rebuilt\nexec {} uci\n",
            env!("CARGO_BIN_EXE_spar")
        ),
    )
    .unwrap();
    let out = ok(&run_at(d, &conf, &format!("{line} --resume")));
    assert!(out.contains("Score of ext vs base"), "{out}");
    // An output that holds games already (a local run would append to it).
    std::fs::write(d.join("old.pgn"), "[Event \"x\"]\n").unwrap();
    usage_error(
        &run_at(
            d,
            &conf,
            "match --engine name=a --engine name=b --each nodes=100 --games 2 --slurm --run-dir run3 --pgnout old.pgn",
        ),
        "--pgnout old.pgn already holds games",
    );
    // The same directory again without --resume.
    usage_error(
        &run_at(
            d,
            &conf,
            "match --engine name=a --engine name=b --each nodes=100 --games 2 --slurm --run-dir run",
        ),
        "already holds a run",
    );
}

/// A manifest of another spar version, and the options that cannot be sharded: refused
/// with one line, exit 2, before anything is submitted (no cluster needed).
#[test]
fn bad_cluster_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let old = d.join("old");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(
        old.join("manifest.json"),
        r#"{"schema": 1, "spar_version": "0.0.1"}"#,
    )
    .unwrap();
    let o = path_str(&old);
    usage_error(&run(&["shard", o, "--index", "0"]), "written by spar 0.0.1");
    usage_error(&run(&["merge", o]), "use the same spar version");
    usage_error(
        &run(&["shard", path_str(d), "--index", "0"]),
        "manifest.json",
    );
    usage_error(&run(&["status", "/no/such/run"]), "no such run directory");
    let empty_path = d.join("bin");
    std::fs::create_dir_all(&empty_path).unwrap();
    let base = "match --engine name=a --engine name=b --each nodes=100 --games 2";
    let no_sbatch = spar()
        .env("PATH", &empty_path)
        .args(argv(&format!("{base} --slurm --run-dir {o}x")))
        .output()
        .unwrap();
    usage_error(&no_sbatch, "no `sbatch` on PATH");
    usage_errors(&[
        (argv(&format!("{base} --run-dir {o}")), "add --slurm"),
        (
            argv(&format!("{base} --shards 4")),
            "--shards belongs to a cluster run",
        ),
        (argv(&format!("{base} --slurm")), "--slurm needs --run-dir"),
        (
            argv(&format!("{base} --resume")),
            "--resume needs --results",
        ),
    ]);
    if Command::new("sbatch").arg("--version").output().is_ok() {
        usage_errors(&[
            (
                argv(&format!("{base} --slurm --run-dir {o}y --concurrency 2")),
                "--cpus-per-shard",
            ),
            (
                argv(&format!("{base} --slurm --run-dir /proc/spar")),
                "not a writable directory",
            ),
            (
                argv(&format!("{base} --slurm --run-dir {o}z --shards 0")),
                "--shards 0",
            ),
            (
                argv(&format!(
                    "datagen --out {o}/d.vf --positions 100 --slurm --run-dir {o}w"
                )),
                "--positions cannot be sharded",
            ),
            (
                argv(&format!("{base} --slurm --run-dir {o}v --resume")),
                "holds no run",
            ),
        ]);
    }
}

/// `timeout -s INT` and Slurm signal the process and its group: two signals microseconds
/// apart are one interrupt (a graceful stop with the summary), and so is SIGTERM.
#[test]
fn a_doubled_interrupt_and_sigterm_stop_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    for (signals, name) in [(&["-INT", "-INT"][..], "int"), (&["-TERM"][..], "term")] {
        let out = dir.path().join(format!("{name}.vf"));
        let child = spar()
            .args(argv(&format!(
                "datagen --out {} --games 100000 --nodes 2000 --concurrency 1 --quiet",
                path_str(&out)
            )))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while bytes(&out).len() < 100 {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no game written"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let pid = child.id().to_string();
        // One `sh` sends them back to back.
        let script: Vec<String> = signals.iter().map(|s| format!("kill {s} {pid}")).collect();
        Command::new("sh")
            .args(["-c", &script.join("; ")])
            .status()
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{name}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("Interrupted after"),
            "{name}: a graceful stop prints the summary: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("second interrupt"), "{name}");
    }
}

/// Without Slurm: `--plan-only` writes the manifest, the shards are run by hand (one as a
/// Kubernetes Indexed Job pod would, by `JOB_COMPLETION_INDEX`), one of them twice (the
/// second run finds its pairs done), and `merge` gives the local run's files.
#[test]
fn plan_only_shards_run_by_hand_merge_to_the_local_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let each = "--each nodes=300 --games 12 --seed 4";
    let planned = spar()
        .current_dir(d)
        .env("PATH", "/nonexistent")
        .args(argv(&format!(
            "{MATCH} {each} --slurm --plan-only --run-dir run --shards 3 --results s.csv --pgnout s.pgn"
        )))
        .output()
        .unwrap();
    assert!(ok(&planned).contains("spar shard"), "{}", stdout(&planned));
    let r = d.join("run");
    let r = path_str(&r);
    ok(&run(&["shard", r, "--index", "0", "--concurrency", "1"]));
    let pod = spar()
        .args(["shard", r, "--concurrency", "2"])
        .env("JOB_COMPLETION_INDEX", "1")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    ok(&pod);
    ok(&run(&["shard", r, "--index", "2"]));
    ok(&run(&["shard", r, "--index", "2"]));
    assert_eq!(
        lines_in(&d.join("run/shards/2/results.csv")),
        5,
        "2 pairs, once"
    );
    let merged = ok(&run(&["merge", r]));
    let local = ok(&run_in(
        d,
        &argv(&format!(
            "{MATCH} {each} --results l.csv --pgnout l.pgn --quiet"
        )),
    ));
    assert_eq!(merged, local);
    assert_eq!(
        rows_without_time(&d.join("s.csv")),
        rows_without_time(&d.join("l.csv"))
    );
    assert_eq!(
        pgn_without_time(&d.join("s.pgn")),
        pgn_without_time(&d.join("l.pgn"))
    );
}

#[test]
fn an_sprt_waits_for_a_missing_shard_and_counts_to_its_decision_not_past_it() {
    // Shards by hand (no Slurm): shard 1 plays last. The SPRT decides at pair 33 of 40.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line = format!("{QUICK_SPRT} --games 80");
    let planned = spar()
        .current_dir(d)
        .env("PATH", "/nonexistent")
        .args(argv(&format!(
            "{line} --slurm --plan-only --run-dir run --shards 4 --json s.json"
        )))
        .output()
        .unwrap();
    ok(&planned);
    let r = d.join("run");
    let r = path_str(&r);
    for i in ["0", "2", "3"] {
        ok(&run(&["shard", r, "--index", i, "--concurrency", "2"]));
    }
    // Pair 1 is shard 1's: only pair 0 counts, the 29 after it wait.
    let status = ok(&run(&["status", r]));
    assert!(status.contains("Games: 2 of 80, 1 pairs;"), "{status}");
    assert!(
        status.contains(
            "Not counted yet: 29 pairs recorded beyond pair 1, which shard 1 has not recorded \
             yet: an SPRT counts in pair order, so they wait for it"
        ),
        "{status}"
    );
    assert!(!status.contains("accepted"), "{status}");
    let waiting = run(&["merge", r, "--json", path_str(&d.join("w.json"))]);
    ok(&waiting);
    assert_eq!(json(&d.join("w.json"))["pairs"], 1);
    assert_eq!(
        json(&d.join("w.json"))["not_counted"],
        serde_json::json!({"pairs": 29, "waiting_for_pair": 1, "shard": 1})
    );
    ok(&run(&["shard", r, "--index", "1", "--concurrency", "2"]));
    let merged = run(&[
        "merge",
        r,
        "--results",
        path_str(&d.join("s.csv")),
        "--json",
        path_str(&d.join("s.json")),
    ]);
    let local = ok(&run_in(
        d,
        &argv(&format!(
            "{line} --concurrency 2 --results l.csv --json l.json --quiet"
        )),
    ));
    assert!(local.contains("H0 was accepted"), "{local}");
    assert_eq!(ok(&merged), local);
    let l = json(&d.join("l.json"));
    assert_eq!(l["pairs"], 34);
    assert!(
        stderr(&merged).contains(
            "Not counted: 6 pairs played after the SPRT decided (H0) at pair 33; they stay in \
             the shards' records"
        ),
        "{}",
        stderr(&merged)
    );
    assert_eq!(
        rows_without_time(&d.join("s.csv")),
        rows_without_time(&d.join("l.csv"))
    );
    let s = json(&d.join("s.json"));
    for key in ["decision", "llr", "pairs", "ptnml"] {
        assert_eq!(s[key], l[key], "{key}");
    }
    assert_eq!(
        s["not_counted"],
        serde_json::json!({"pairs": 6, "after_decision_at_pair": 33})
    );
    let status = ok(&run(&["status", r]));
    assert!(status.contains("Games: 68 of 80, 34 pairs;"), "{status}");
    assert!(
        status.contains(" - H0 accepted\nNot counted: 6 pairs"),
        "{status}"
    );
    assert!(status.contains("\nFinished\n"), "{status}");
}

/// A planned and played run without Slurm (`--plan-only`, shards by hand): the run
/// directory `d/run` of a 4-pair match in 2 shards, with the run's own outputs `r.csv` and
/// `r.pgn` not yet merged.
fn played_run(d: &Path, engines: &str) {
    let line = format!(
        "{engines} --each nodes=200 --games 8 --seed 3 --slurm --plan-only --run-dir run \
         --shards 2 --results r.csv --pgnout r.pgn --json r.json"
    );
    ok(&run_in(d, &argv(&line)));
    let r = d.join("run");
    for i in ["0", "1"] {
        ok(&run(&[
            "shard",
            path_str(&r),
            "--index",
            i,
            "--concurrency",
            "2",
        ]));
    }
}

/// Issue 24, classes 1, 2 and 16: no output of `merge` or `status` may be a file the run
/// owns or reads, or another output; each is checked (exit 2) before any work; a merged CSV
/// has its run record, so `status` knows the run's length.
#[test]
fn merge_and_status_never_write_over_the_runs_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    played_run(d, MATCH);
    let r = d.join("run");
    let r = path_str(&r);
    let manifest = bytes(&d.join("run/manifest.json"));
    let shard0 = bytes(&d.join("run/shards/0/results.csv"));
    std::fs::create_dir(d.join("adir")).unwrap();
    for (args, needle) in [
        (
            vec!["--json", "run/manifest.json"],
            "is the manifest of the run",
        ),
        (
            vec!["--results", "run/shards/0/results.csv"],
            "is a shard's record of the run",
        ),
        (
            vec!["--pgnout", "run/shards/1/games.pgn"],
            "a shard's record",
        ),
        (
            vec!["--results", "run/shards/9/new.csv"],
            "a shard's record",
        ),
        (vec!["--json", "run/jobs.json"], "is the jobs file"),
        (vec!["--json", "run/STOP"], "is the STOP file"),
        (
            vec!["--json", "run/coordinator.lock"],
            "the coordinator's lock",
        ),
        (
            vec!["--results", "x.csv", "--json", "x.csv"],
            "is also the --results file",
        ),
        (vec!["--results", "nodir/x.csv"], "does not exist"),
        (vec!["--results", "adir"], "is a directory"),
    ] {
        let mut full = vec!["merge", r];
        full.extend(args.iter().copied());
        let o = run_in(d, &full);
        usage_error(&o, needle);
        assert!(stdout(&o).is_empty(), "checked before any work: {args:?}");
    }
    assert_eq!(bytes(&d.join("run/manifest.json")), manifest);
    assert_eq!(bytes(&d.join("run/shards/0/results.csv")), shard0);
    assert!(!d.join("x.csv").exists());

    // The run's own merge: the CSV with its run record, which `status` reads.
    let merged = ok(&run_in(d, &["merge", r]));
    assert!(merged.contains("Score of dev vs base"), "{merged}");
    assert!(d.join("r.csv.run.json").is_file());
    let st = ok(&run_in(d, &["status", "r.csv"]));
    assert!(st.contains("Games: 8 of 8"), "{st}");
    assert!(st.contains("Finished"), "{st}");
    assert!(!st.contains("until the SPRT decides"), "{st}");
    let csv = bytes(&d.join("r.csv"));
    for (args, needle) in [
        (
            vec!["status", "r.csv", "--html", "r.csv"],
            "is also the results file",
        ),
        (
            vec!["status", "r.csv", "--html", "r.csv.run.json"],
            "is also the results record file",
        ),
        (
            vec!["status", r, "--html", "run/manifest.json"],
            "is the manifest",
        ),
        (
            vec!["status", r, "--html", "run/shards/0/results.csv"],
            "a shard's record",
        ),
        (vec!["status", r, "--html", "adir"], "is a directory"),
        (vec!["status", "/dev/zero"], "not a regular file"),
    ] {
        let o = run_in(d, &args);
        usage_error(&o, needle);
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
    assert_eq!(bytes(&d.join("r.csv")), csv);
    assert_eq!(bytes(&d.join("run/manifest.json")), manifest);
    ok(&run_in(d, &["status", r, "--html", "page.html"]));
    // A merged output inside the run directory that the run does not own is fine.
    ok(&run_in(d, &["merge", r, "--results", "run/all.csv"]));
}

/// Issue 24, classes 3, 4, 5 and 15: a manifest is validated (no absurd range, no
/// allocation abort), pins every file an engine word names (a changed network is refused,
/// with the shard's failure recorded), shard records are checked against the run, and
/// `spar shard`'s own argument errors are not recorded as the shard's failure.
#[test]
fn manifests_inputs_and_shard_records_are_checked_against_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let net = d.join("net.nnue");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../engine/nets/default.nnue"),
        &net,
    )
    .unwrap();
    played_run(
        d,
        "match --engine name=net option.EvalFile=net.nnue --engine name=base",
    );
    let run_dir = d.join("run");
    let r = path_str(&run_dir);
    let m = json(&d.join("run/manifest.json"));
    assert_eq!(m["inputs"][0]["what"], "engine 'net' option.EvalFile");

    // Class 15: argument errors are the command's, not the shard's.
    usage_error(
        &run(&["shard", r, "--index", "0", "--concurrency", "0"]),
        "--concurrency",
    );
    usage_error(
        &run(&["shard", r, "--index", "0", "--of", "5"]),
        "has 2 shards",
    );
    usage_error(&run(&["shard", r, "--index", "7"]), "out of range");
    assert!(!d.join("run/shards/0/failed.json").exists());
    assert!(!d.join("run/shards/7").exists());
    ok(&run(&["status", r]));

    // Class 3: the network changed after the plan: refused, and recorded as a refusal.
    let mut changed = bytes(&net);
    changed.push(0);
    std::fs::write(&net, &changed).unwrap();
    let o = run(&["shard", r, "--index", "0"]);
    usage_error(&o, "engine 'net' option.EvalFile");
    assert!(
        stderr(&o).contains("changed since the run was planned"),
        "{}",
        stderr(&o)
    );
    let failed = json(&d.join("run/shards/0/failed.json"));
    assert_eq!(failed["code"], 2);
    changed.pop();
    std::fs::write(&net, &changed).unwrap();

    // Class 5: records that are not the run's.
    let good = std::fs::read_to_string(d.join("run/shards/0/results.csv")).unwrap();
    let header = good.lines().next().unwrap().to_string();
    let row = |pair: u64, game: u8, w: &str, b: &str| {
        format!("{pair},{game},{pair},1,{w},{b},1-0,checkmate,40,100,100,5\n")
    };
    for (body, needle) in [
        (
            row(1, 0, "net", "base") + &row(1, 1, "base", "net"),
            "not one of shard 0's pairs",
        ),
        (
            row(8, 0, "net", "base") + &row(8, 1, "base", "net"),
            "beyond the run's 4 pairs",
        ),
        (
            row(0, 0, "net", "x") + &row(0, 1, "x", "net"),
            "not a game between the run's engines",
        ),
    ] {
        std::fs::write(
            d.join("run/shards/0/results.csv"),
            format!("{header}\n{body}"),
        )
        .unwrap();
        for cmd in [vec!["status", r], vec!["merge", r]] {
            let o = run(&cmd);
            assert_eq!(o.status.code(), Some(1), "{cmd:?}: {}", stderr(&o));
            assert!(stderr(&o).contains(needle), "{}", stderr(&o));
            assert!(
                stderr(&o).contains("not a record of this run"),
                "{}",
                stderr(&o)
            );
        }
    }
    std::fs::write(d.join("run/shards/0/results.csv"), &good).unwrap();
    ok(&run(&["status", r]));

    // Class 4: absurd manifest fields are refused with one line, no abort.
    let manifest = d.join("run/manifest.json");
    for (field, value, needle) in [
        ("shards", serde_json::json!(0), "shards 0"),
        (
            "shards",
            serde_json::json!(1u64 << 50),
            "shards 1125899906842624",
        ),
        ("total", serde_json::json!(0), "total 0"),
        ("cpus_per_shard", serde_json::json!(0), "cpus_per_shard 0"),
    ] {
        let mut v = m.clone();
        v[field] = value;
        std::fs::write(&manifest, v.to_string()).unwrap();
        for cmd in [
            vec!["status", r],
            vec!["merge", r],
            vec!["shard", r, "--index", "0"],
        ] {
            usage_error(&run(&cmd), needle);
        }
    }
    std::fs::write(&manifest, m.to_string()).unwrap();
    std::fs::write(&manifest, vec![b' '; 100 << 20]).unwrap();
    usage_error(&run(&["status", r]), "larger than 64 MiB");
    std::fs::remove_file(&manifest).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &manifest).unwrap();
    usage_error(&run(&["merge", r]), "not a regular file");
}

/// Issue 24, class 8: one coordinator per run directory and one process per shard, with
/// locks a dead process does not leave held (a real second process holds each lock).
#[test]
fn run_directories_and_shards_have_one_process_each() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("run")).unwrap();
    let holder = |lock: &Path| {
        let child = Command::new("flock")
            .arg("-o")
            .arg(lock)
            .args(["sleep", "60"])
            .spawn()
            .expect("flock(1)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Command::new("flock")
            .args(["-n", path_str(lock), "true"])
            .status()
            .unwrap()
            .success()
        {
            assert!(Instant::now() < deadline, "flock(1) did not take {lock:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        child
    };
    let line =
        format!("{MATCH} --each nodes=200 --games 4 --slurm --plan-only --run-dir run --shards 2");
    let mut other = holder(&d.join("run/coordinator.lock"));
    let o = run_in(d, &argv(&line));
    usage_error(&o, "--run-dir");
    assert!(
        stderr(&o).contains("is in use by another spar"),
        "{}",
        stderr(&o)
    );
    assert!(
        !d.join("run/manifest.json").exists(),
        "refused before any work"
    );
    // Killed with SIGKILL: the lock is free at once.
    other.kill().unwrap();
    other.wait().unwrap();
    ok(&run_in(d, &argv(&line)));

    // A shard whose lock is held waits for the holder to let go (a requeued task after the
    // one before), then plays.
    let r = d.join("run");
    std::fs::create_dir_all(d.join("run/shards/0")).unwrap();
    let mut other = holder(&d.join("run/shards/0/shard.lock"));
    let started = Instant::now();
    let shard = spar()
        .args(["shard", path_str(&r), "--index", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!d.join("run/shards/0/results.csv").exists(), "it waits");
    other.kill().unwrap();
    other.wait().unwrap();
    let o = shard.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(started.elapsed() >= Duration::from_millis(1500));
    assert_eq!(
        lines_in(&d.join("run/shards/0/results.csv")),
        3,
        "its one pair"
    );
}

/// The arrays in the queue whose tasks start in `cwd` (squeue's work directory), by job id.
fn arrays_started_in(conf: &str, cwd: &Path) -> Vec<String> {
    let out = Command::new("squeue")
        .env("SLURM_CONF", conf)
        .args(["-h", "-o", "%F|%Z"])
        .output()
        .unwrap();
    let mut ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('|'))
        .filter(|(_, wd)| Path::new(wd.trim()) == cwd)
        .map(|(id, _)| id.trim().to_string())
        .collect();
    ids.dedup();
    ids
}

/// Waits up to `limit` for the queue to hold no array started in `cwd`.
fn queue_clears(conf: &str, cwd: &Path, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if arrays_started_in(conf, cwd).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

/// Issue 24, class 8: two coordinators started at once on one run directory, many times:
/// one runs, the other is refused (exit 2) before anything is submitted.
#[test]
fn two_coordinators_on_one_run_directory_never_both_submit() {
    let Some(conf) = cluster("two_coordinators_on_one_run_directory_never_both_submit") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for k in 0..6 {
        let line = format!(
            "{MATCH} --each nodes=100 --games 4 --seed {k} --slurm --run-dir run{k} --shards 2 --quiet"
        );
        let start = || {
            spar_at(d, &conf)
                .args(argv(&line))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (start(), start());
        let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        let codes: Vec<Option<i32>> = outs.iter().map(|o| o.status.code()).collect();
        assert!(
            codes.contains(&Some(0)) && codes.contains(&Some(2)),
            "round {k}: {codes:?}\n{}\n{}",
            stderr(&outs[0]),
            stderr(&outs[1])
        );
        let loser = outs.iter().find(|o| o.status.code() == Some(2)).unwrap();
        let why = stderr(loser);
        assert!(
            why.contains("is in use by another spar") || why.contains("already holds a run"),
            "{why}"
        );
        assert_eq!(stderr(loser).lines().count(), 1, "{why}");
        assert_eq!(
            recorded_jobs(&d.join(format!("run{k}"))).len(),
            1,
            "one submission"
        );
    }
}

/// Issue 24, classes 7 and 9: SIGINT or SIGTERM at every step of planning and submission
/// leaves no array in the queue that the run does not know, nothing playing, and a run that
/// `--resume` completes.
#[test]
fn signals_at_every_step_of_submission_leave_nothing_unrecorded() {
    let Some(conf) = cluster("signals_at_every_step_of_submission_leave_nothing_unrecorded") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (k, ms) in [0u64, 20, 50, 90, 140, 200, 300, 450, 700, 1000]
        .into_iter()
        .enumerate()
    {
        let cwd = dir.path().join(k.to_string());
        std::fs::create_dir(&cwd).unwrap();
        let line =
            format!("{MATCH} --each nodes=100 --games 4 --slurm --run-dir run --shards 2 --quiet");
        let child = spar_at(&cwd, &conf)
            .args(argv(&line))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        let signal = if k % 2 == 0 { "-INT" } else { "-TERM" };
        Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        let o = child.wait_with_output().unwrap();
        let run_dir = cwd.join("run");
        let in_queue = arrays_started_in(&conf, &cwd);
        let known = recorded_jobs(&run_dir);
        assert!(
            in_queue.iter().all(|j| known.contains(j)),
            "{ms} ms {signal}: arrays {in_queue:?} in the queue, {known:?} recorded\n{}",
            stderr(&o)
        );
        assert!(
            queue_clears(&conf, &cwd, Duration::from_secs(30)),
            "{ms} ms {signal}: the array was not stopped"
        );
        if run_dir.join("manifest.json").exists() {
            let out = ok(&run_at(&cwd, &conf, &format!("{line} --resume")));
            assert!(out.contains("Score of dev vs base"), "{out}");
            let live = recorded_jobs(&run_dir);
            assert!(live.iter().all(|j| !queued(&conf, j)), "{ms} ms: stopped");
        }
    }
}

/// Issue 24, class 9: a coordinator killed (-9) after `sbatch` but before it recorded the
/// array: `--resume` finds the array by its job name and adopts it instead of submitting
/// the shards twice.
#[test]
fn an_array_submitted_but_not_recorded_is_adopted_on_resume() {
    let Some(conf) = cluster("an_array_submitted_but_not_recorded_is_adopted_on_resume") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line =
        format!("{MATCH} --each nodes=300 --games 24 --slurm --run-dir run --shards 2 --quiet");
    let mut child = spar_at(d, &conf)
        .args(argv(&line))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run_dir = d.join("run");
    let deadline = Instant::now() + Duration::from_secs(30);
    while recorded_jobs(&run_dir).is_empty() {
        assert!(Instant::now() < deadline, "no submission");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let job = recorded_jobs(&run_dir)[0].clone();
    // As if the kill had come between sbatch and the record.
    std::fs::remove_file(run_dir.join("jobs.json")).unwrap();
    let o = run_at(d, &conf, &line.replace("--quiet", "--resume"));
    let out = ok(&o);
    assert!(out.contains("Score of dev vs base"), "{out}");
    assert!(
        stderr(&o).contains(&format!("Found job array {job} of this run")),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        recorded_jobs(&run_dir)[0],
        job,
        "adopted, not submitted again"
    );
    assert_eq!(
        lines_in(&run_dir.join("shards/0/results.csv")),
        13,
        "its 6 pairs, once"
    );
}

/// A directory holding `name`, a stand-in for a Slurm tool: `script` runs with `$REAL` the
/// real tool and `$N` how many times it was called before.
fn shim(dir: &Path, name: &str, script: &str) {
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let count = dir.join(format!("{name}.count"));
    std::fs::write(&count, "0").unwrap();
    let body = format!(
        "#!/bin/sh\nREAL={}\nN=$(cat {c})\necho $((N + 1)) > {c}\n{script}\n",
        real.trim(),
        c = count.display()
    );
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    Command::new("chmod").arg("+x").arg(&path).status().unwrap();
}

/// Runs `spar LINE` in `d` with a stand-in `tool` (see [`shim`]) first on `PATH` (in
/// `d/NAME`), `SPAR_SLURM_TIMEOUT` set to `timeout` seconds and a failing Slurm call
/// retried for 10 s (`SPAR_SLURM_GIVE_UP`); its output and how long it took.
fn with_shim(
    d: &Path,
    conf: &str,
    tool: &str,
    script: &str,
    timeout: &str,
    line: &str,
) -> (Output, Duration) {
    let shims = d.join(format!("shim-{tool}"));
    std::fs::create_dir(&shims).unwrap();
    shim(&shims, tool, script);
    let path = std::env::var("PATH").unwrap_or_default();
    let started = Instant::now();
    let o = spar_at(d, conf)
        .env("PATH", format!("{}:{path}", shims.display()))
        .env("SPAR_SLURM_TIMEOUT", timeout)
        .env("SPAR_SLURM_GIVE_UP", "10")
        .args(argv(line))
        .output()
        .unwrap();
    (o, started.elapsed())
}

/// Issue 24, classes 6 and 7: a transient `squeue` failure is retried and the run finishes;
/// an `scancel` that hangs is cut off and the run still merges and prints its summary, with
/// what to do next; an `sbatch` that hangs does not hang spar.
#[test]
fn slurm_tools_that_fail_or_hang_neither_hang_spar_nor_lose_the_merge() {
    let Some(conf) = cluster("slurm_tools_that_fail_or_hang_neither_hang_spar_nor_lose_the_merge")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let each = "--each nodes=200 --games 12 --seed 5";

    // Call 0 looks for arrays to adopt; the next two (the first polls) fail.
    let (o, _) = with_shim(
        d,
        &conf,
        "squeue",
        "if [ $N -ge 1 ] && [ $N -le 2 ]; then echo 'squeue: error: fake outage' >&2; exit 1; fi\nexec $REAL \"$@\"",
        "120",
        &format!("{MATCH} {each} --slurm --run-dir flaky --shards 2 --results f.csv"),
    );
    let out = ok(&o);
    assert!(out.contains("Score of dev vs base"), "{out}");
    assert!(
        stderr(&o).contains("fake outage; retrying"),
        "{}",
        stderr(&o)
    );
    assert_eq!(lines_in(&d.join("f.csv")), 13, "6 pairs");

    let (o, took) = with_shim(
        d,
        &conf,
        "scancel",
        "sleep 60",
        "2",
        &format!("{MATCH} {each} --slurm --run-dir hang --shards 2 --results h.csv"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(took < Duration::from_secs(50), "cut off");
    assert!(
        stdout(&o).contains("Score of dev vs base"),
        "merged all the same"
    );
    assert_eq!(lines_in(&d.join("h.csv")), 13, "the files written");
    let why = stderr(&o);
    assert!(why.contains("scancel did not answer within 2 s"), "{why}");
    assert!(
        why.contains("spar merge") && why.contains("told to stop"),
        "{why}"
    );
    assert!(d.join("hang/STOP").exists());
    assert!(queue_clears(&conf, d, Duration::from_secs(30)));

    let (o, took) = with_shim(
        d,
        &conf,
        "sbatch",
        "sleep 60",
        "1",
        &format!("{MATCH} {each} --slurm --run-dir stuck --shards 2"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(took < Duration::from_secs(30));
    let why = stderr(&o);
    assert!(why.contains("sbatch did not answer within 1 s"), "{why}");
    assert!(why.contains("--resume finds it by its job name"), "{why}");
}

/// A tune of two search parameters with a delay of 3 iterations (so shards work ahead).
const TUNE: &str = "tune --no-verify --param rfp_margin --param lmr_base --each nodes=400 \
                    --iterations 40 --pairs-per-iteration 2 --delay 3 --seed 7 --quiet";

#[test]
fn a_sharded_tune_is_the_local_tune_whatever_the_shards() {
    let Some(conf) = cluster("a_sharded_tune_is_the_local_tune_whatever_the_shards") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let local = ok(&run_at(
        d,
        &conf,
        &format!("{TUNE} --concurrency 2 --csv l.csv --out l.txt"),
    ));
    let trajectory = std::fs::read_to_string(d.join("l.csv")).unwrap();
    assert_eq!(trajectory.lines().count(), 42, "header, start and 40 rows");
    for shards in [1, 4, 16] {
        let o = run_at(
            d,
            &conf,
            &format!("{TUNE} --slurm --run-dir run{shards} --shards {shards} --csv s{shards}.csv --out s{shards}.txt"),
        );
        let out = ok(&o);
        assert_eq!(
            std::fs::read_to_string(d.join(format!("s{shards}.csv"))).unwrap(),
            trajectory,
            "--shards {shards}: the trajectory of the local run, byte for byte"
        );
        assert_eq!(
            std::fs::read(d.join(format!("s{shards}.txt"))).unwrap(),
            std::fs::read(d.join("l.txt")).unwrap()
        );
        // The same final values in the same forms.
        let values = |s: &str| s[s.find("Parameter values").unwrap()..].to_string();
        assert_eq!(
            values(&out).replace(&format!("s{shards}.txt"), "l.txt"),
            values(&local)
        );
        let status = ok(&run_at(
            d,
            &conf,
            &format!("status run{shards} --html s{shards}.html"),
        ));
        assert!(
            status.contains("Iterations: 40/40 (100.0 %), 160 games")
                && status.contains(&format!(
                    "{shards} shards; --delay 3; pairs recorded 80 of 80"
                )),
            "{status}"
        );
        // The run directory's status is the local CSV's, parameter by parameter.
        let table = |s: &str| s[s.find("parameter ").unwrap()..].to_string();
        assert_eq!(
            table(&status),
            table(&ok(&run_at(d, &conf, "status l.csv")))
        );
        let page = std::fs::read_to_string(d.join(format!("s{shards}.html"))).unwrap();
        assert_eq!(page.matches("<svg").count(), 2, "a chart per parameter");
    }
    // Another delay is another schedule: another trajectory.
    ok(&run_at(
        d,
        &conf,
        &format!(
            "{} --concurrency 2 --csv d0.csv",
            TUNE.replace("--delay 3", "--delay 0")
        ),
    ));
    assert_ne!(
        std::fs::read_to_string(d.join("d0.csv")).unwrap(),
        trajectory
    );
}

#[test]
fn a_tune_survives_a_cancelled_task_and_a_killed_coordinator() {
    let Some(conf) = cluster("a_tune_survives_a_cancelled_task_and_a_killed_coordinator") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line = format!(
        "{} --slurm --run-dir run --shards 4 --csv s.csv",
        TUNE.replace("nodes=400", "nodes=1500")
    );
    let run_dir = d.join("run");
    cancel_shard_1_and_kill_the_coordinator(d, &conf, &line, 5);
    let o = run_at(d, &conf, &format!("{line} --resume"));
    ok(&o);
    ok(&run_at(
        d,
        &conf,
        &format!(
            "{} --concurrency 2 --csv l.csv",
            TUNE.replace("nodes=400", "nodes=1500")
        ),
    ));
    assert_eq!(
        std::fs::read_to_string(d.join("s.csv")).unwrap(),
        std::fs::read_to_string(d.join("l.csv")).unwrap(),
        "the uninterrupted trajectory"
    );
    let jobs = json(&run_dir.join("jobs.json"));
    assert_eq!(jobs["resubmitted"]["1"], 1, "shard 1 resubmitted: {jobs}");
    assert!(!shard_processes(&run_dir));
}

#[test]
fn a_sharded_tune_verifies_its_values_and_a_bad_set_ends_h0() {
    let Some(conf) = cluster("a_sharded_tune_verifies_its_values_and_a_bad_set_ends_h0") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Huge steps slam the parameters to their bounds after two iterations; with this seed
    // they land at the far ends of their ranges, weaker at a node limit.
    std::fs::write(d.join("bad.txt"), BAD_SET).unwrap();
    let o = run_at(
        d,
        &conf,
        "tune --params bad.txt --each nodes=400 --iterations 2 --pairs-per-iteration 2 --seed 8 \
         --verify-elo1 40 --slurm --run-dir run --shards 2 --cpus-per-shard 1 --csv s.csv --quiet",
    );
    let out = ok(&o);
    assert!(out.contains("rfp_margin, 200"), "{out}");
    assert!(
        out.contains("Verification SPRT tuned vs start: failed (H0"),
        "{out}"
    );
    let record = json(&d.join("s.csv.run.json"));
    assert_eq!(record["verify"]["decision"], "H0", "{record}");
    let verify = d.join("run/verify");
    assert!(verify.join("manifest.json").exists());
    let status = ok(&run_at(d, &conf, "status run"));
    assert!(status.contains("failed (H0"), "{status}");
    assert!(!shard_processes(&verify));
    // Without the verdict's file (a coordinator killed before it wrote it), the status
    // shows the verification's games so far from its own run directory.
    std::fs::remove_file(d.join("run/verify.json")).unwrap();
    let status = ok(&run_at(d, &conf, "status run"));
    assert!(
        status.contains(
            "Verification SPRT tuned vs start so far (its coordinator runs it, or --resume \
             continues it; `spar status run/verify` for its page):"
        ),
        "{status}"
    );
    assert!(status.contains("\n  Games: "), "{status}");
    assert!(status.contains(" - H0 accepted\n"), "{status}");
}

/// Tuned values that a node-limited match shows to be much weaker (see the test above).
const BAD_SET: &str = "rfp_margin, int, 75, 20, 200, 60, 40\n\
                       lmr_base, int, 75, 0, 200, 60, 40\n\
                       futility_margin, int, 90, 20, 300, 60, 40\n\
                       nmp_base, int, 3, 1, 6, 2, 40\n";

#[test]
fn tune_shards_run_one_after_another_help_each_other_and_merge_to_the_local_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tune = TUNE.replace("--iterations 40", "--iterations 6");
    let planned = spar()
        .current_dir(d)
        .env("PATH", "/nonexistent")
        .args(argv(&format!(
            "{tune} --slurm --plan-only --run-dir run --shards 3 --csv s.csv --out s.txt"
        )))
        .output()
        .unwrap();
    assert!(ok(&planned).contains("spar shard"), "{}", stdout(&planned));
    let r = d.join("run");
    let r = path_str(&r);
    // Each shard alone: waiting for pairs of shards that do not run, it plays them itself
    // (after SPAR_TUNE_PATIENCE seconds without progress) without recording them.
    for i in ["0", "1", "2"] {
        let o = spar()
            .current_dir(d)
            .args(["shard", r, "--index", i, "--concurrency", "2"])
            .env("SPAR_TUNE_PATIENCE", "0.2")
            .output()
            .unwrap();
        ok(&o);
    }
    assert_eq!(
        lines_in(&d.join("run/shards/2/results.csv")),
        1 + 2 * 4,
        "shard 2 recorded its 4 pairs (2, 5, 8, 11) only"
    );
    let merged = ok(&run(&["merge", r]));
    ok(&run_in(
        d,
        &argv(&format!("{tune} --concurrency 2 --csv l.csv --out l.txt")),
    ));
    assert_eq!(
        std::fs::read_to_string(d.join("s.csv")).unwrap(),
        std::fs::read_to_string(d.join("l.csv")).unwrap()
    );
    assert!(
        merged.contains("SPSA: 6/6 iterations, 24 games on 3 shards"),
        "{merged}"
    );
    // --concurrency does not apply to a cluster tune; nor does a match's --resume.
    usage_error(
        &run_in(
            d,
            &argv(&format!("{tune} --slurm --run-dir run --concurrency 2")),
        ),
        "--concurrency does not apply to --slurm",
    );
    usage_error(
        &run_in(
            d,
            &argv(&format!(
                "{MATCH} --each nodes=300 --games 2 --slurm --plan-only --run-dir run --resume"
            )),
        ),
        "--plan-only writes a new run",
    );
    // The --params file is pinned: a shard of a run whose file changed refuses to play.
    std::fs::write(d.join("p.txt"), "rfp_margin, int, 75, 20, 200, 6, 0.002\n").unwrap();
    let planned = spar()
        .current_dir(d)
        .env("PATH", "/nonexistent")
        .args(argv(
            "tune --no-verify --params p.txt --each nodes=300 --iterations 2 --slurm --plan-only --run-dir run2 --shards 2",
        ))
        .output()
        .unwrap();
    ok(&planned);
    std::fs::write(d.join("p.txt"), "rfp_margin, int, 80, 20, 200, 6, 0.002\n").unwrap();
    let o = spar()
        .current_dir(d)
        .args(["shard", path_str(&d.join("run2")), "--index", "0"])
        .output()
        .unwrap();
    usage_error(&o, "--params");
    assert!(d.join("run2/shards/0/failed.json").exists());
}

#[test]
fn a_tune_shard_killed_at_any_write_resumes_to_the_local_trajectory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tune = TUNE.replace("--iterations 40", "--iterations 4");
    ok(&run_in(
        d,
        &argv(&format!("{tune} --concurrency 2 --csv l.csv")),
    ));
    for at in 1..=3 {
        let run_dir = d.join(format!("run{at}"));
        let r = path_str(&run_dir);
        ok(&spar()
            .current_dir(d)
            .env("PATH", "/nonexistent")
            .args(argv(&format!(
                "{tune} --slurm --plan-only --run-dir {r} --shards 2 --csv s{at}.csv"
            )))
            .output()
            .unwrap());
        let shard = |i: &str, kill: Option<u32>| {
            let mut c = spar();
            c.current_dir(d)
                .args(["shard", r, "--index", i, "--concurrency", "1"])
                .env("SPAR_TUNE_PATIENCE", "0.2");
            if let Some(k) = kill {
                c.env("SPAR_TEST_KILL_AT", k.to_string());
            }
            c.output().unwrap()
        };
        // Stopped dead right after its at-th row (a pair is two rows: odd = a torn pair).
        let killed = shard("0", Some(at));
        assert_eq!(killed.status.code(), Some(137), "{}", stderr(&killed));
        ok(&shard("0", None));
        ok(&shard("1", None));
        ok(&run(&["merge", r]));
        assert_eq!(
            std::fs::read_to_string(d.join(format!("s{at}.csv"))).unwrap(),
            std::fs::read_to_string(d.join("l.csv")).unwrap(),
            "shard 0 killed after row {at}"
        );
    }
}
