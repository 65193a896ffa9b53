//! `spar report` through the binary: saved runs re-rendered and compared, the files of a
//! short self-play run, TrackFile dumps of `spar uci` and external engines, and one-line
//! errors with exit code 2.
//!
//! The playing tests need a spar built with the `track` feature:
//! `cargo test --profile ci -p runner --features track --test report_cli`. In the default
//! build they check the other side: builtin engines are refused with `--no-build`, and
//! external engines without the feature produce an empty, clearly labelled report.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use common::*;
use serde_json::Value;

const TRACK: bool = cfg!(feature = "track");

#[test]
fn saved_runs_are_rendered_compared_and_written() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("base.json");
    let b = dir.path().join("dev.json");
    std::fs::write(&a, fixture("uci", 30, 0).to_string()).unwrap();
    std::fs::write(&b, fixture("uci", 60, 10).to_string()).unwrap();
    let out = dir.path().join("cmp");
    let o = run(&[
        "report",
        "--from",
        path_str(&a),
        "--from",
        path_str(&b),
        "--out",
        path_str(&out),
    ]);
    let printed = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    // Same variant name in both files: the second is told apart by its file name.
    assert!(
        printed.contains("2 sites; uci (4 games) vs uci (dev) (4 games)"),
        "{printed}"
    );
    assert!(
        printed.contains("rfp    engine/src/search/alphabeta.rs:469"),
        "{printed}"
    );
    assert!(printed.contains("Δ uci (dev) − uci: N/game"), "{printed}");
    // 30 % vs 60 % with 4 games: the μ difference is flagged.
    let rfp_delta = printed
        .lines()
        .find(|l| l.starts_with("  Δ"))
        .unwrap()
        .to_string();
    assert!(
        rfp_delta.contains("μ +0.300") && rfp_delta.contains('*'),
        "{rfp_delta}"
    );

    let csv = std::fs::read_to_string(out.join("stats.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "variant,site,count,mean,mean_abs,stddev,min,max,0,1,3,64..79,128..159"
    );
    assert_eq!(
        lines.next().unwrap(),
        "uci,rfp,100,0.3,0.3,0.5,0,1,70,30,0,0,0"
    );
    assert_eq!(csv.lines().count(), 5);

    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(json["variants"][1]["name"], "uci (dev)");
    assert_eq!(json["variants"][1]["sites"][0]["exact"]["sum"], "60");

    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("id=\"summary\""));

    // The written files read back (JSON and CSV) and render the same blocks.
    for file in ["stats.json", "stats.csv"] {
        let o = run(&["report", "--from", path_str(&out.join(file))]);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        assert!(stdout(&o).contains("rfp/margin"), "{file}");
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"not\": \"stats\"}").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["report", "--from", "/nonexistent/stats.json"],
            "cannot read",
        ),
        (
            vec!["report", "--from", path_str(&junk)],
            "not a spar statistics file",
        ),
        (
            vec![
                "report",
                "--engine",
                "nodes=10",
                "--games",
                "3",
                "--no-build",
            ],
            "--games 3",
        ),
        (
            vec![
                "report", "--engine", "nodes=10", "--engine", "nodes=10", "--engine", "nodes=10",
            ],
            "one or two --engine",
        ),
        (
            vec!["report", "--engine", "frobnicate=1", "--each", "nodes=10"],
            "unknown engine key",
        ),
        (
            vec![
                "report",
                "--from",
                path_str(&junk),
                "--out",
                path_str(&junk),
            ],
            "cannot create the directory",
        ),
    ];
    usage_errors(&cases);
    // Neither --engine nor --from: clap's usage error.
    assert_eq!(run(&["report"]).status.code(), Some(2));
}

fn sites_of(json: &Value, variant: usize) -> Vec<String> {
    json["variants"][variant]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["site"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_short_run_writes_the_report_files() {
    let dir = tempfile::tempdir().unwrap();
    let play = |out: &Path, concurrency: &str| {
        run(&[
            "report",
            "--engine",
            "name=dev",
            "option.rfp_margin=40",
            "--engine",
            "name=base",
            "--each",
            "nodes=400",
            "--games",
            "4",
            "--concurrency",
            concurrency,
            "--quiet",
            "--no-build",
            "--out",
            path_str(out),
        ])
    };
    let out = dir.path().join("rep");
    let o = play(&out, "2");
    if !TRACK {
        assert_eq!(o.status.code(), Some(2));
        let err = stderr(&o);
        assert!(
            err.contains("built without the `track` feature") && err.contains("--features track"),
            "{err}"
        );
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = stdout(&o);
    assert!(
        printed.contains("dev (4 games) vs base (4 games)"),
        "{printed}"
    );
    assert!(printed.contains("Δ base − dev"), "{printed}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    let sites = sites_of(&json, 0);
    for s in [
        "rfp",
        "tt/hit",
        "eval/static",
        "lmr/reduction",
        "search/depth",
    ] {
        assert!(sites.iter().any(|x| x == s), "{s} missing from {sites:?}");
    }
    assert!(sites.len() >= 12, "{sites:?}");
    assert!(std::fs::read_to_string(out.join("report.html"))
        .unwrap()
        .contains("<svg"));
    // Deterministic under a node limit, at any concurrency.
    let again = dir.path().join("again");
    assert!(play(&again, "1").status.success());
    assert_eq!(
        std::fs::read_to_string(out.join("stats.json")).unwrap(),
        std::fs::read_to_string(again.join("stats.json")).unwrap()
    );
}

#[test]
fn uci_sessions_dump_their_statistics_on_quit() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.json");
    let mut child = spar()
        .arg("uci")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let script = format!(
        "uci\nsetoption name TrackFile value {}\nposition startpos moves e2e4\ngo depth 5\n",
        dump.display()
    );
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(script.as_bytes()).unwrap();
    // Let the search finish before quitting (quit would stop it).
    let pipe = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut lines = Vec::new();
        for line in std::io::BufReader::new(pipe).lines() {
            let line = line.unwrap();
            let done = line.starts_with("bestmove");
            lines.push(line);
            if done {
                break;
            }
        }
        lines
    });
    let lines = reader.join().unwrap();
    assert!(lines.iter().any(|l| l.starts_with("bestmove")));
    stdin.write_all(b"quit\n").unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(json["variants"][0]["name"], "uci");
    let sites = sites_of(&json, 0);
    if TRACK {
        assert!(sites.iter().any(|s| s == "tt/hit"), "{sites:?}");
        let o = run(&["report", "--from", path_str(&dump)]);
        assert!(o.status.success());
        assert!(stdout(&o).contains("tt/hit"));
    } else {
        assert!(sites.is_empty(), "{sites:?}");
    }
}

#[test]
fn external_engines_report_through_trackfile() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ext");
    let o = run(&[
        "report",
        "--engine",
        &format!("cmd={}", env!("CARGO_BIN_EXE_spar")),
        "args=uci",
        "name=ext",
        "--each",
        "nodes=300",
        "--games",
        "2",
        "--quiet",
        "--out",
        path_str(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(json["variants"][0]["name"], "ext");
    // One engine playing itself: both seats of each game count.
    assert_eq!(json["variants"][0]["games"], 4);
    if TRACK {
        assert!(sites_of(&json, 0).iter().any(|s| s == "rfp"));
    } else {
        assert!(stderr(&o).contains("recorded no track! site"));
        assert!(stdout(&o).contains("no site recorded anything"));
    }
}

/// The engines of the sharded report tests: builtin engines where this spar records (built
/// with `--features track`); otherwise an external spar, which records nothing, so that the
/// games, the shards' records and the files are still checked.
fn sharded_engines() -> String {
    if TRACK {
        "--engine name=dev option.rfp_margin=40 --engine name=base --each nodes=400".to_string()
    } else {
        format!(
            "--engine name=ext cmd={} args=uci --each nodes=300",
            env!("CARGO_BIN_EXE_spar")
        )
    }
}

#[test]
fn a_report_sharded_by_hand_merges_to_the_local_counts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let each = format!(
        "{} --games 12 --seed 3 --quiet --no-build",
        sharded_engines()
    );
    let local = ok(&run_in(
        d,
        &argv(&format!("report {each} --concurrency 2 --out local")),
    ));
    // Planned without a scheduler (no Slurm on PATH), the shards run by hand.
    let planned = spar()
        .current_dir(d)
        .env("PATH", "/nonexistent")
        .args(argv(&format!(
            "report {each} --slurm --plan-only --shards 3 --run-dir run --out merged"
        )))
        .output()
        .unwrap();
    assert!(ok(&planned).contains("spar shard"), "{}", stdout(&planned));
    let r = d.join("run");
    let r = path_str(&r);
    // Each shard killed at one of its writes (the checkpoint of its first stretch, a row
    // after it), then played to its end: nothing is counted twice or lost.
    for (i, kill_at) in [("0", "1"), ("1", "2"), ("2", "3")] {
        let o = spar()
            .args(["shard", r, "--index", i, "--concurrency", "1"])
            .env("SPAR_TEST_KILL_AT", kill_at)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(137), "shard {i}: {}", stderr(&o));
        ok(&run(&["shard", r, "--index", i, "--concurrency", "2"]));
    }
    // Played again, a finished shard adds nothing.
    ok(&run(&["shard", r, "--index", "1"]));
    let status = ok(&run(&["status", r]));
    assert!(status.contains("Games: 12 of 12"), "{status}");
    assert!(status.contains("3 shards"), "{status}");
    let merged = ok(&run(&["merge", r]));
    assert_eq!(merged, local, "the same terminal report");
    let (l, m) = (
        report_counts(&d.join("local/stats.json")),
        report_counts(&d.join("merged/stats.json")),
    );
    assert_eq!(m, l, "the same counts, sums and histograms");
    if TRACK {
        assert!(l[0].2.len() >= 12, "{:?}", l[0].2);
        assert_eq!((l[0].1, l[1].1), (12, 12));
    } else {
        // One engine playing itself: both seats of each game count.
        assert_eq!(l[0].1, 24);
    }
    for name in ["stats.csv", "report.html"] {
        assert!(d.join("merged").join(name).is_file(), "{name}");
    }
    // The shards' records are not the report's outputs: refused before any work.
    for flag in ["--pgnout", "--results", "--json"] {
        let o = run(&["merge", r, flag, path_str(&d.join("x"))]);
        usage_error(&o, &format!("{flag} is not an output of a report run"));
        assert!(!d.join("x").exists());
    }
}

#[test]
fn sharded_report_options_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run_dir = d.join("run");
    let rd = path_str(&run_dir);
    let saved = d.join("s.json");
    std::fs::write(&saved, fixture("uci", 30, 0).to_string()).unwrap();
    let e = sharded_engines();
    let base = format!("report {e} --games 4 --quiet --no-build");
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{base} --resume"),
            "--resume belongs to a cluster run",
        ),
        (
            format!("{base} --run-dir {rd}"),
            "--run-dir belongs to a cluster run",
        ),
        (
            format!(
                "report --from {} --slurm --plan-only --run-dir {rd}",
                path_str(&saved)
            ),
            "--from reads saved statistics",
        ),
        (
            format!("{base} --slurm --plan-only --run-dir {rd} --concurrency 2"),
            "--concurrency does not apply to --slurm",
        ),
        (
            format!("{base} --slurm --plan-only --run-dir {rd} --out {rd}/shards"),
            "a shard's record",
        ),
    ];
    for (line, needle) in &cases {
        let o = run_in(d, &argv(line));
        assert_eq!(o.status.code(), Some(2), "{line}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{line}: {}", stderr(&o));
    }
    assert!(!run_dir.join("manifest.json").exists());
    // Builtin engines on a spar without `track`: refused before the run directory is made.
    if !TRACK {
        let o = run_in(
            d,
            &argv(&format!(
                "report --engine name=a nodes=100 --games 2 --no-build --slurm --plan-only --run-dir {rd}"
            )),
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("built without the `track` feature"),
            "{}",
            stderr(&o)
        );
    }
    // Planned once; a second plan in the same directory needs --resume, and --resume
    // with other options is refused.
    ok(&run_in(
        d,
        &argv(&format!("{base} --slurm --plan-only --run-dir {rd}")),
    ));
    let o = run_in(
        d,
        &argv(&format!("{base} --slurm --plan-only --run-dir {rd}")),
    );
    assert!(stderr(&o).contains("already holds a run"), "{}", stderr(&o));
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["command"], "report");
}
