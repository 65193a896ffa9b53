//! `spar datagen` and `--dump-positions` as a user runs them: the same files at any
//! concurrency, kill -9 and resume, the position target, text filters, DFRC starts,
//! `--inspect`, bad input, and training positions recorded by `spar match`.

mod common;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use data::training::viriformat;
use data::training::TrainingGame;

fn games(path: &Path) -> Vec<TrainingGame> {
    viriformat::read_games(path)
        .unwrap()
        .map(|g| g.expect("every record decodes"))
        .collect()
}

/// A cheap datagen run into `out`.
fn datagen(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "datagen",
        "--out",
        path_str(out),
        "--nodes",
        "400",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn same_files_at_any_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for c in ["1", "2", "3"] {
        let out = dir.path().join(format!("c{c}.vf"));
        let o = datagen(
            &out,
            &["--games", "6", "--concurrency", c, "--format", "both"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("6 games"), "{}", stdout(&o));
        let txt = dir.path().join(format!("c{c}.vf.txt"));
        files.push((std::fs::read(&out).unwrap(), std::fs::read(&txt).unwrap()));
    }
    assert!(files.windows(2).all(|w| w[0] == w[1]));
    let g = games(&dir.path().join("c1.vf"));
    assert_eq!(g.len(), 6);
    assert!(g.iter().all(|g| !g.moves.is_empty()));
    // Openings: 8 random plies from the start position, balanced by the first search.
    for game in &g {
        assert_eq!(game.start.fullmove_number(), 5);
        assert!(i32::from(game.moves[0].score).abs() <= 1000);
    }
}

#[test]
fn positions_target_and_unfiltered_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.vf");
    let o = datagen(
        &out,
        &[
            "--positions",
            "300",
            "--format",
            "both",
            "--min-ply",
            "0",
            "--max-score",
            "40000",
            "--keep-check",
            "--keep-tactical",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let g = games(&out);
    let positions: usize = g.iter().map(|g| g.moves.len()).sum();
    let last = g.last().unwrap().moves.len();
    assert!(
        positions >= 300 && positions - last < 300,
        "stops with the game reaching 300"
    );
    // Without filters the text file has one line per position.
    let lines = std::fs::read_to_string(dir.path().join("p.vf.txt")).unwrap();
    assert_eq!(lines.lines().count(), positions);
}

#[test]
fn killed_run_resumes_to_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.vf");
    let mut child = spar()
        .args([
            "datagen",
            "--out",
            path_str(&out),
            "--games",
            "1000",
            "--nodes",
            "400",
            "--quiet",
            "--format",
            "both",
            "--concurrency",
            "2",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while std::fs::metadata(&out).map_or(0, |m| m.len()) < 1500 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "datagen wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Whatever the kill left (maybe half a game), resuming gives the straight run's files.
    let present = viriformat::read_games(&out)
        .unwrap()
        .take_while(Result::is_ok)
        .count();
    let target = (present + 2).to_string();
    let o = datagen(&out, &["--games", &target, "--format", "both", "--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let straight = dir.path().join("s.vf");
    let o = datagen(&straight, &["--games", &target, "--format", "both"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(&straight).unwrap()
    );
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    assert_eq!(read("k.vf.txt"), read("s.vf.txt"));
    assert_eq!(read("k.vf.txt.idx"), read("s.vf.txt.idx"));

    // A half-written last game (cut mid-record) is dropped and played again.
    let len = std::fs::metadata(&out).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&out).unwrap();
    f.set_len(len - 7).unwrap();
    drop(f);
    let o = datagen(&out, &["--games", &target, "--format", "both", "--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(&straight).unwrap()
    );
    assert_eq!(read("k.vf.txt"), read("s.vf.txt"));
}

#[test]
fn dfrc_starts_are_chess960() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d.vf");
    let o = datagen(&out, &["--games", "4", "--dfrc", "--random-plies", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let g = games(&out);
    assert_eq!(g.len(), 4);
    assert!(g.iter().any(|g| g.start.is_chess960()));
    assert!(g.iter().all(|g| g.start.fullmove_number() == 2));
}

#[test]
fn inspect_reports_and_validates() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("i.vf");
    assert!(datagen(&out, &["--games", "3", "--format", "both"])
        .status
        .success());
    let o = run(&["datagen", "--inspect", path_str(&out), "--samples", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = stdout(&o);
    for want in [
        "Format: viriformat",
        "Games: 3",
        "Game results:",
        "Score histogram",
        "Samples:",
        "Valid",
    ] {
        assert!(report.contains(want), "{want} in {report}");
    }
    let o = run(&[
        "datagen",
        "--inspect",
        path_str(&dir.path().join("i.vf.txt")),
    ]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("Format: text"));

    // Corrupt the result byte of the second game: exit 1 naming its offset.
    let g = games(&out);
    let second = 32 + 4 * (g[0].moves.len() + 1);
    let mut bytes = std::fs::read(&out).unwrap();
    bytes[second + 30] = 5;
    std::fs::write(&out, bytes).unwrap();
    let o = run(&["datagen", "--inspect", path_str(&out)]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains(&format!("byte offset {second}")), "{err}");
    assert!(stdout(&o).contains("Games: 1"));
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.vf");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["datagen", "--games", "1"], "--out"),
        (
            vec!["datagen", "--out", path_str(&out)],
            "exactly one of --games",
        ),
        (
            vec![
                "datagen",
                "--out",
                path_str(&out),
                "--games",
                "1",
                "--positions",
                "5",
            ],
            "exactly one",
        ),
        (
            vec![
                "datagen",
                "--out",
                path_str(&out),
                "--games",
                "1",
                "--format",
                "csv",
            ],
            "viriformat, text, both",
        ),
        (
            vec![
                "datagen",
                "--out",
                path_str(&out),
                "--games",
                "1",
                "--book",
                "/nonexistent.epd",
            ],
            "nonexistent",
        ),
        (
            vec![
                "datagen",
                "--out",
                path_str(&out),
                "--games",
                "1",
                "--concurrency",
                "0",
            ],
            "--concurrency",
        ),
        (
            vec![
                "datagen",
                "--out",
                path_str(&out),
                "--games",
                "1",
                "--nodes",
                "0",
            ],
            "--nodes",
        ),
        (
            vec!["datagen", "--inspect", "/nonexistent.vf"],
            "nonexistent",
        ),
    ];
    usage_errors(&cases);
    // An existing file is never overwritten without --resume.
    std::fs::write(&out, b"precious").unwrap();
    let o = datagen(&out, &["--games", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--resume"));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
}

#[test]
fn match_dumps_its_games_and_resumes_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let play = |name: &str, games: &str, resume: bool| {
        let dump = dir.path().join(format!("{name}.vf"));
        let csv = dir.path().join(format!("{name}.csv"));
        let mut args = vec![
            "match",
            "--engine",
            "name=a",
            "--engine",
            "name=b",
            "--each",
            "nodes=300",
            "--games",
            games,
            "--quiet",
            "--results",
            path_str(&csv),
            "--dump-positions",
            path_str(&dump),
            "format=both",
            "min-ply=0",
        ];
        if resume {
            args.push("--resume");
        }
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        dump
    };
    let resumed = play("r", "2", false);
    assert_eq!(games(&resumed).len(), 2);
    play("r", "4", true);
    let straight = play("s", "4", false);
    assert_eq!(
        std::fs::read(&resumed).unwrap(),
        std::fs::read(&straight).unwrap()
    );
    let g = games(&straight);
    assert_eq!(g.len(), 4);
    // Book openings: the record starts where the engines took over.
    assert!(g
        .iter()
        .all(|g| g.start.fullmove_number() > 1 && !g.moves.is_empty()));
    let txt = std::fs::read_to_string(dir.path().join("s.vf.txt")).unwrap();
    assert!(txt.lines().count() > 10);

    let o = run(&[
        "match",
        "--engine",
        "name=a",
        "--engine",
        "name=b",
        "--each",
        "nodes=300",
        "--games",
        "2",
        "--dump-positions",
        path_str(&dir.path().join("x.vf")),
        "format=csv",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--dump-positions"));
}

#[test]
fn ctrl_c_keeps_complete_games_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.vf");
    let child = spar()
        .args([
            "datagen",
            "--out",
            path_str(&out),
            "--games",
            "1000",
            "--nodes",
            "400",
            "--quiet",
            "--format",
            "text",
            "--concurrency",
            "2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let index = dir.path().join("c.vf.idx");
    wait_for_lines(
        &index,
        2,
        Duration::from_millis(10),
        "datagen wrote nothing",
    );
    let o = interrupted(child);
    let summary = stdout(&o);
    assert!(summary.contains("Interrupted after"), "{summary}");
    // Every line of the text file belongs to a game in the index.
    let index = std::fs::read_to_string(&index).unwrap();
    let last: Vec<u64> = index
        .lines()
        .last()
        .unwrap()
        .split(' ')
        .map(|w| w.parse().unwrap())
        .collect();
    let file = std::fs::read_to_string(&out).unwrap();
    assert_eq!(file.len() as u64, last[0]);
    assert_eq!(file.lines().count() as u64, last[1]);
    let games = index.lines().count();
    assert!(
        summary.contains(&format!("Interrupted after {games} complete games")),
        "{summary}"
    );
}

#[test]
fn nnue_self_play_is_its_own_run() {
    let dir = tempfile::tempdir().unwrap();
    let hce = dir.path().join("hce.vf");
    let nnue = dir.path().join("nnue.vf");
    let o = datagen(
        &hce,
        &["--games", "2", "--concurrency", "1", "--eval", "hce"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The network is the default.
    let o = datagen(&nnue, &["--games", "2", "--concurrency", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The same openings, searched with another evaluation: other scores.
    let (h, n) = (games(&hce), games(&nnue));
    assert_eq!(h.len(), 2);
    assert_eq!(n.len(), 2);
    assert_eq!(h[0].start, n[0].start);
    assert_ne!(h[0].moves, n[0].moves);
    // The evaluation defines the run: a resume with the other one is refused.
    let o = datagen(&nnue, &["--games", "4", "--resume", "--eval", "hce"]);
    usage_error(&o, "--eval");
    // A network file: named in the record, refused when it is not a net.
    let bad = dir.path().join("bad.nnue");
    std::fs::write(&bad, b"not a network").unwrap();
    let out = dir.path().join("bad.vf");
    let o = datagen(&out, &["--games", "2", "--eval-file", path_str(&bad)]);
    usage_error(&o, "bad.nnue");
    assert!(!out.exists() || std::fs::metadata(&out).unwrap().len() == 0);
    let o = datagen(
        &out,
        &[
            "--games",
            "2",
            "--eval",
            "hce",
            "--eval-file",
            path_str(&bad),
        ],
    );
    usage_error(&o, "--eval nnue");
}

/// Issue 24, class 8: a second datagen on the same `--out` (with or without `--resume`,
/// any `--format`) is refused before any game while the first runs, the first goes on
/// untouched, and a `kill -9`'d holder leaves no lock behind.
#[test]
fn a_second_run_on_the_same_out_is_refused_while_the_first_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("one.vf");
    let mut first = spar()
        .args([
            "datagen",
            "--out",
            path_str(&out),
            "--games",
            "100000",
            "--nodes",
            "400",
            "--quiet",
            "--concurrency",
            "1",
            "--format",
            "both",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while std::fs::metadata(&out).map_or(0, |m| m.len()) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "datagen wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for extra in [
        &["--games", "5"][..],
        &["--games", "100000", "--resume"],
        &["--games", "5", "--format", "both", "--resume"],
    ] {
        let o = datagen(&out, extra);
        usage_error(&o, "in use by another spar (pid");
        assert!(stderr(&o).contains("--out"), "{}", stderr(&o));
    }
    // The first run's text file under another name and format is the same file.
    let txt = dir.path().join("one.vf.txt");
    let o = datagen(&txt, &["--games", "5", "--format", "text", "--resume"]);
    usage_error(&o, "in use by another spar (pid");
    // The first run is unaffected: still running, still writing whole games.
    let before = std::fs::metadata(&out).unwrap().len();
    let t0 = Instant::now();
    while std::fs::metadata(&out).unwrap().len() == before {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the first run stopped writing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(first.try_wait().unwrap().is_none(), "the first run ended");
    first.kill().unwrap(); // SIGKILL: the kernel frees the lock
    first.wait().unwrap();
    let present = viriformat::read_games(&out)
        .unwrap()
        .take_while(Result::is_ok)
        .count();
    let target = (present + 1).to_string();
    let o = datagen(
        &out,
        &[
            "--games",
            &target,
            "--resume",
            "--concurrency",
            "1",
            "--format",
            "both",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Every record decodes: nothing of the refused runs is in the file.
    assert_eq!(games(&out).len(), present + 1);
}

/// Issue 24, classes 11 to 13: datagen's network errors name `--eval-file`; a resume
/// compares the network's bytes (a copy at another path resumes, a changed net does not);
/// `--eval-file <embedded>` is the embedded net, as in UCI.
#[test]
fn the_eval_file_is_named_as_datagen_names_it_and_compared_by_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("n.vf");
    for (file, needle) in [
        (
            "/no/such/net.nnue",
            "--eval-file /no/such/net.nnue: No such file",
        ),
        ("/dev/zero", "--eval-file /dev/zero is not a regular file"),
    ] {
        let o = datagen(&out, &["--games", "1", "--eval-file", file]);
        usage_error(&o, needle);
        assert!(!stderr(&o).contains("option.EvalFile"), "{}", stderr(&o));
    }
    let o = datagen(
        &out,
        &["--games", "1", "--eval", "hce", "--eval-file", "x.nnue"],
    );
    usage_error(
        &o,
        "--eval-file x.nnue is a network, which only the NNUE evaluation uses",
    );
    assert!(!out.exists() || std::fs::metadata(&out).unwrap().len() == 0);

    let a = dir.path().join("a.nnue");
    std::fs::write(
        &a,
        engine::nnue::placeholder::material_network(16).to_bytes(),
    )
    .unwrap();
    let o = datagen(
        &out,
        &[
            "--games",
            "1",
            "--concurrency",
            "1",
            "--eval-file",
            path_str(&a),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // A byte-identical copy elsewhere is the same network.
    let copy = dir.path().join("elsewhere").join("copy.nnue");
    std::fs::create_dir(copy.parent().unwrap()).unwrap();
    std::fs::copy(&a, &copy).unwrap();
    let o = datagen(
        &out,
        &[
            "--games",
            "2",
            "--resume",
            "--concurrency",
            "1",
            "--eval-file",
            path_str(&copy),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(games(&out).len(), 2);
    // Another network at the same path is not.
    std::fs::write(
        &a,
        engine::nnue::placeholder::material_network(32).to_bytes(),
    )
    .unwrap();
    let o = datagen(
        &out,
        &["--games", "3", "--resume", "--eval-file", path_str(&a)],
    );
    usage_error(&o, "--resume: --eval-file");
    // `--eval-file <embedded>` is the embedded net (the default run), as in UCI.
    let empty = dir.path().join("e.vf");
    let o = datagen(
        &empty,
        &[
            "--games",
            "1",
            "--concurrency",
            "1",
            "--eval-file",
            "<embedded>",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let default = dir.path().join("d.vf");
    let o = datagen(&default, &["--games", "1", "--concurrency", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(bytes(&empty), bytes(&default));
}
