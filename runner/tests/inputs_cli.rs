//! Issue 33, through the binary: `--resume` refuses a run whose inputs differ from the
//! first session's (books, engine executables, parameter files, networks), for match,
//! sprt, tune and datagen, while records of older spars still resume when nothing
//! differs; a tune checks its verification's options before its first game; `spar merge`
//! refuses an option the run cannot honour; `spar status` shows an empty tune or match
//! file as what its run record says it is.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn p(path: &Path) -> String {
    path_str(path).to_string()
}

/// Two openings, as an EPD book.
const BOOK: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n\
                    rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n";

/// The fix every input refusal ends with.
fn fix(flag: &str) -> String {
    format!("resume with the run's own inputs, or start a new {flag}")
}

/// The example: a tune started without a book, resumed with `--book`, is refused
/// and its files stay as they were; the other way round too; the same inputs resume.
#[test]
fn a_tune_resumed_with_another_book_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("book.epd"), BOOK).unwrap();
    let tune = |extra: &str| {
        run_in(
            dir.path(),
            &words(&format!(
                "tune --no-verify --param rfp_margin --each nodes=300 --pairs-per-iteration 1 \
                 --concurrency 1 --quiet --csv t.csv {extra}"
            )),
        )
    };
    ok(&tune("--iterations 2"));
    let csv = dir.path().join("t.csv");
    let record = dir.path().join("t.csv.run.json");
    let (before, record_before) = (bytes(&csv), bytes(&record));
    let o = tune("--iterations 2 --resume --book book.epd");
    usage_error(
        &o,
        &format!(
            "--resume: --book differs from the run's (none in t.csv.run.json, book.epd now): {}",
            fix("--csv")
        ),
    );
    assert_eq!(bytes(&csv), before, "the trajectory changed");
    assert_eq!(bytes(&record), record_before, "the run record changed");
    // The same inputs go on (the run is complete: nothing is added).
    ok(&tune("--iterations 2 --resume"));
    assert_eq!(bytes(&csv), before);

    // Started with a book: resumed without it, or with other bytes, is refused.
    std::fs::remove_file(&csv).unwrap();
    ok(&tune("--iterations 2 --book book.epd"));
    usage_error(
        &tune("--iterations 2 --resume"),
        "--resume: --book differs from the run's (sha256 ",
    );
    std::fs::write(dir.path().join("book.epd"), BOOK.replace("4P3", "2P5")).unwrap();
    usage_error(
        &tune("--iterations 2 --resume --book book.epd"),
        "--resume: --book book.epd differs from the run's (sha256 ",
    );
}

/// An external engine is pinned by the bytes of the executable the launcher starts (a
/// path, or a name found on PATH), so a resume after it changed is refused for match and
/// sprt; a `params=` file edited between sessions is refused for tune.
#[test]
fn a_resume_with_a_changed_engine_or_parameter_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(env!("CARGO_BIN_EXE_spar"), d.join("eng")).unwrap();
    let game = |command: &str, cmd: &str, games: u32, resume: &str| {
        let mut c = spar();
        c.current_dir(d)
            .env(
                "PATH",
                format!("{}:{}", p(d), std::env::var("PATH").unwrap_or_default()),
            )
            .args(words(&format!(
                "{command} --engine name=a cmd={cmd} args=uci --engine name=b --each nodes=300 \
                 --concurrency 1 --quiet --games {games} --results r.csv {resume}"
            )));
        c.output().unwrap()
    };
    ok(&game("match", "./eng", 2, ""));
    ok(&game("match", "./eng", 4, "--resume"));
    assert_eq!(lines_in(&d.join("r.csv")), 5);
    // The engine rebuilt between sessions.
    let mut exe = std::fs::read(d.join("eng")).unwrap();
    exe.extend_from_slice(b"\0rebuilt");
    std::fs::write(d.join("eng"), &exe).unwrap();
    let before = bytes(&d.join("r.csv"));
    usage_error(
        &game("match", "./eng", 6, "--resume"),
        "--resume: --engine cmd=./eng differs from the run's (sha256 ",
    );
    assert!(
        stderr(&game("match", "./eng", 6, "--resume"))
            .ends_with(&format!("{}\n", fix("--results"))),
        "the fix is named"
    );
    assert_eq!(bytes(&d.join("r.csv")), before);

    // sprt, the engine a script found on PATH.
    let script = d.join("myengine");
    let spar = env!("CARGO_BIN_EXE_spar");
    std::fs::write(&script, format!("#!/bin/sh\nexec {spar} \"$@\"\n")).unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    std::fs::remove_file(d.join("r.csv")).unwrap();
    ok(&game("sprt", "myengine", 2, ""));
    ok(&game("sprt", "myengine", 4, "--resume"));
    std::fs::write(&script, format!("#!/bin/sh\n# v2\nexec {spar} \"$@\"\n")).unwrap();
    usage_error(
        &game("sprt", "myengine", 6, "--resume"),
        "--resume: --engine cmd=myengine differs from the run's (sha256 ",
    );

    // tune: a params= file of --each edited between sessions.
    std::fs::write(d.join("p.txt"), "futility_margin, 90\n").unwrap();
    let tune = |extra: &str| {
        run_in(
            d,
            &words(&format!(
                "tune --no-verify --param rfp_margin --each nodes=300 params=p.txt \
                 --pairs-per-iteration 1 --concurrency 1 --quiet --csv t.csv {extra}"
            )),
        )
    };
    ok(&tune("--iterations 2"));
    std::fs::write(d.join("p.txt"), "futility_margin, 95\n").unwrap();
    usage_error(
        &tune("--iterations 2 --resume"),
        "--resume: --each params=p.txt differs from the run's (sha256 ",
    );
    std::fs::write(d.join("p.txt"), "futility_margin, 90\n").unwrap();
    ok(&tune("--iterations 2 --resume"));
}

/// datagen: another `--eval-file` or `--book` than the run's is refused.
#[test]
fn a_datagen_resume_with_another_network_or_book_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("book.epd"), BOOK).unwrap();
    let net = engine::nnue::placeholder::material_network(16).to_bytes();
    std::fs::write(d.join("n.nnue"), &net).unwrap();
    let datagen = |extra: &str| {
        run_in(
            d,
            &words(&format!(
                "datagen --out g.vf --quiet --concurrency 1 --nodes 300 {extra}"
            )),
        )
    };
    ok(&datagen("--games 1"));
    let before = bytes(&d.join("g.vf"));
    usage_error(
        &datagen("--games 2 --resume --book book.epd"),
        &format!(
            "--resume: --book differs from the run's (none in g.vf.run.json, book.epd now): {}",
            fix("--out")
        ),
    );
    usage_error(
        &datagen("--games 2 --resume --eval-file n.nnue"),
        "--resume: --eval-file differs from the run's (none in g.vf.run.json, n.nnue with sha256 ",
    );
    assert_eq!(bytes(&d.join("g.vf")), before);
    // Started with both: another net's bytes are refused; the same ones go on.
    std::fs::remove_file(d.join("g.vf")).unwrap();
    ok(&datagen("--games 1 --book book.epd --eval-file n.nnue"));
    let mut other = engine::nnue::network::Network::from_bytes(&net).unwrap();
    other.feature_weights[0] ^= 1;
    std::fs::write(d.join("m.nnue"), other.to_bytes()).unwrap();
    usage_error(
        &datagen("--games 2 --resume --book book.epd --eval-file m.nnue"),
        "--resume: --eval-file differs from the run's (sha256 ",
    );
    ok(&datagen(
        "--games 2 --resume --book book.epd --eval-file n.nnue",
    ));
}

/// A record written before executables were pinned (an older spar: the engine's words as
/// given, no newer fields) resumes when nothing differs, and is still checked.
#[test]
fn a_record_of_an_older_spar_resumes_when_nothing_differs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(env!("CARGO_BIN_EXE_spar"), d.join("eng")).unwrap();
    let game = |games: u32, extra: &str| {
        run_in(
            d,
            &words(&format!(
                "match --engine name=a cmd=./eng args=uci --engine name=b --each nodes=300 \
                 --concurrency 1 --quiet --games {games} --results r.csv {extra}"
            )),
        )
    };
    ok(&game(2, ""));
    // Rewrite the record as an older spar wrote it.
    let path = d.join("r.csv.run.json");
    let mut record: serde_json::Value = json(&path);
    let fields = record["fields"].as_object_mut().unwrap();
    let pinned = fields
        .remove("engine 1 by content")
        .expect("the engine is pinned");
    let plain: Vec<String> = pinned
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let w = w.as_str().unwrap();
            if w.starts_with("cmd=") {
                "cmd=./eng".to_string()
            } else {
                w.to_string()
            }
        })
        .collect();
    fields.insert("engine 1".into(), serde_json::json!(plain));
    fields.remove("dump-positions");
    fields.remove("tb tables");
    record["spar_run"] = 1.into();
    std::fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
    ok(&game(4, "--resume"));
    assert_eq!(lines_in(&d.join("r.csv")), 5);
    // The same old record is still checked: another seed, or a book it did not have.
    fields_as_before(&path, &record);
    usage_error(
        &game(6, "--resume --seed 9"),
        "--seed 9 differs from the run in",
    );
    std::fs::write(d.join("book.epd"), BOOK).unwrap();
    usage_error(
        &game(6, "--resume --book book.epd"),
        "--resume: --book differs from the run's (none in r.csv.run.json, book.epd now)",
    );
}

/// The `--tb` tables are pinned by name and size (as a `--slurm` manifest pins them): a
/// table gone between sessions is refused for match and datagen; a record of version 1
/// (before tables were pinned) resumes.
#[test]
fn a_resume_with_other_tables_is_refused() {
    let Some(tables) = syzygy_tables("a_resume_with_other_tables_is_refused") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tb = d.join("tb");
    std::fs::create_dir(&tb).unwrap();
    for entry in std::fs::read_dir(&tables).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), tb.join(entry.file_name())).unwrap();
    }
    let game = |games: u32, extra: &str| {
        run_in(
            d,
            &words(&format!(
                "match --engine name=a --engine name=b --each nodes=200 --maxmoves 20 --quiet \
                 --concurrency 1 --games {games} --results r.csv --tb tb {extra}"
            )),
        )
    };
    let datagen = |games: u32, extra: &str| {
        run_in(
            d,
            &words(&format!(
                "datagen --nodes 200 --quiet --concurrency 1 --games {games} --out g.vf --tb tb {extra}"
            )),
        )
    };
    ok(&game(2, ""));
    ok(&datagen(1, ""));
    ok(&game(4, "--resume"));
    // A record of version 1 (no tables in it) resumes: that spar did not pin them.
    let path = d.join("r.csv.run.json");
    let mut record = json(&path);
    record["spar_run"] = 1.into();
    record["fields"]
        .as_object_mut()
        .unwrap()
        .remove("tb tables");
    fields_as_before(&path, &record);
    ok(&game(6, "--resume"));
    let kbnk = ["KBNvK.rtbw", "KBNvK.rtbz"];
    for f in kbnk {
        std::fs::remove_file(tb.join(f)).unwrap();
    }
    usage_error(
        &game(8, "--resume"),
        "--resume: --tb differs from the run's (sha256 ",
    );
    usage_error(
        &datagen(2, "--resume"),
        "--resume: --tb differs from the run's (sha256 ",
    );
    for f in kbnk {
        std::fs::copy(tables.join(f), tb.join(f)).unwrap();
    }
    ok(&game(8, "--resume"));
    ok(&datagen(2, "--resume"));
}

/// Records of older spars, before an option existed (`spar tune --delay`, `spar datagen
/// --eval`) or when datagen named its net by path and checksum: they resume with the
/// option at what those runs played with, and not with another value.
#[test]
fn a_record_from_before_an_option_resumes_at_what_it_played_with() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let older = |path: &Path, edit: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>)| {
        let mut record = json(path);
        record["spar_run"] = 1.into();
        let fields = record["fields"].as_object_mut().unwrap();
        fields.remove("tb tables");
        edit(fields);
        fields_as_before(path, &record);
    };
    let tune = |extra: &str| {
        run_in(
            d,
            &words(&format!(
                "tune --no-verify --param rfp_margin --each nodes=300 --pairs-per-iteration 1 \
                 --iterations 2 --concurrency 1 --quiet --csv t.csv {extra}"
            )),
        )
    };
    ok(&tune(""));
    let record = d.join("t.csv.run.json");
    older(&record, &|f| {
        f.remove("delay");
    });
    usage_error(
        &tune("--resume --delay 1"),
        "--resume: --delay 1 differs from the run in t.csv (delay 0)",
    );
    ok(&tune("--resume"));

    let net = engine::nnue::placeholder::material_network(16).to_bytes();
    std::fs::write(d.join("n.nnue"), &net).unwrap();
    let datagen = |games: u32, extra: &str| {
        run_in(
            d,
            &words(&format!(
                "datagen --out g.vf --quiet --concurrency 1 --nodes 300 --games {games} {extra}"
            )),
        )
    };
    ok(&datagen(1, "--eval-file n.nnue"));
    let checksum: String = net[net.len() - 8..]
        .iter()
        .rev()
        .map(|b| format!("{b:02x}"))
        .collect();
    older(&d.join("g.vf.run.json"), &|f| {
        f.remove("eval-file-sha256");
        f.insert(
            "eval-file".into(),
            format!("n.nnue (checksum {checksum})").into(),
        );
    });
    ok(&datagen(2, "--resume --eval-file n.nnue"));
    older(&d.join("g.vf.run.json"), &|f| {
        f.remove("eval-file-sha256");
        f.insert("eval-file".into(), "n.nnue (checksum 00)".into());
    });
    usage_error(
        &datagen(3, "--resume --eval-file n.nnue"),
        &format!(
            "--resume: --eval-file differs from the run's (n.nnue (checksum 00) in g.vf.run.json, n.nnue (checksum {checksum}) now)"
        ),
    );
    // Before --eval, datagen played the handcrafted evaluation.
    std::fs::remove_file(d.join("g.vf")).unwrap();
    ok(&datagen(1, "--eval hce"));
    older(&d.join("g.vf.run.json"), &|f| {
        f.remove("eval");
    });
    usage_error(
        &datagen(2, "--resume"),
        "--resume: --eval nnue differs from the run in g.vf (eval hce)",
    );
    ok(&datagen(2, "--resume --eval hce"));
}

/// Writes `record` back to `path` (the resume rewrote it in the current form).
fn fields_as_before(path: &Path, record: &serde_json::Value) {
    std::fs::write(path, serde_json::to_string_pretty(record).unwrap()).unwrap();
}

/// A bad verification option (`--verify-*`) is refused before the tune's first game: exit
/// 2 at once, no trajectory written; `--no-verify` skips the check with the SPRT.
#[test]
fn bad_verification_options_are_refused_before_the_first_game() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let csv = d.join("t.csv");
    let tune = |extra: &str| {
        run_in(
            d,
            &words(&format!(
                "tune --param rfp_margin --each nodes=300 --pairs-per-iteration 1 \
                 --concurrency 1 --quiet --csv t.csv {extra}"
            )),
        )
    };
    for (extra, needle) in [
        (
            "--verify-elo0 5 --verify-elo1 5",
            "the verification SPRT's options: --verify-elo0 5 --verify-elo1 5: elo0 (5) must be less than elo1 (5)",
        ),
        (
            "--verify-elo0 3 --verify-elo1 1",
            "--verify-elo0 3 --verify-elo1 1: elo0 (3) must be less than elo1 (1)",
        ),
        (
            "--verify-each tc=garbage",
            "the verification SPRT's options: --verify-each tc=garbage: bad tc 'garbage'",
        ),
        ("--verify-each nodes=-3", "--verify-each nodes=-3: "),
        (
            "--verify-games 0",
            "the verification SPRT's options: --verify-games must be at least 2",
        ),
        ("--verify-games 3", "--verify-games 3 is odd"),
    ] {
        let started = Instant::now();
        let o = tune(&format!("--iterations 30 {extra}"));
        usage_error(&o, needle);
        assert!(stderr(&o).contains("--no-verify"), "{extra}: the way out");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{extra}: refused only after {:?}",
            started.elapsed()
        );
        assert!(!csv.exists(), "{extra}: a trajectory was written");
    }
    // --no-verify: nothing of the verification is checked, or played.
    let o = tune("--no-verify --verify-games 3 --iterations 1");
    ok(&o);
    assert!(csv.exists());
}

/// The match's own options are checked before any file is written too: a bad
/// `--game-lines` word (the personalities' hidden option) leaves no results file.
#[test]
fn a_bad_game_lines_word_is_refused_before_the_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &words(
            "match --engine name=a --engine name=b --each nodes=300 --games 2 --quiet \
             --results r.csv --game-lines bogus",
        ),
    );
    usage_error(&o, "--game-lines: 'bogus' is not TOOL");
    assert!(
        !dir.path().join("r.csv").exists(),
        "a results file was written"
    );
}

/// `spar merge RUN_DIR` refuses an output option the run cannot honour (the issue's
/// example: `--results` of a tune; `--json` and `--pgnout` of a tune or datagen, and
/// `--pgnout` of a match planned without it), before it writes anything.
#[test]
fn merge_refuses_an_option_the_run_cannot_honour() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plan = |line: &str| {
        let o = spar()
            .current_dir(d)
            .env("PATH", "/nonexistent")
            .args(words(&format!("{line} --slurm --plan-only --shards 1")))
            .output()
            .unwrap();
        ok(&o);
    };
    plan(
        "tune --no-verify --param rfp_margin --each nodes=300 --pairs-per-iteration 1 \
         --iterations 2 --run-dir tune --csv t.csv",
    );
    plan("datagen --nodes 300 --games 2 --run-dir gen --out g.vf");
    plan("match --engine name=a --engine name=b --each nodes=300 --games 2 --run-dir m --results m.csv");
    let merge = |args: &str| run_in(d, &words(&format!("merge {args}")));
    for (args, needle) in [
        (
            "tune --results x.csv",
            "--results is not an output of a tune run (tune's tune writes its own --csv and --out): leave it out",
        ),
        ("tune --json x.json", "--json is not an output of a tune run"),
        ("tune --pgnout x.pgn", "--pgnout is not an output of a tune run"),
        (
            "gen --results x.csv",
            "--results is not an output of a datagen run (gen's datagen writes its own --out): leave it out",
        ),
        (
            "m --pgnout x.pgn",
            "--pgnout: m's match was planned without --pgnout, so its shards keep no games: leave it out",
        ),
    ] {
        usage_error(&merge(args), needle);
        for f in ["x.csv", "x.json", "x.pgn", "t.csv", "g.vf", "m.csv"] {
            assert!(!d.join(f).exists(), "merge {args} wrote {f}");
        }
    }
    // What a match can honour is merged.
    ok(&merge("m --results x.csv --json x.json"));
    assert!(d.join("x.csv").exists() && d.join("x.json").exists());
}

/// `spar status` of a tune's --csv that holds no line yet (its run record says it is a
/// tune) shows the tune: its parameters, 0 iterations; a results CSV with its record but
/// no game shows the match's engines. `--resume` of the empty tune starts it.
#[test]
fn status_of_an_empty_tune_or_match_file_shows_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tune = |extra: &str| {
        run_in(
            d,
            &words(&format!(
                "tune --no-verify --param rfp_margin --param lmr_base --each nodes=300 \
                 --pairs-per-iteration 1 --iterations 2 --concurrency 1 --quiet --csv t.csv {extra}"
            )),
        )
    };
    ok(&tune(""));
    std::fs::write(d.join("t.csv"), "").unwrap();
    let status = ok(&run_in(d, &["status", "t.csv"]));
    assert!(status.starts_with("Tune t.csv\n"), "{status}");
    assert!(
        status.contains(
            "Iterations: 0/2 (0.0 %), 0 games; 1 pairs (2 games) per iteration, 2 parameters"
        ),
        "{status}"
    );
    for name in ["rfp_margin", "lmr_base"] {
        assert!(
            status.lines().any(|l| l.starts_with(name)),
            "{name} in {status}"
        );
    }
    assert!(!status.contains(" vs "), "{status}");
    assert!(
        status.contains("Over the last half of the iterations (none yet)")
            && !status.contains("1..0"),
        "no iteration is named before the first: {status}"
    );
    // The empty trajectory resumes as a new run.
    ok(&tune("--resume"));
    assert_eq!(
        lines_in(&d.join("t.csv")),
        4,
        "header, start and two iterations"
    );

    // A match's results with its record but no game: its engines.
    ok(&run_in(
        d,
        &words(
            "match --engine name=dev --engine name=base --each nodes=300 --games 2 \
             --concurrency 1 --quiet --results r.csv",
        ),
    ));
    let header = std::fs::read_to_string(d.join("r.csv")).unwrap();
    let header = header.lines().next().unwrap().to_string() + "\n";
    for text in ["", header.as_str()] {
        std::fs::write(d.join("r.csv"), text).unwrap();
        let status = ok(&run_in(d, &["status", "r.csv"]));
        assert!(
            status.starts_with("Results r.csv: dev vs base\n"),
            "{text:?}: {status}"
        );
    }
}
