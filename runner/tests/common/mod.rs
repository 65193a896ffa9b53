//! Helpers shared by the integration tests that run the `spar` binary as a user would.
#![allow(dead_code)]

use std::fmt::Display;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// The `spar` binary under test.
/// The spar under test, with no proxy variable of the machine's environment: the tests'
/// servers are on this machine (`spar submit` would otherwise go through a proxy that a CI
/// machine sets for its downloads; `serve_proxy.rs` sets its own).
pub fn spar() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_spar"));
    for v in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"] {
        c.env_remove(v);
    }
    for v in ["all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
        c.env_remove(v);
    }
    c
}

/// A command line written as one string, split at white space (for arguments without
/// spaces; temporary paths have none).
pub fn argv(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Runs spar with `args` and waits for it.
pub fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    spar().args(args).output().expect("spawn spar")
}

/// Runs spar with `args` in the directory `dir` (relative paths are read and written
/// there) and waits for it.
pub fn run_in<S: AsRef<std::ffi::OsStr>>(dir: &Path, args: &[S]) -> Output {
    spar()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("spawn spar")
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A path as a command-line word.
pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// Asserts a successful run and returns its standard output.
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
    stdout(o)
}

/// Asserts a usage error: exit code 2, one line on stderr containing `needle`, no panic.
pub fn usage_error(o: &Output, needle: &str) {
    check_usage_error("", o, needle);
}

/// Runs spar with each case's arguments and asserts a usage error containing its needle
/// (as [`usage_error`]); a failure names the arguments.
pub fn usage_errors(cases: &[(Vec<&str>, &str)]) {
    for (args, needle) in cases {
        check_usage_error(format!("{args:?}: "), &run(args), needle);
    }
}

fn check_usage_error(context: impl Display, o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{context}expected exit 2; stderr: {err}"
    );
    assert!(
        err.contains(needle),
        "{context}expected '{needle}' in: {err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{context}one line: {err}");
    assert!(!err.contains("panicked"), "{context}{err}");
}

/// A file's bytes (empty when it is missing).
pub fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_default()
}

/// The number of lines in a text file (0 while it is missing).
pub fn lines_in(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// Waits until the text file at `path` has at least `n` lines, checking every `poll`;
/// fails the test after 60 s (`what` says what was waited for).
pub fn wait_for_lines(path: &Path, n: usize, poll: Duration, what: &str) {
    let start = Instant::now();
    while lines_in(path) < n {
        assert!(start.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(poll);
    }
}

/// Sends SIGINT (Ctrl-C) to a running child.
pub fn interrupt(child: &Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Sends SIGINT to a running child, waits for it and asserts exit code 130.
pub fn interrupted(child: Child) -> Output {
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    o
}

/// The results CSV without the duration column (the only one that depends on timing).
pub fn rows_without_time(csv: &Path) -> Vec<String> {
    std::fs::read_to_string(csv)
        .unwrap_or_default()
        .lines()
        .map(|l| l.rsplit_once(',').map_or(l, |(head, _)| head).to_string())
        .collect()
}

/// A PGN with its wall-clock parts (move times, the date) replaced, as bench/identity.sh
/// does.
pub fn pgn_without_time(pgn: &Path) -> String {
    let text = std::fs::read_to_string(pgn).unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.starts_with("[Date ") {
            out.push_str("[Date \"D\"]\n");
            continue;
        }
        // `{+0.31/12 0.120s, n=…}`: drop the `0.120s` words.
        let words: Vec<&str> = line.split(' ').collect();
        let kept: Vec<&str> = words
            .into_iter()
            .map(|w| {
                let newline = w.ends_with('\n');
                let t = w.trim_end_matches('\n').trim_end_matches(',');
                let is_time = t.ends_with('s')
                    && t[..t.len() - 1].split_once('.').is_some_and(|(a, b)| {
                        !a.is_empty()
                            && a.bytes().all(|c| c.is_ascii_digit())
                            && b.len() == 3
                            && b.bytes().all(|c| c.is_ascii_digit())
                    });
                match (is_time, newline) {
                    (true, false) => "T,",
                    (true, true) => "T,\n",
                    (false, _) => w,
                }
            })
            .collect();
        out.push_str(&kept.join(" "));
    }
    out
}

/// The number of games in a PGN file.
pub fn pgn_games(pgn: &Path) -> usize {
    std::fs::read_to_string(pgn)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("[Event "))
        .count()
}

/// A JSON file.
pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json file")).expect("valid json")
}

/// Where stockfish is installed, if it is.
pub fn stockfish() -> Option<&'static str> {
    ["/usr/games/stockfish", "/usr/bin/stockfish"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// The version of python-chess (`python3` with the `chess` package), if it is installed.
pub fn python_chess() -> Option<String> {
    let out = Command::new("python3")
        .args(["-c", "import chess.engine; print(chess.__version__)"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The real client or engine that `test` drives is missing (`what` says which and how to
/// install it). Under `CI=true` that is a failure, not a skip: `.ci/setup` installs it.
/// Otherwise a `NOTICE` goes to the real stderr and the caller returns (skips).
pub fn missing_client(test: &str, what: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{what}: CI=true, so {test} may not skip; .ci/setup installs it (bash .ci/setup)"
    );
    // Written to the real stderr, not through eprintln!, which the test harness captures
    // and hides for passing tests: a skip must be visible.
    let _ = writeln!(std::io::stderr(), "NOTICE: {test} skipped: {what}");
}

/// The Syzygy 3-4-piece tables `.ci/setup` installs (`engine::tablebase::cached_tables`), or
/// a visible skip (a failure under `CI=true`).
pub fn syzygy_tables(test: &str) -> Option<std::path::PathBuf> {
    let dir = engine::tablebase::cached_tables();
    if dir.is_none() {
        missing_client(
            test,
            "no Syzygy 3-4-piece tables (set SPAR_SYZYGY or run .ci/setup)",
        );
    }
    dir
}

/// The Slurm job ids a cluster run recorded in `RUN_DIR/jobs.json` (none before it submits).
pub fn recorded_jobs(run_dir: &Path) -> Vec<String> {
    if !run_dir.join("jobs.json").exists() {
        return Vec::new();
    }
    json(&run_dir.join("jobs.json"))["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j.as_str().unwrap().to_string())
        .collect()
}

/// A variant of a report's statistics: name, games, and per site (label, count, exact sums,
/// buckets).
pub type ReportCounts = (
    String,
    u64,
    Vec<(String, u64, serde_json::Value, serde_json::Value)>,
);

/// What a report's statistics (`stats.json`) count, per variant: its games and, per site,
/// the count, the exact sums and the histogram buckets.
pub fn report_counts(path: &Path) -> Vec<ReportCounts> {
    let json = json(path);
    json["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let sites = v["sites"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    (
                        s["site"].as_str().unwrap().to_string(),
                        s["count"].as_u64().unwrap(),
                        s["exact"].clone(),
                        s["buckets"].clone(),
                    )
                })
                .collect();
            (
                v["name"].as_str().unwrap().to_string(),
                v["games"].as_u64().unwrap(),
                sites,
            )
        })
        .collect()
}

/// `SLURM_CONF` of a running local cluster, started on first use if need be.
pub fn cluster(test: &str) -> Option<String> {
    static CONF: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let conf = CONF.get_or_init(|| {
        let works = |conf: &str| {
            Command::new("sinfo")
                .env("SLURM_CONF", conf)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if let Ok(c) = std::env::var("SLURM_CONF") {
            if works(&c) {
                return Some(c);
            }
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../ci/slurm-local.sh");
        let out = Command::new("bash").args([script, "up"]).output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let conf = text
            .trim()
            .strip_prefix("export SLURM_CONF=")
            .map(str::to_string)?;
        // Started here, stopped when this test process ends (whatever ends it): a watcher
        // in its own session waits for this process, then brings the cluster down.
        let watcher = format!(
            "while kill -0 {} 2>/dev/null; do sleep 1; done; exec bash {script} down",
            std::process::id()
        );
        let _ = Command::new("setsid")
            .args(["-f", "bash", "-c", &watcher])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        (out.status.success() && works(&conf)).then_some(conf)
    });
    if conf.is_none() {
        missing_client(
            test,
            "a local Slurm cluster (ci/slurm-local.sh up did not start one; it needs root and apt)",
        );
    }
    conf.clone()
}

/// A saved `track!` statistics file of one variant (the format `spar report --out` writes):
/// `fired` of 100 `rfp` records are 1, and three `rfp/margin` values shifted by `shift`.
pub fn fixture(name: &str, fired: u64, shift: i64) -> serde_json::Value {
    serde_json::json!({
        "format": "spar-track-stats",
        "version": 1,
        "variants": [{
            "name": name,
            "games": 4,
            "sites": [
                {
                    "site": "rfp", "location": "engine/src/search/alphabeta.rs:469",
                    "count": 100, "mean": fired as f64 / 100.0, "mean_abs": fired as f64 / 100.0,
                    "stddev": 0.5, "min": 0, "max": 1,
                    "exact": {"sum": fired.to_string(), "sum_abs": fired.to_string(), "sum_sq": fired.to_string()},
                    "per_game": {"n": 100.0, "n2": 2600.0, "s": fired as f64, "s2": (fired * fired / 4) as f64, "ns": (25 * fired) as f64},
                    "buckets": [{"lo": 0, "hi": 0, "count": 100 - fired}, {"lo": 1, "hi": 1, "count": fired}]
                },
                {
                    "site": "rfp/margin", "location": "engine/src/search/alphabeta.rs:473",
                    "count": 3, "mean": (100 + shift) as f64, "mean_abs": (100 + shift) as f64,
                    "stddev": 40.0, "min": 3, "max": 200 + shift,
                    "buckets": [
                        {"lo": 3, "hi": 3, "count": 1},
                        {"lo": 64, "hi": 79, "count": 1},
                        {"lo": 128, "hi": 159, "count": 1}
                    ]
                }
            ]
        }]
    })
}
