//! Helpers shared by the integration tests that run the `spar` binary as a user would.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The `spar` binary under test.
pub fn spar() -> Command {
    Command::new(env!("CARGO_BIN_EXE_spar"))
}

/// Runs spar with `args` and waits for it.
pub fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    spar().args(args).output().expect("spawn spar")
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
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "expected exit 2; stderr: {err}");
    assert!(err.contains(needle), "expected '{needle}' in: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A file's bytes (empty when it is missing).
pub fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_default()
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
