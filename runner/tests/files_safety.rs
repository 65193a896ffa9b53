//! Issue 14, "nothing lost, nothing silently wrong", through the binary: an output that is
//! also an input or another output is refused before any work; special files are written
//! in place, never replaced; outputs are checked before the games; `--resume` refuses a
//! run with other options; after a kill at every write, `--resume` ends with the files of
//! an uninterrupted run; a closed or full standard output is an error, not a panic.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use common::*;

const KILL: &str = "SPAR_TEST_KILL_AT";

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// `spar match` between two cheap engines, plus `extra`.
fn match_args(extra: &str) -> Vec<String> {
    let mut a = words(
        "match --engine name=a --engine name=b option.rfp_margin=100 --each nodes=300 --quiet --concurrency 1",
    );
    a.extend(words(extra));
    a
}

fn p(path: &Path) -> String {
    path_str(path).to_string()
}

#[test]
fn colliding_paths_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| p(&dir.path().join(name));
    let precious = b"precious, must survive\n";
    for name in ["R.csv", "P.txt", "D.txt", "S.txt", "B.epd", "stats.json"] {
        std::fs::write(dir.path().join(name), precious).unwrap();
    }
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            match_args(&format!("--games 2 --results {} --json {}", d("new.csv"), d("new.csv"))),
            "is also the --results file".into(),
        ),
        (
            words(&format!(
                "match --engine name=a --engine name=c params={} --each nodes=300 --games 2 --quiet --json {}",
                d("P.txt"),
                d("P.txt")
            )),
            "is also the --engine params= file".into(),
        ),
        (
            match_args(&format!("--games 2 --results {} --pgnout {}", d("x"), d("x"))),
            "is also the --results file".into(),
        ),
        (
            match_args(&format!(
                "--games 2 --pgnout {} --dump-positions {} format=both",
                d("dump.vf.txt"),
                d("dump.vf")
            )),
            "is also the --pgnout file".into(),
        ),
        (
            match_args(&format!("--games 2 --json {} --book {}", d("B.epd"), d("B.epd"))),
            "is also the --book file".into(),
        ),
        (
            words(&format!("texel --data {} --out {}", d("D.txt"), d("D.txt"))),
            "is also the --data file".into(),
        ),
        (
            words(&format!(
                "tune --params {} --out {} --each nodes=300 --iterations 1",
                d("S.txt"),
                d("S.txt")
            )),
            "is also the --params file".into(),
        ),
        (
            words(&format!(
                "datagen --out {} --book {} --games 1 --nodes 300",
                d("B.epd"),
                d("B.epd")
            )),
            "is also the --book file".into(),
        ),
        (
            // Text format: the index is FILE.idx.
            words(&format!(
                "datagen --out {} --format text --book {} --games 1 --nodes 300",
                d("B"),
                d("B.idx")
            )),
            "is also the --book file".into(),
        ),
        (
            words(&format!("report --from {} --out {}", d("stats.json"), d(""))),
            "is also the --from file".into(),
        ),
    ];
    for (args, needle) in cases {
        let o = run(&args);
        usage_error(&o, &needle);
        assert!(
            stderr(&o).contains("give them different names"),
            "{}",
            stderr(&o)
        );
        for name in ["R.csv", "P.txt", "D.txt", "S.txt", "B.epd", "stats.json"] {
            assert_eq!(
                bytes(&dir.path().join(name)),
                precious,
                "{args:?} changed {name}"
            );
        }
        for name in [
            "new.csv",
            "x",
            "dump.vf",
            "dump.vf.txt",
            "B",
            "S.txt.rs",
            "D.rs",
        ] {
            assert!(!dir.path().join(name).exists(), "{args:?} wrote {name}");
        }
    }
}

/// A small trajectory for `spar tune --plot`.
fn trajectory(dir: &Path) -> PathBuf {
    let csv = dir.join("t.csv");
    std::fs::write(
        &csv,
        "iteration,games,rfp_margin,c_rfp_margin,r_rfp_margin\n0,0,75,,\n1,4,76,2,0.1\n",
    )
    .unwrap();
    csv
}

#[cfg(unix)]
#[test]
fn special_files_are_written_in_place_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let csv = trajectory(dir.path());

    // A FIFO: written through, still a FIFO afterwards.
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap_or_default())
    };
    let o = run(&["tune", "--plot", path_str(&csv), "--svg", path_str(&fifo)]);
    if !std::fs::metadata(&fifo).unwrap().file_type().is_fifo() {
        // Unblock the reader, then fail.
        let _ = std::fs::read(&fifo);
        panic!("the FIFO was replaced by a regular file: {}", stderr(&o));
    }
    ok(&o);
    assert!(reader.join().unwrap().contains("<svg"));

    // A directory is an error before anything is written.
    let o = run(&[
        "tune",
        "--plot",
        path_str(&csv),
        "--svg",
        path_str(dir.path()),
    ]);
    usage_error(&o, "is a directory");

    // A full device (a private copy of /dev/full, where mknod is allowed): the write fails
    // with a clear error and exit 1, and the device stays a device.
    let full = dir.path().join("full");
    let made = std::process::Command::new("mknod")
        .args([path_str(&full), "c", "1", "7"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("note: mknod not permitted here; the /dev/full case is skipped");
        return;
    }
    let o = run(&["tune", "--plot", path_str(&csv), "--svg", path_str(&full)]);
    let kind = std::fs::metadata(&full).unwrap().file_type();
    assert!(
        kind.is_char_device(),
        "the device was replaced: {}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("No space left on device"),
        "{}",
        stderr(&o)
    );
    let js = p(&full);
    let o = run(&match_args(&format!("--games 2 --json {js}")));
    assert!(std::fs::metadata(&full)
        .unwrap()
        .file_type()
        .is_char_device());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "cannot write --json {js}: No space left on device"
        )),
        "{}",
        stderr(&o)
    );
}

#[test]
fn outputs_are_checked_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| p(&dir.path().join(name));
    let data = dir.path().join("data.txt");
    std::fs::write(
        &data,
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 | 30 | 0.5\n",
    )
    .unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            match_args(&format!("--games 2 --results {} --json /nonexistent/dir/x.json", d("r.csv"))),
            "--json /nonexistent/dir/x.json: the directory /nonexistent/dir does not exist",
        ),
        (
            match_args(&format!("--games 2 --results {} --json {}", d("r.csv"), d(""))),
            "is a directory",
        ),
        (
            match_args(&format!("--games 2 --results {} --pgnout /nonexistent/x.pgn", d("r.csv"))),
            "--pgnout /nonexistent/x.pgn",
        ),
        (
            match_args(&format!(
                "--games 2 --results {} --dump-positions /nonexistent/x.vf",
                d("r.csv")
            )),
            "--dump-positions /nonexistent/x.vf",
        ),
        (
            match_args("--games 2 --results /nonexistent/r.csv"),
            "--results /nonexistent/r.csv",
        ),
        (
            words(&format!(
                "tune --no-verify --param rfp_margin --each nodes=300 --iterations 2 --pairs-per-iteration 1 --quiet --csv {} --out /nonexistent/t.txt",
                d("t.csv")
            )),
            "--out /nonexistent/t.txt",
        ),
        (
            words(&format!(
                "texel --data {} --epochs 1 --out /nonexistent/w.txt",
                path_str(&data)
            )),
            "--out /nonexistent/w.txt",
        ),
        (
            words(&format!("texel --data {} --epochs 1 --out {}", path_str(&data), d(""))),
            "is a directory",
        ),
        (
            words("datagen --out /nonexistent/g.vf --games 1 --nodes 300"),
            "--out /nonexistent/g.vf",
        ),
    ];
    for (args, needle) in cases {
        let o = run(&args);
        usage_error(&o, needle);
        for name in ["r.csv", "t.csv", "w.rs"] {
            assert!(!dir.path().join(name).exists(), "{args:?} did work: {name}");
        }
    }
}

#[test]
fn resume_refuses_another_run() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("R.csv");
    let base = format!("--results {}", p(&csv));
    ok(&run(&match_args(&format!("--games 2 --seed 1 {base}"))));
    let before = bytes(&csv);
    for (extra, needle) in [
        (
            "--games 4 --seed 2 --resume",
            format!(
                "--resume: --seed 2 differs from the run in {} (seed 1); resume with the same options or start a new --results file",
                p(&csv)
            ),
        ),
        (
            "--games 4 --seed 1 --resume NODES",
            "--engine nodes=301 name=a differs".to_string(),
        ),
        (
            "--games 4 --seed 1 --resume --maxmoves 30",
            "--resign/--draw/--maxmoves".to_string(),
        ),
    ] {
        let args: Vec<String> = match_args(&format!("{base} {}", extra.replace("NODES", "")))
            .into_iter()
            .map(|w| {
                if extra.contains("NODES") && w == "nodes=300" {
                    "nodes=301".to_string()
                } else {
                    w
                }
            })
            .collect();
        let o = run(&args);
        usage_error(&o, &needle);
        assert_eq!(bytes(&csv), before, "{extra}: the results file changed");
    }
    // The same run goes on, at another concurrency and to more games.
    let mut args = match_args(&format!("{base} --games 4 --seed 1 --resume"));
    let c = args.iter().position(|w| w == "--concurrency").unwrap();
    args[c + 1] = "2".into();
    assert!(args
        .windows(2)
        .any(|w| w[0] == "--concurrency" && w[1] == "2"));
    ok(&run(&args));
    assert_eq!(rows_without_time(&csv).len(), 5);
    // A run started by an older spar (no record) resumes with a warning.
    std::fs::remove_file(dir.path().join("R.csv.run.json")).unwrap();
    let mut args = match_args(&format!("{base} --games 6 --seed 1 --resume"));
    args.retain(|w| w != "--quiet");
    let o = run(&args);
    ok(&o);
    assert!(stderr(&o).contains("has no run record"), "{}", stderr(&o));
    assert_eq!(rows_without_time(&csv).len(), 7);

    // spar tune: --iterations defines the schedule.
    let t = dir.path().join("t.csv");
    let tune = |extra: &str| {
        run(&words(&format!(
            "tune --no-verify --param rfp_margin --each nodes=300 --pairs-per-iteration 1 --concurrency 1 --quiet --csv {} {extra}",
            p(&t)
        )))
    };
    ok(&tune("--iterations 1"));
    let before = bytes(&t);
    usage_error(
        &tune("--iterations 2 --resume"),
        "--iterations 2 differs from the run in",
    );
    usage_error(
        &tune("--iterations 1 --seed 5 --resume"),
        "--seed 5 differs",
    );
    assert_eq!(bytes(&t), before);

    // spar datagen: --nodes defines the games.
    let g = dir.path().join("g.vf");
    let datagen = |extra: &str| {
        run(&words(&format!(
            "datagen --out {} --quiet --concurrency 1 {extra}",
            p(&g)
        )))
    };
    ok(&datagen("--nodes 300 --games 1"));
    let before = bytes(&g);
    usage_error(
        &datagen("--nodes 400 --games 2 --resume"),
        "--nodes 400 differs from the run in",
    );
    usage_error(
        &datagen("--nodes 300 --games 2 --resume --format both"),
        "--format both differs",
    );
    assert_eq!(bytes(&g), before);
    ok(&datagen("--nodes 300 --games 2 --resume"));
}

/// The files of a match with every output, in `dir`.
struct MatchRun {
    dir: PathBuf,
}

impl MatchRun {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn args(&self, games: u32, resume: bool) -> Vec<String> {
        let mut a = match_args(&format!(
            "--games {games} --seed 4 --pgnout {} --results {} --json {} --dump-positions {} format=both min-ply=0",
            p(&self.path("g.pgn")),
            p(&self.path("r.csv")),
            p(&self.path("s.json")),
            p(&self.path("d.vf")),
        ));
        if resume {
            a.push("--resume".into());
        }
        a
    }

    fn play(&self, games: u32, resume: bool, kill_at: Option<u32>) -> Output {
        let mut cmd = spar();
        cmd.args(self.args(games, resume));
        match kill_at {
            Some(k) => cmd.env(KILL, k.to_string()),
            None => cmd.env_remove(KILL),
        };
        cmd.output().expect("spawn spar")
    }

    /// Everything that must match an uninterrupted run.
    fn files(&self) -> (String, Vec<String>, Vec<u8>, Vec<u8>, Vec<u8>) {
        (
            pgn_without_time(&self.path("g.pgn")),
            rows_without_time(&self.path("r.csv")),
            bytes(&self.path("d.vf")),
            bytes(&self.path("d.vf.txt")),
            bytes(&self.path("d.vf.txt.idx")),
        )
    }

    fn summary(&self) -> Vec<serde_json::Value> {
        let j = json(&self.path("s.json"));
        ["wins", "draws", "losses", "ptnml", "games", "terminations"]
            .iter()
            .map(|k| j[*k].clone())
            .collect()
    }
}

fn truncate_by(path: &Path, n: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let len = f.metadata().unwrap().len();
    f.set_len(len.saturating_sub(n)).unwrap();
}

#[test]
fn resume_repairs_the_pgn_and_the_dump_to_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let reference = MatchRun {
        dir: dir.path().join("ref"),
    };
    std::fs::create_dir(&reference.dir).unwrap();
    ok(&reference.play(4, false, None));
    let want = reference.files();
    assert_eq!(pgn_games(&reference.path("g.pgn")), 4);

    // A kill after a pair's games reached the PGN and the dump but before its CSV rows:
    // the CSV (the record) loses its last pair; the PGN and dump must not keep it twice.
    let a = MatchRun {
        dir: dir.path().join("a"),
    };
    std::fs::create_dir(&a.dir).unwrap();
    ok(&a.play(4, false, None));
    let csv = std::fs::read_to_string(a.path("r.csv")).unwrap();
    let kept: Vec<&str> = csv.lines().take(3).collect();
    std::fs::write(a.path("r.csv"), kept.join("\n") + "\n").unwrap();
    ok(&a.play(4, true, None));
    assert_eq!(pgn_games(&a.path("g.pgn")), 4, "no game twice in the PGN");
    assert!(a.files() == want, "files differ from the uninterrupted run");
    assert_eq!(a.summary(), reference.summary());

    // A PGN that lost its last game (shorter than the CSV): the pair is dropped from the
    // CSV and played again.
    let b = MatchRun {
        dir: dir.path().join("b"),
    };
    std::fs::create_dir(&b.dir).unwrap();
    ok(&b.play(4, false, None));
    truncate_by(&b.path("g.pgn"), 30);
    ok(&b.play(4, true, None));
    assert!(b.files() == want, "files differ from the uninterrupted run");
    assert_eq!(b.summary(), reference.summary());

    // A PGN holding other games than the run's is refused, not cut.
    let c = MatchRun {
        dir: dir.path().join("c"),
    };
    std::fs::create_dir(&c.dir).unwrap();
    ok(&c.play(2, false, None));
    let mut pgn = bytes(&reference.path("g.pgn"));
    pgn.extend(bytes(&c.path("g.pgn")));
    std::fs::write(c.path("g.pgn"), &pgn).unwrap();
    std::fs::remove_file(c.path("r.csv.run.json")).unwrap();
    usage_error(&c.play(4, true, None), "they are not the same run's files");
    assert_eq!(bytes(&c.path("g.pgn")), pgn);

    // A PGN that is not there at all (a wrong path, a file left on another machine) is
    // refused: the CSV's finished pairs are kept, not dropped to be played again.
    let d = MatchRun {
        dir: dir.path().join("d"),
    };
    std::fs::create_dir(&d.dir).unwrap();
    ok(&d.play(2, false, None));
    let csv = bytes(&d.path("r.csv"));
    std::fs::rename(d.path("g.pgn"), d.path("moved.pgn")).unwrap();
    usage_error(
        &d.play(4, true, None),
        "does not exist, but the results file",
    );
    assert_eq!(
        bytes(&d.path("r.csv")),
        csv,
        "the results file is unchanged"
    );
    assert!(!d.path("g.pgn").exists(), "no PGN is created");
    std::fs::rename(d.path("moved.pgn"), d.path("g.pgn")).unwrap();
    // The same for the position dump.
    std::fs::rename(d.path("d.vf"), d.path("moved.vf")).unwrap();
    usage_error(&d.play(4, true, None), "--dump-positions");
    assert_eq!(
        bytes(&d.path("r.csv")),
        csv,
        "the results file is unchanged"
    );
    std::fs::rename(d.path("moved.vf"), d.path("d.vf")).unwrap();
    ok(&d.play(4, true, None));
    assert!(d.files() == want, "files differ from the uninterrupted run");
}

#[test]
fn a_match_killed_at_every_write_resumes_to_the_uninterrupted_files() {
    const GAMES: u32 = 6;
    // Per pair: 2 dump games, 2 PGN games, 2 CSV rows.
    const WRITES: u32 = 6 * GAMES / 2;
    let dir = tempfile::tempdir().unwrap();
    let reference = MatchRun {
        dir: dir.path().join("ref"),
    };
    std::fs::create_dir(&reference.dir).unwrap();
    ok(&reference.play(GAMES, false, None));
    let want = reference.files();
    let summary = reference.summary();

    for k in 1..=WRITES {
        let m = MatchRun {
            dir: dir.path().join(format!("k{k}")),
        };
        std::fs::create_dir(&m.dir).unwrap();
        let o = m.play(GAMES, false, Some(k));
        assert_eq!(
            o.status.code(),
            Some(137),
            "killed after write {k}: {}",
            stderr(&o)
        );
        ok(&m.play(GAMES, true, None));
        assert!(m.files() == want, "killed after write {k}: files differ");
        assert_eq!(m.summary(), summary, "killed after write {k}");
    }
    // Runs killed again and again while resuming, one with a torn PGN tail on top.
    for (k, tear) in [(7, false), (9, true), (11, false), (13, true)] {
        let m = MatchRun {
            dir: dir.path().join(format!("chain{k}")),
        };
        std::fs::create_dir(&m.dir).unwrap();
        let mut runs = 0;
        loop {
            runs += 1;
            assert!(runs < 12, "chain {k} makes no progress");
            let o = m.play(GAMES, true, Some(k));
            if o.status.success() {
                break;
            }
            assert_eq!(o.status.code(), Some(137), "chain {k}: {}", stderr(&o));
            if tear && runs == 1 {
                truncate_by(&m.path("g.pgn"), 7);
            }
        }
        assert!(runs > 1);
        assert!(m.files() == want, "chain {k}: files differ");
        assert_eq!(m.summary(), summary, "chain {k}");
    }
}

#[test]
fn datagen_and_tune_killed_at_every_write_resume_to_the_uninterrupted_files() {
    let dir = tempfile::tempdir().unwrap();
    let datagen = |out: &Path, resume: bool, kill_at: Option<u32>| {
        let mut cmd = spar();
        cmd.args(words(&format!(
            "datagen --out {} --games 4 --nodes 300 --format both --concurrency 2 --quiet",
            p(out)
        )));
        if resume {
            cmd.arg("--resume");
        }
        match kill_at {
            Some(k) => cmd.env(KILL, k.to_string()),
            None => cmd.env_remove(KILL),
        };
        cmd.output().unwrap()
    };
    let files = |out: &Path| {
        ["", ".txt", ".txt.idx"].map(|s| bytes(&PathBuf::from(format!("{}{s}", p(out)))))
    };
    let reference = dir.path().join("ref.vf");
    ok(&datagen(&reference, false, None));
    let want = files(&reference);
    for k in 1..=4 {
        let out = dir.path().join(format!("k{k}.vf"));
        let o = datagen(&out, false, Some(k));
        assert_eq!(
            o.status.code(),
            Some(137),
            "datagen write {k}: {}",
            stderr(&o)
        );
        ok(&datagen(&out, true, None));
        assert!(
            files(&out) == want,
            "datagen killed after write {k}: files differ"
        );
    }

    let tune = |csv: &Path, resume: bool, kill_at: Option<u32>| {
        let mut cmd = spar();
        cmd.args(words(&format!(
            "tune --no-verify --param rfp_margin --param lmr_base --each nodes=300 --iterations 3 --pairs-per-iteration 1 --seed 3 --concurrency 1 --quiet --csv {}",
            p(csv)
        )));
        if resume {
            cmd.arg("--resume");
        }
        match kill_at {
            Some(k) => cmd.env(KILL, k.to_string()),
            None => cmd.env_remove(KILL),
        };
        cmd.output().unwrap()
    };
    let reference = dir.path().join("ref.csv");
    ok(&tune(&reference, false, None));
    for k in 1..=3 {
        let csv = dir.path().join(format!("t{k}.csv"));
        let o = tune(&csv, false, Some(k));
        assert_eq!(o.status.code(), Some(137), "tune row {k}: {}", stderr(&o));
        ok(&tune(&csv, true, None));
        assert_eq!(bytes(&csv), bytes(&reference), "tune killed after row {k}");
    }
}

#[test]
fn a_closed_or_full_stdout_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let csv = trajectory(dir.path());
    let svg = dir.path().join("t.svg");
    // Closed by the reader before spar starts (no race with its first write): exit 141,
    // quietly.
    let (read_end, write_end) = nix::unistd::pipe().unwrap();
    drop(read_end);
    let o = spar()
        .args(["tune", "--plot", path_str(&csv), "--svg", path_str(&svg)])
        .stdout(Stdio::from(write_end))
        .output()
        .unwrap();
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(141), "{}", stderr(&o));
    assert!(svg.exists());
    // Full: one error line, exit 1.
    let games = dir.path().join("g.vf");
    ok(&run(&[
        "datagen",
        "--out",
        path_str(&games),
        "--games",
        "1",
        "--nodes",
        "300",
        "--quiet",
    ]));
    for args in [
        vec!["tune", "--plot", path_str(&csv), "--svg", path_str(&svg)],
        vec!["datagen", "--inspect", path_str(&games)],
    ] {
        let o = spar()
            .args(&args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("cannot write to standard output"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

/// Starts `first`, waits until `written` holds at least `lines` lines, and checks that
/// each of `seconds` is refused (exit 2, naming its flag and "in use by another spar")
/// while the first goes on running; then kills the first with SIGKILL.
fn refused_while_running(
    first: &[String],
    written: &Path,
    lines: usize,
    seconds: &[(Vec<String>, &str)],
) {
    let mut child = spar()
        .args(first)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_lines(
        written,
        lines,
        std::time::Duration::from_millis(20),
        "the first run wrote nothing",
    );
    for (second, flag) in seconds {
        let o = run(second);
        usage_error(&o, "in use by another spar (pid");
        assert!(stderr(&o).contains(flag), "{second:?}: {}", stderr(&o));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the first run ended early"
    );
    child.kill().unwrap(); // SIGKILL: the kernel frees its locks
    child.wait().unwrap();
}

/// Issue 24, class 8: every output a long local run appends to and resumes from has one
/// writer: a match's or SPRT's `--results`, `--pgnout` and `--dump-positions`, a tune's
/// `--csv` (a trainer's `--out`: train_cli.rs). A second run is refused before any work;
/// a `kill -9`'d first run leaves no lock, so `--resume` works at once and the files are
/// whole.
#[test]
fn one_writer_per_output_and_no_lock_left_by_a_killed_run() {
    let dir = tempfile::tempdir().unwrap();
    let (r, g, d) = (
        dir.path().join("r.csv"),
        dir.path().join("g.pgn"),
        dir.path().join("d.vf"),
    );
    let files = format!(
        "--results {} --pgnout {} --dump-positions {}",
        p(&r),
        p(&g),
        p(&d)
    );
    let long = match_args(&format!("--games 100000 {files}"));
    let seconds = [
        (match_args(&format!("--games 4 --results {} --resume", p(&r))), "--results"),
        (
            words(&format!(
                "sprt --engine name=a --engine name=b --each nodes=300 --quiet --results {} --resume",
                p(&r)
            )),
            "--results",
        ),
        (match_args(&format!("--games 4 --pgnout {}", p(&g))), "--pgnout"),
        (match_args(&format!("--games 4 --dump-positions {}", p(&d))), "--dump-positions"),
    ];
    // A lock file is no other output's file (the lock would overwrite it).
    let o = run(&match_args(&format!(
        "--games 2 --results {} --pgnout {}.lock",
        p(&r),
        p(&r)
    )));
    usage_error(&o, "is also the --results lock file");
    refused_while_running(&long, &r, 2, &seconds[..2]);
    // The refused runs wrote nothing: the first run's files resume whole, at once.
    // One row per game; the resume keeps whole pairs.
    let games = (lines_in(&r) - 1) / 2 * 2 + 2;
    ok(&run(&match_args(&format!(
        "--games {games} {files} --resume"
    ))));
    assert_eq!(pgn_games(&g), games);
    assert_eq!(lines_in(&r), games + 1);
    // Each of the other outputs is locked on its own (here held by a resumed run).
    let long = match_args(&format!("--games 100000 {files} --resume"));
    refused_while_running(&long, &r, games + 2, &seconds[2..]);

    let csv = dir.path().join("t.csv");
    let tune = |iterations: &str, extra: &str| {
        words(&format!(
            "tune --no-verify --param rfp_margin --each nodes=300 --iterations {iterations} --pairs-per-iteration 1 --concurrency 1 --quiet --csv {} {extra}",
            p(&csv)
        ))
    };
    refused_while_running(
        &tune("100000", ""),
        &csv,
        3,
        &[(tune("3", "--resume"), "--csv"), (tune("3", ""), "--csv")],
    );
    // The lock is free at once: the resume (same --iterations: it defines the run) goes on
    // from the last whole row.
    let rows = lines_in(&csv);
    let child = spar()
        .args(tune("100000", "--resume"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(
        &csv,
        rows + 1,
        std::time::Duration::from_millis(20),
        "the resume wrote nothing",
    );
    interrupted(child);
    let text = std::fs::read_to_string(&csv).unwrap();
    for (k, line) in text.lines().skip(1).enumerate() {
        assert!(line.starts_with(&format!("{k},")), "row {k}: {text}");
    }
}

/// Issue 24, class 12 (the class, beyond datagen's net): a resume compares the files a run
/// names by their bytes, not their paths: `params=` files, `option.EvalFile=` nets and the
/// book of a match, tune or datagen. A byte-identical copy at another path resumes; a
/// changed file at the same path is refused, naming the option.
#[test]
fn resume_compares_the_files_of_a_run_by_their_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    std::fs::create_dir(&one).unwrap();
    std::fs::create_dir(&two).unwrap();
    let book = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n\
                rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n";
    let net = engine::nnue::placeholder::material_network(16).to_bytes();
    for d in [&one, &two] {
        std::fs::write(d.join("p.txt"), "rfp_margin, 80\n").unwrap();
        std::fs::write(d.join("b.epd"), book).unwrap();
        std::fs::write(d.join("n.nnue"), &net).unwrap();
    }
    let r = dir.path().join("r.csv");
    let game = |d: &Path, games: u32, resume: bool| {
        let mut a = words(&format!(
            "match --engine name=a params={} option.EvalFile={} --engine name=b --each nodes=300 \
             --quiet --concurrency 1 --book {} --games {games} --results {}",
            p(&d.join("p.txt")),
            p(&d.join("n.nnue")),
            p(&d.join("b.epd")),
            p(&r)
        ));
        if resume {
            a.push("--resume".into());
        }
        run(&a)
    };
    ok(&game(&one, 2, false));
    // The same bytes elsewhere: the same run.
    ok(&game(&two, 4, true));
    assert_eq!(lines_in(&r), 5);
    // Changed bytes at the same path: another run.
    std::fs::write(two.join("p.txt"), "rfp_margin, 81\n").unwrap();
    usage_error(
        &game(&two, 6, true),
        &format!(
            "--resume: --engine params={} differs from the run's (sha256 ",
            p(&two.join("p.txt"))
        ),
    );
    std::fs::write(two.join("p.txt"), "rfp_margin, 80\n").unwrap();
    // Another net of the same width (a valid file, one weight changed).
    let mut bytes = engine::nnue::network::Network::from_bytes(&net).unwrap();
    bytes.feature_weights[0] ^= 1;
    std::fs::write(two.join("n.nnue"), bytes.to_bytes()).unwrap();
    usage_error(
        &game(&two, 6, true),
        &format!(
            "--engine option.EvalFile={} differs",
            p(&two.join("n.nnue"))
        ),
    );
    std::fs::write(two.join("n.nnue"), &net).unwrap();
    std::fs::write(two.join("b.epd"), book.replace("4P3", "2P5")).unwrap();
    usage_error(
        &game(&two, 6, true),
        &format!(
            "--resume: --book {} differs from the run's (sha256 ",
            p(&two.join("b.epd"))
        ),
    );
    std::fs::write(two.join("b.epd"), book).unwrap();
    ok(&game(&two, 6, true));
    assert_eq!(lines_in(&r), 7);
}
