//! Issue 33, class 3: a table file that is no regular file (a FIFO, whose open blocks until
//! a writer comes; a directory named like a table) is refused before any open: `match --tb`,
//! `datagen --tb` and an engine's `option.SyzygyPath=` end at once with one line naming it
//! (exit 2), and `spar uci` answers `setoption name SyzygyPath` with an `info string` and
//! goes on answering `isready` and `go`. The same holds for the other files spar reads
//! (an `option.EvalFile=` network, a `params=` file). Every run here has a timeout, so a
//! regression fails instead of hanging.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::*;

/// Far longer than any of these refusals takes, far shorter than a hang.
const LIMIT: Duration = Duration::from_secs(60);

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// Runs spar with `args`, failing the test (and killing spar) if it runs past [`LIMIT`].
fn run_limited(args: &[String]) -> Output {
    let child = spar()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn spar");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(LIMIT) {
        Ok(out) => out.expect("spar ran"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("spar {args:?} hung (killed after {LIMIT:?})");
        }
    }
}

/// Makes a FIFO at `path`; false (the caller skips, with a notice) where mkfifo is missing.
fn mkfifo(path: &Path) -> bool {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("NOTICE: no mkfifo here; the FIFO cases are skipped");
    }
    made
}

/// A copy of a few real tables in a new directory, plus `KPvK.rtbw` made a FIFO; `None`
/// where there are no tables or no mkfifo.
fn tables_with_a_fifo(test: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let tables = syzygy_tables(test)?;
    let dir = tempfile::tempdir().unwrap();
    for name in ["KRvK.rtbw", "KRvK.rtbz", "KQvK.rtbw", "KQvK.rtbz"] {
        std::fs::copy(tables.join(name), dir.path().join(name)).unwrap();
    }
    let fifo = dir.path().join("KPvK.rtbw");
    mkfifo(&fifo).then_some((dir, fifo))
}

/// Asserts a usage error naming `file` as no regular file, and that nothing was written.
fn refused_naming(o: &Output, file: &Path, out: &Path) {
    usage_error(o, "not a regular file");
    assert!(
        stderr(o).contains(path_str(file)),
        "the message names {}: {}",
        file.display(),
        stderr(o)
    );
    assert!(!out.exists(), "{} was written", out.display());
}

#[test]
fn a_fifo_among_the_tables_of_match_and_datagen_is_refused_at_once() {
    let Some((dir, fifo)) = tables_with_a_fifo("a_fifo_among_the_tables") else {
        return;
    };
    let tb = path_str(dir.path());
    let out = dir.path().join("out.csv");
    let o = run_limited(&words(&format!(
        "match --engine name=a --engine name=b --each nodes=300 --games 2 --quiet --tb {tb} \
         --results {}",
        path_str(&out)
    )));
    refused_naming(&o, &fifo, &out);
    assert!(!dir.path().join("out.csv.lock").exists());
    let vf = dir.path().join("out.vf");
    let o = run_limited(&words(&format!(
        "datagen --games 1 --nodes 300 --tb {tb} --out {}",
        path_str(&vf)
    )));
    refused_naming(&o, &fifo, &vf);
    // A builtin engine's SyzygyPath: the same refusal.
    let o = run_limited(&words(&format!(
        "match --engine name=a option.SyzygyPath={tb} --engine name=b --each nodes=300 \
         --games 2 --quiet --results {}",
        path_str(&out)
    )));
    refused_naming(&o, &fifo, &out);
}

#[test]
fn a_directory_named_like_a_table_is_refused() {
    let Some(tables) = syzygy_tables("a_directory_named_like_a_table") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(tables.join("KRvK.rtbw"), dir.path().join("KRvK.rtbw")).unwrap();
    let odd = dir.path().join("KQvK.rtbz");
    std::fs::create_dir(&odd).unwrap();
    let out = dir.path().join("g.pgn");
    let o = run_limited(&words(&format!(
        "match --engine name=a --engine name=b --each nodes=300 --games 2 --quiet --tb {} \
         --pgnout {}",
        path_str(dir.path()),
        path_str(&out)
    )));
    refused_naming(&o, &odd, &out);
}

#[test]
fn a_fifo_network_or_params_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("net.nnue");
    if !mkfifo(&fifo) {
        return;
    }
    let out = dir.path().join("r.csv");
    for engine in ["option.EvalFile", "params"] {
        let o = run_limited(&words(&format!(
            "match --engine name=a {engine}={} --engine name=b --each nodes=300 --games 2 \
             --quiet --results {}",
            path_str(&fifo),
            path_str(&out)
        )));
        refused_naming(&o, &fifo, &out);
    }
    let vf = dir.path().join("o.vf");
    let o = run_limited(&words(&format!(
        "datagen --games 1 --nodes 300 --eval-file {} --out {}",
        path_str(&fifo),
        path_str(&vf)
    )));
    refused_naming(&o, &fifo, &vf);
}

/// `spar uci` with its output read on a thread: each answer waited for with a timeout.
struct Session {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Session {
    fn start() -> Session {
        let mut child = spar()
            .arg("uci")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start spar uci");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session {
            stdin: child.stdin.take().unwrap(),
            child,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("spar uci reads its input");
    }

    /// The lines up to and including the first that `done` accepts; fails the test after
    /// [`LIMIT`].
    fn until(&mut self, done: impl Fn(&str) -> bool) -> Vec<String> {
        let mut got = Vec::new();
        loop {
            match self.lines.recv_timeout(LIMIT) {
                Ok(line) => {
                    let end = done(&line);
                    got.push(line);
                    if end {
                        return got;
                    }
                }
                Err(_) => panic!("spar uci stopped answering; it said: {got:?}"),
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn uci_answers_a_fifo_among_the_tables_with_an_info_string_and_goes_on() {
    let Some((dir, fifo)) = tables_with_a_fifo("uci_answers_a_fifo") else {
        return;
    };
    let mut uci = Session::start();
    uci.send("uci");
    uci.until(|l| l == "uciok");
    uci.send(&format!(
        "setoption name SyzygyPath value {}",
        path_str(dir.path())
    ));
    uci.send("isready");
    let answer = uci.until(|l| l == "readyok");
    assert!(
        answer.len() == 2
            && answer[0].starts_with("info string SyzygyPath")
            && answer[0].contains(path_str(&fifo))
            && answer[0].contains("not a regular file")
            && answer[0].ends_with("keeping <empty>"),
        "{answer:?}"
    );
    // The engine still searches (and the tables it was refused are not in use).
    uci.send("position fen 8/8/8/4k3/8/8/8/4K2R w - - 0 1");
    uci.send("go nodes 1000");
    let search = uci.until(|l| l.starts_with("bestmove"));
    assert!(
        search.last().unwrap().split_whitespace().nth(1).is_some(),
        "{search:?}"
    );
    // The same directory without the FIFO: its tables are taken.
    std::fs::remove_file(&fifo).unwrap();
    uci.send(&format!(
        "setoption name SyzygyPath value {}",
        path_str(dir.path())
    ));
    uci.send("isready");
    let answer = uci.until(|l| l == "readyok");
    assert!(
        answer[0].starts_with("info string Syzygy: 4 files"),
        "{answer:?}"
    );
    uci.send("quit");
}
