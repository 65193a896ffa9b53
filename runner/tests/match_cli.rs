//! `spar match` / `spar sprt` as a user runs them: determinism across concurrency, SPRT
//! decisions, kill -9 and resume, torn files, bad input, and misbehaving external engines.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;

/// Weakened: knights and bishops valued as 1.5 pawns (weights of the handcrafted evaluation,
/// so the games that use it add `option.Eval=hce`).
const WEAK: [&str; 5] = [
    "name=weak",
    "option.material_mg_knight=150",
    "option.material_eg_knight=150",
    "option.material_mg_bishop=150",
    "option.material_eg_bishop=150",
];

#[test]
fn results_do_not_depend_on_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for c in ["1", "2", "3"] {
        let csv = dir.path().join(format!("r{c}.csv"));
        let js = dir.path().join(format!("s{c}.json"));
        let o = run(&[
            "match",
            "--engine",
            "name=dev",
            "option.rfp_margin=120",
            "--engine",
            "name=base",
            "--each",
            "nodes=400",
            "--games",
            "12",
            "--concurrency",
            c,
            "--seed",
            "7",
            "--results",
            path_str(&csv),
            "--json",
            path_str(&js),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let j = json(&js);
        assert_eq!(j["games"], 12);
        outputs.push((rows_without_time(&csv), j["ptnml"].clone(), stdout(&o)));
    }
    assert_eq!(outputs[0].0.len(), 13, "header + 12 rows");
    for other in &outputs[1..] {
        assert_eq!(outputs[0].0, other.0, "same games at any concurrency");
        assert_eq!(outputs[0].1, other.1);
        assert_eq!(outputs[0].2, other.2, "same summary");
    }
}

#[test]
fn sprt_rejects_a_weakened_variant_and_accepts_the_reverse() {
    let dir = tempfile::tempdir().unwrap();
    for (first, second, want) in [
        (&WEAK[..], &["name=base"][..], "H0"),
        (&["name=base"][..], &WEAK[..], "H1"),
    ] {
        let js = dir.path().join(format!("{want}.json"));
        let mut args = vec!["sprt", "--engine"];
        args.extend_from_slice(first);
        args.push("--engine");
        args.extend_from_slice(second);
        args.extend_from_slice(&[
            "--each",
            "nodes=600",
            "option.Eval=hce",
            "--elo0",
            "0",
            "--elo1",
            "20",
            "--quiet",
            "--json",
            path_str(&js),
        ]);
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let j = json(&js);
        assert_eq!(j["decision"], want, "{}", stdout(&o));
        assert!(
            stdout(&o).contains(&format!("{want} was accepted")),
            "{}",
            stdout(&o)
        );
        let pairs: u64 = j["ptnml"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(j["games"].as_u64().unwrap(), 2 * pairs, "whole pairs only");
        assert!(j["llr"].as_f64().unwrap().abs() >= 2.94);
    }
}

#[test]
fn killed_run_resumes_to_the_same_counts() {
    let dir = tempfile::tempdir().unwrap();
    let common = |csv: &Path, js: &Path| -> Vec<String> {
        [
            "match",
            "--engine",
            "name=dev",
            "option.lmr_base=100",
            "--engine",
            "name=base",
            "--each",
            "nodes=500",
            "--games",
            "24",
            "--concurrency",
            "2",
            "--seed",
            "3",
            "--results",
            path_str(csv),
            "--json",
            path_str(js),
            "--quiet",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    // Uninterrupted reference.
    let (ref_csv, ref_json) = (dir.path().join("ref.csv"), dir.path().join("ref.json"));
    let o = spar().args(common(&ref_csv, &ref_json)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));

    // Killed with SIGKILL once a few pairs are written, then resumed.
    let (csv, js) = (dir.path().join("run.csv"), dir.path().join("run.json"));
    let mut child = spar()
        .args(common(&csv, &js))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if lines_in(&csv) >= 5 || start.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let written = std::fs::read_to_string(&csv).unwrap().lines().count();
    assert!(
        written < 25,
        "the run was killed before it finished ({written} lines)"
    );

    let mut args = common(&csv, &js);
    args.push("--resume".to_string());
    let o = spar().args(&args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(rows_without_time(&csv), rows_without_time(&ref_csv));
    let (a, b) = (json(&js), json(&ref_json));
    for key in [
        "wins",
        "draws",
        "losses",
        "ptnml",
        "games",
        "elo",
        "terminations",
    ] {
        assert_eq!(a[key], b[key], "{key}");
    }
    assert_eq!(
        stdout(&o),
        stdout(
            &spar()
                .args(common(
                    &dir.path().join("x.csv"),
                    &dir.path().join("x.json")
                ))
                .output()
                .unwrap()
        )
    );
}

#[test]
fn resume_drops_torn_line_and_half_pair() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let args = |games: &str, resume: bool| {
        let mut a = vec![
            "match".to_string(),
            "--engine".into(),
            "name=a".into(),
            "--engine".into(),
            "name=b".into(),
            "option.rfp_margin=100".into(),
            "--each".into(),
            "nodes=300".into(),
            "--games".into(),
            games.into(),
            "--results".into(),
            path_str(&csv).into(),
            "--quiet".into(),
        ];
        if resume {
            a.push("--resume".into());
        }
        a
    };
    assert!(spar()
        .args(args("4", false))
        .output()
        .unwrap()
        .status
        .success());
    // Simulate a crash between the two rows of pair 2, then in the middle of a write.
    let text = std::fs::read_to_string(&csv).unwrap();
    let first_row_of_pair_1 = text.lines().nth(3).unwrap().to_string();
    let fake = first_row_of_pair_1.replacen("1,0,", "2,0,", 1);
    std::fs::write(&csv, format!("{text}{fake}\n3,0,12,99,a,b,1-")).unwrap();

    // Without --resume an existing file is refused, and left alone.
    let o = spar().args(args("8", false)).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));

    let o = spar().args(args("8", true)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 9, "header + 8 rows: {lines:#?}");
    for (i, line) in lines[1..].iter().enumerate() {
        assert!(line.starts_with(&format!("{},{},", i / 2, i % 2)), "{line}");
    }
    assert!(stdout(&o).contains("] 8"), "{}", stdout(&o));
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad_book = dir.path().join("bad.epd");
    std::fs::write(
        &bad_book,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\nnot a fen at all\n",
    )
    .unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "match", "--engine", "name=a", "--engine", "name=b", "--each", "nodes=10",
                "--games", "3",
            ],
            "odd",
        ),
        (
            vec!["match", "--engine", "name=a", "--engine", "name=b"],
            "no limit",
        ),
        (
            vec![
                "match",
                "--engine",
                "name=a",
                "colour=red",
                "--engine",
                "name=b",
                "--each",
                "nodes=10",
            ],
            "unknown engine key 'colour'",
        ),
        (
            vec![
                "match",
                "--engine",
                "option.no_such=1",
                "--engine",
                "name=b",
                "--each",
                "nodes=10",
            ],
            "unknown parameter 'no_such'",
        ),
        (
            vec![
                "match",
                "--engine",
                "option.rfp_margin=100000",
                "--engine",
                "name=b",
                "--each",
                "nodes=10",
            ],
            "out of range",
        ),
        (
            vec![
                "match",
                "--engine",
                "cmd=/nonexistent/engine",
                "--engine",
                "name=b",
                "--each",
                "nodes=10",
            ],
            "cannot find executable",
        ),
        (
            vec![
                "match",
                "--engine",
                "name=a",
                "--engine",
                "name=b",
                "--each",
                "nodes=10",
                "--book",
                "/nonexistent.epd",
            ],
            "nonexistent.epd",
        ),
        (
            vec![
                "match",
                "--engine",
                "name=a",
                "--engine",
                "name=b",
                "--each",
                "nodes=10",
                "--book",
                path_str(&bad_book),
            ],
            ":2",
        ),
        (
            vec![
                "sprt", "--engine", "name=a", "--engine", "name=b", "--each", "nodes=10", "--elo0",
                "5", "--elo1", "0",
            ],
            "elo0",
        ),
        (
            vec![
                "sprt", "--engine", "name=a", "--engine", "name=b", "--each", "nodes=10",
                "--alpha", "0.7", "--beta", "0.5",
            ],
            "alpha",
        ),
        (
            vec![
                "match", "--engine", "name=a", "--engine", "name=b", "--each", "tc=abc",
            ],
            "bad tc",
        ),
        (
            vec!["match", "--engine", "name=a", "--each", "nodes=10"],
            "exactly two",
        ),
        (
            vec![
                "match",
                "--engine",
                "name=a",
                "--engine",
                "name=b",
                "--each",
                "nodes=10",
                "--resign",
                "movecount=x",
            ],
            "movecount=x",
        ),
    ];
    usage_errors(&cases);
}

/// A fake UCI engine in bash: answers the handshake, then misbehaves on `go`.
fn fake_engine(dir: &Path, name: &str, on_go: &str) -> PathBuf {
    let path = dir.join(name);
    let script = format!(
        "#!/usr/bin/env bash\nwhile read -r line; do\n  case \"$line\" in\n    uci) echo 'id name {name}'; echo uciok ;;\n    isready) echo readyok ;;\n    go*) {on_go} ;;\n    quit) exit 0 ;;\n  esac\ndone\n"
    );
    std::fs::write(&path, script).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&path)
        .status()
        .unwrap();
    path
}

#[test]
fn crashing_and_hanging_engines_forfeit_and_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let crasher = fake_engine(dir.path(), "crasher", "exit 3");
    let hanger = fake_engine(dir.path(), "hanger", "sleep 600");
    let illegal = fake_engine(dir.path(), "illegal", "echo 'bestmove a1a1'");

    // sprt recovers by default: every game is lost by the crasher, each counted.
    let js = dir.path().join("crash.json");
    let cmd = format!("cmd={}", crasher.display());
    let o = run(&[
        "sprt",
        "--engine",
        &cmd,
        "--engine",
        "name=spar",
        "--each",
        "nodes=200",
        "--games",
        "4",
        "--json",
        path_str(&js),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&js);
    assert_eq!(j["losses"], 4, "{j}");
    assert_eq!(j["failures"]["crasher"]["crashes"], 4, "{j}");
    assert!(stdout(&o).contains("4 crashes"), "{}", stdout(&o));

    // match does not recover unless asked: it stops with a clear error.
    let o = run(&[
        "match",
        "--engine",
        &cmd,
        "--engine",
        "name=spar",
        "--each",
        "nodes=200",
        "--games",
        "4",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("crashed") && stderr(&o).contains("--recover"),
        "{}",
        stderr(&o)
    );

    // A hang under a node limit is caught by the watchdog.
    let js = dir.path().join("hang.json");
    let cmd = format!("cmd={}", hanger.display());
    let start = Instant::now();
    let o = run(&[
        "match",
        "--engine",
        &cmd,
        "--engine",
        "name=spar",
        "--each",
        "nodes=200",
        "--games",
        "2",
        "--recover",
        "--stall-timeout",
        "0.5",
        "--json",
        path_str(&js),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "watchdog too slow: {:?}",
        start.elapsed()
    );
    assert_eq!(json(&js)["failures"]["hanger"]["stalls"], 2);

    // An illegal move forfeits.
    let js = dir.path().join("illegal.json");
    let cmd = format!("cmd={}", illegal.display());
    let o = run(&[
        "match",
        "--engine",
        &cmd,
        "--engine",
        "name=spar",
        "--each",
        "nodes=200",
        "--games",
        "2",
        "--json",
        path_str(&js),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&js)["failures"]["illegal"]["illegal_moves"], 2);
}

#[test]
fn plays_stockfish_as_an_external_engine() {
    let Some(sf) = stockfish() else {
        missing_client(
            "plays_stockfish_as_an_external_engine",
            "stockfish is not installed (apt-get install stockfish)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (pgn, js) = (dir.path().join("g.pgn"), dir.path().join("s.json"));
    let cmd = format!("cmd={sf}");
    let o = run(&[
        "match",
        "--engine",
        "name=sf",
        &cmd,
        "option.Hash=8",
        "option.Threads=1",
        "--engine",
        "name=spar",
        "--each",
        "nodes=2000",
        "--games",
        "2",
        "--pgnout",
        path_str(&pgn),
        "--json",
        path_str(&js),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&js);
    assert_eq!(j["games"], 2);
    assert_eq!(j["crashes"], 0);
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[Event ").count(), 2);
    assert!(text.contains("[White \"sf\"]") && text.contains("[Black \"sf\"]"));
}

#[test]
fn ctrl_c_writes_the_summary_and_leaves_a_resumable_file() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let args = || -> Vec<String> {
        [
            "match",
            "--engine",
            "name=a",
            "--engine",
            "name=b",
            "option.rfp_margin=90",
            "--each",
            "nodes=800",
            "--games",
            "400",
            "--concurrency",
            "2",
            "--results",
            path_str(&csv),
            "--quiet",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let child = spar()
        .args(args())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while lines_in(&csv) < 3 && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let o = interrupted(child);
    let out = stdout(&o);
    assert!(
        out.contains("Score of a vs b") && out.contains("Interrupted"),
        "{out}"
    );
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert!(
        rows.is_multiple_of(2) && rows < 400,
        "whole pairs only: {rows}"
    );
    // The summary counts exactly the pairs in the file.
    assert!(out.contains(&format!("] {rows}\n")), "{out}");

    // --resume continues after them: one more pair.
    let mut resume = args();
    resume.extend(["--resume".to_string()]);
    let n = rows + 2;
    let pos = resume.iter().position(|a| a == "400").unwrap();
    resume[pos] = n.to_string();
    let o = spar().args(&resume).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let total = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert_eq!(total, n);
}
