//! Issue 33, class 8: a local run's lock files (`FILE.lock` beside each output it locks)
//! are removed when the run ends — normally, by Ctrl-C, or by an error — so that none is
//! left in the user's directory; a second process still cannot write the same output at the
//! same time, and a lock file left by a killed process blocks nothing.

mod common;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use common::*;

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// The `*.lock` files in `dir`.
fn locks_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".lock"))
        .collect()
}

/// `spar match` between two cheap engines, plus `extra`.
fn match_args(extra: &str) -> Vec<String> {
    words(&format!(
        "match --engine name=a --engine name=b option.rfp_margin=100 --each nodes=300 \
         --quiet --concurrency 1 {extra}"
    ))
}

/// [`match_args`] run in `dir`.
fn match_in(dir: &Path, extra: &str) -> Output {
    run_in(dir, &match_args(extra))
}

#[test]
fn finished_runs_leave_no_lock_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The example of the issue: m.csv.lock and m.pgn.lock beside a match's files.
    ok(&match_in(
        d,
        "--games 2 --results m.csv --pgnout m.pgn --dump-positions d.vf format=both",
    ));
    assert!(d.join("m.csv").is_file() && d.join("m.pgn").is_file());
    assert_eq!(locks_in(d), Vec::<String>::new(), "after the match");
    ok(&run_in(
        d,
        &words(
            "tune --no-verify --param rfp_margin --each nodes=300 --iterations 1 \
             --pairs-per-iteration 1 --concurrency 1 --quiet --csv t.csv --out t.txt",
        ),
    ));
    assert!(d.join("t.csv").is_file());
    assert_eq!(locks_in(d), Vec::<String>::new(), "after the tune");
    ok(&run_in(
        d,
        &words("datagen --games 2 --nodes 300 --format both --out g.vf"),
    ));
    assert!(d.join("g.vf").is_file());
    assert_eq!(locks_in(d), Vec::<String>::new(), "after datagen");
    ok(&run_in(
        d,
        &words(
            "train --data g.vf --out o.nnue --hidden 16 --batch 16 --epochs 1 --threads 1 \
             --quiet",
        ),
    ));
    assert!(d.join("o.nnue").is_file());
    assert_eq!(locks_in(d), Vec::<String>::new(), "after train");
    // A resumed run locks and cleans up the same way.
    ok(&match_in(
        d,
        "--games 4 --results m.csv --pgnout m.pgn --dump-positions d.vf format=both --resume",
    ));
    assert_eq!(lines_in(&d.join("m.csv")), 5);
    assert_eq!(locks_in(d), Vec::<String>::new(), "after the resume");
}

#[test]
fn a_run_stopped_by_ctrl_c_or_ended_by_an_error_leaves_no_lock_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let child = started_in(
        d,
        words(
            "match --engine name=a --engine name=b --each nodes=300 --quiet --concurrency 1 \
             --games 100000 --results r.csv --pgnout r.pgn",
        ),
        "r.csv",
        2,
    );
    assert_eq!(locks_in(d).len(), 2, "held while it runs");
    interrupted(child);
    assert_eq!(locks_in(d), Vec::<String>::new(), "after Ctrl-C");
    // An engine that cannot start: the run fails after taking its locks.
    let o = run_in(
        d,
        &words(
            "match --engine cmd=/no/such/engine --engine name=b --each nodes=300 --games 2 \
             --results e.csv --pgnout e.pgn",
        ),
    );
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("/no/such/engine"), "{}", stderr(&o));
    assert_eq!(locks_in(d), Vec::<String>::new(), "after an error");
}

#[test]
fn a_stale_lock_file_blocks_nothing_and_a_live_one_still_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Left by a process killed with SIGKILL (no one holds it): reused, then removed.
    std::fs::write(d.join("s.csv.lock"), "pid 1: spar match (killed)").unwrap();
    ok(&match_in(d, "--games 2 --results s.csv"));
    assert_eq!(lines_in(&d.join("s.csv")), 3);
    assert_eq!(locks_in(d), Vec::<String>::new());
    // A run that holds its lock refuses a second writer of the same file.
    let child = started_in(
        d,
        match_args("--games 100000 --results s.csv --resume"),
        "s.csv",
        4,
    );
    usage_error(
        &match_in(d, "--games 100 --results s.csv --resume"),
        "in use by another spar (pid",
    );
    interrupted(child);
    assert_eq!(locks_in(d), Vec::<String>::new());
}

#[test]
fn racing_writers_of_one_output_never_write_it_together() {
    // Runs started together on one --results: one at a time writes (the others are
    // refused, or find the run complete), whoever removes the lock file as it ends. The
    // file ends with each game once, in order.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for round in 1..=3 {
        let games = 4 * round;
        let children: Vec<_> = (0..6)
            .map(|_| {
                spar()
                    .args(words(&format!(
                        "match --engine name=a --engine name=b --each nodes=300 --quiet \
                         --concurrency 1 --games {games} --results r.csv --resume"
                    )))
                    .current_dir(d)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let o = child.wait_with_output().unwrap();
            let err = stderr(&o);
            assert!(
                o.status.success() || err.contains("in use by another spar"),
                "exit {:?}: {err}",
                o.status.code()
            );
        }
        let text = std::fs::read_to_string(d.join("r.csv")).unwrap();
        assert_eq!(lines_in(&d.join("r.csv")), games + 1, "{text}");
        for (k, line) in text.lines().skip(1).enumerate() {
            assert!(line.starts_with(&format!("{},{},", k / 2, k % 2)), "{text}");
        }
        assert_eq!(locks_in(d), Vec::<String>::new());
    }
}

/// `spar ARGS` started in `d`, once its results file `csv` has `lines` lines.
fn started_in(d: &Path, args: Vec<String>, csv: &str, lines: usize) -> std::process::Child {
    let child = spar()
        .args(args)
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(
        &d.join(csv),
        lines,
        Duration::from_millis(20),
        &format!("spar wrote no {csv}"),
    );
    child
}
