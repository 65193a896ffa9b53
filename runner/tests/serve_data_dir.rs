//! A data directory that `spar serve` must not adopt (issue 56): another program's SQLite
//! database, a text file or a directory named `spar.db`, a newer spar's database. Each is
//! refused at start with exit 2 and a message naming the file, and the directory is left
//! byte for byte as it was: no `runs/`, no lock file made or rewritten.

mod common;
mod serve_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every file under `dir` with its bytes, and every directory (as `None`).
fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut all = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                all.insert(name, None);
                stack.push(p);
            } else {
                all.insert(name, Some(std::fs::read(&p).unwrap()));
            }
        }
    }
    all
}

/// `spar serve --data-dir DATA` that must refuse to start: its exit code and stderr.
fn refused(data: &Path) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spar"))
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code(), err);
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("spar serve started on {}", data.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sqlite(path: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(sql).unwrap();
}

#[test]
fn a_data_directory_spar_may_not_adopt_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    type Make = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Make, &str)> = vec![
        (
            "foreign",
            Box::new(|d: &Path| {
                sqlite(
                    &d.join("spar.db"),
                    "CREATE TABLE notes (id INTEGER, body TEXT); \
                     INSERT INTO notes VALUES (1, 'keep me');",
                )
            }),
            "another program's SQLite database",
        ),
        (
            "text",
            Box::new(|d: &Path| std::fs::write(d.join("spar.db"), "just some notes\n").unwrap()),
            "not a readable spar serve database",
        ),
        (
            "directory",
            Box::new(|d: &Path| std::fs::create_dir(d.join("spar.db")).unwrap()),
            "not a file",
        ),
        (
            "newer",
            Box::new(|d: &Path| {
                // spar's own database from a newer spar, and its lock file.
                sqlite(
                    &d.join("spar.db"),
                    "CREATE TABLE runs (id INTEGER PRIMARY KEY); PRAGMA user_version = 999; \
                     PRAGMA application_id = 1397768530;",
                );
                std::fs::write(d.join("serve.lock"), "pid 12345\n").unwrap();
            }),
            "schema version 999",
        ),
    ];
    for (what, make, needle) in cases {
        let data = dir.path().join(what);
        std::fs::create_dir(&data).unwrap();
        make(&data);
        let before = snapshot(&data);
        let (code, err) = refused(&data);
        assert_eq!(code, Some(2), "{what}: {err}");
        assert!(err.contains(needle), "{what}: {err}");
        assert!(err.contains("spar.db"), "{what}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
        assert_eq!(snapshot(&data), before, "{what}: the directory changed");
    }
}

#[test]
fn an_orphan_run_directory_is_left_untouched_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let orphan = data.join("runs/1");
    std::fs::create_dir_all(&orphan).unwrap();
    std::fs::write(orphan.join("results.csv"), "another match's games\n").unwrap();
    let before = snapshot(&orphan);
    let log = dir.path().join("serve.log");
    let server = serve_common::Server::start(&data, &log);
    let v = server.submit_little_match();
    assert_eq!(v["id"], 2, "{v}");
    let v = server.wait(2, "finished", |v| serve_common::state(v) == "finished");
    assert!(v["dir"].as_str().unwrap().ends_with("runs/2"), "{v}");
    assert_eq!(snapshot(&orphan), before, "the orphan changed");
    assert!(serve_common::read(&log).contains("has no run in the database"));
}
