//! `spar tune` and `spar texel` through the binary: a short SPSA run with its CSV, output
//! file and resume; parameter-file errors; the SVG plot; Ctrl-C; a Texel run whose output
//! a match loads.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::*;
use engine::position::Position;
use engine::rng::SplitMix64;

const TUNE: &[&str] = &[
    "tune",
    "--no-verify",
    "--param",
    "rfp_margin",
    "--param",
    "lmr_base",
    "--each",
    "nodes=300",
    "--iterations",
    "4",
    "--pairs-per-iteration",
    "2",
    "--seed",
    "3",
    "--quiet",
];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    TUNE.iter().chain(extra).copied().collect()
}

#[test]
fn spsa_run_writes_trajectory_and_values_and_resumes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = ok(&run_in(
        d,
        &with(&["--concurrency", "2", "--csv", "a.csv", "--out", "a.txt"]),
    ));
    assert!(out.contains("SPSA: 4/4 iterations, 16 games"), "{out}");
    for needle in [
        "rfp_margin, ",
        "setoption name rfp_margin value ",
        "const RFP_MARGIN: i32 = ",
        "const LMR_BASE: i32 = ",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    let a = std::fs::read_to_string(d.join("a.csv")).unwrap();
    let lines: Vec<&str> = a.lines().collect();
    assert_eq!(
        lines[0],
        "iteration,games,rfp_margin,lmr_base,c_rfp_margin,c_lmr_base,r_rfp_margin,r_lmr_base"
    );
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[1], "0,0,75,75,,,,");
    assert!(lines[5].starts_with("4,16,"));
    let values = std::fs::read_to_string(d.join("a.txt")).unwrap();
    assert_eq!(values.lines().count(), 2);
    assert!(out.contains(&values), "the file holds the printed lines");

    // The same run, cut off by kill -9 in the middle of writing iteration 3 and resumed on
    // one thread, ends with the same file.
    let torn = format!(
        "{}\n{}\n{}\n{}\n3,12,75.0",
        lines[0], lines[1], lines[2], lines[3]
    );
    std::fs::write(d.join("b.csv"), torn).unwrap();
    let resumed = ok(&run_in(
        d,
        &with(&["--concurrency", "1", "--csv", "b.csv", "--resume"]),
    ));
    assert_eq!(std::fs::read_to_string(d.join("b.csv")).unwrap(), a);
    assert!(resumed.contains("SPSA: 4/4 iterations, 16 games (8 this session"));

    // Without --resume an existing trajectory is never overwritten.
    usage_error(
        &run_in(d, &with(&["--csv", "a.csv"])),
        "add --resume to continue",
    );

    // The values load into a builtin engine.
    ok(&run_in(
        d,
        &[
            "match",
            "--engine",
            "name=tuned",
            "params=a.txt",
            "--engine",
            "name=base",
            "--each",
            "nodes=200",
            "--games",
            "2",
            "--quiet",
        ],
    ));

    // The plot.
    let plotted = ok(&run_in(d, &["tune", "--plot", "a.csv"]));
    assert!(plotted.contains("a.svg"));
    let svg = std::fs::read_to_string(d.join("a.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.matches("<polyline").count() == 2);
    usage_error(
        &run_in(d, &["tune", "--plot", "a.txt"]),
        "not a spar tune trajectory",
    );
}

#[test]
fn parameter_files_and_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("spsa.txt"),
        "# OpenBench and fishtest lines\nrfp_margin, int, 80, 20, 200, 6, 0.002\nfutility_base, 80, 0, 300, 8, 0.002\n",
    )
    .unwrap();
    let out = ok(&run_in(
        d,
        &[
            "tune",
            "--no-verify",
            "--params",
            "spsa.txt",
            "--each",
            "nodes=200",
            "--iterations",
            "1",
            "--pairs-per-iteration",
            "1",
            "--quiet",
        ],
    ));
    assert!(out.contains("futility_base, "), "{out}");
    std::fs::write(
        d.join("bad.txt"),
        "rfp_margin, int, 80, 20, 200, 6, 0.002\nlmr_base, int, 75, 0, 200\n",
    )
    .unwrap();
    let base = [
        "tune",
        "--no-verify",
        "--each",
        "nodes=200",
        "--iterations",
        "1",
    ];
    let run = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        run_in(d, &args)
    };
    usage_error(
        &run(&["--params", "bad.txt"]),
        "bad.txt:2: expected 'name, int",
    );
    usage_error(&run(&["--params", "missing.txt"]), "cannot read --params");
    usage_error(&run(&[]), "nothing to tune");
    usage_error(
        &run(&["--param", "no_such"]),
        "--param no_such: unknown parameter",
    );
    usage_error(
        &run(&["--param", "rfp_margin", "--param", "rfp_margin"]),
        "already listed",
    );
    usage_error(
        &run_in(
            d,
            &[
                "tune",
                "--no-verify",
                "--param",
                "rfp_margin",
                "--iterations",
                "1",
            ],
        ),
        "no limit",
    );
    usage_error(
        &run(&["--param", "rfp_margin", "--pairs-per-iteration", "0"]),
        "--pairs-per-iteration must be at least 1",
    );
    // An external engine that is not a UCI engine (it exits at `uci`): one line, no game.
    usage_error(
        &run(&["--param", "rfp_margin", "--each", "cmd=/bin/true"]),
        "engine 'true' exited during the UCI handshake",
    );
    // A handcrafted weight does nothing to an engine that evaluates with the network.
    usage_error(
        &run(&["--param", "material_mg_knight"]),
        "material_mg_knight is a weight of the handcrafted evaluation",
    );
    let out = ok(&run(&[
        "--param",
        "material_mg_knight",
        "--each",
        "option.Eval=hce",
        "--pairs-per-iteration",
        "1",
        "--quiet",
    ]));
    assert!(out.contains("material_mg_knight, "), "{out}");
}

#[test]
fn ctrl_c_stops_with_a_resumable_trajectory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let child = spar()
        .args([
            "tune",
            "--no-verify",
            "--param",
            "rfp_margin",
            "--each",
            "nodes=500",
            "--iterations",
            "100000",
            "--pairs-per-iteration",
            "1",
            "--concurrency",
            "1",
            "--csv",
            "run.csv",
            "--quiet",
        ])
        .current_dir(d)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(
        &d.join("run.csv"),
        3,
        Duration::from_millis(20),
        "no progress",
    );
    let out = interrupted(child);
    let err = stderr(&out);
    assert!(err.contains("--resume"), "{err}");
    assert!(stdout(&out).contains("rfp_margin, "));
    // Every row on disk is whole.
    ok(&run_in(d, &["tune", "--plot", "run.csv"]));
}

/// Positions from random games, labelled with a noisy result that follows the material.
fn write_positions(path: &Path, n: usize) {
    let mut rng = SplitMix64::new(7);
    let mut lines = String::new();
    let mut count = 0;
    while count < n {
        let mut pos = Position::startpos();
        for _ in 0..(8 + rng.below(60)) {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos = pos.play(moves[rng.below(moves.len())]);
        }
        let material = |c| -> i32 {
            use engine::types::PieceType::*;
            [(Pawn, 1), (Knight, 3), (Bishop, 3), (Rook, 5), (Queen, 9)]
                .iter()
                .map(|&(p, v)| pos.colored(c, p).count() as i32 * v)
                .sum()
        };
        let diff = material(engine::types::Color::White) - material(engine::types::Color::Black);
        let r = diff + rng.below(5) as i32 - 2;
        let result = match r.signum() {
            1 => "1.0",
            0 => "0.5",
            _ => "0.0",
        };
        lines.push_str(&format!("{} | {} | {result}\n", pos.to_fen(), diff * 100));
        count += 1;
    }
    std::fs::write(path, lines).unwrap();
}

#[test]
fn texel_run_writes_weights_a_match_loads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_positions(&d.join("pos.txt"), 1500);
    let out = ok(&run_in(
        d,
        &[
            "texel",
            "--data",
            "pos.txt",
            "--epochs",
            "4",
            "--batch-size",
            "256",
            "--out",
            "w.txt",
        ],
    ));
    assert!(out.contains("Positions: 1500"), "{out}");
    let epochs: Vec<f64> = out
        .lines()
        .filter(|l| l.starts_with("Epoch "))
        .map(|l| {
            let e = l.split("Error = ").nth(1).unwrap();
            e.split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(epochs.len(), 4, "{out}");
    assert!(out.contains("Epoch 1  Error = ") && out.contains("  Rate = "));
    assert!(epochs[3] < epochs[0], "{epochs:?}");
    let weights = std::fs::read_to_string(d.join("w.txt")).unwrap();
    assert!(weights.lines().count() > 500);
    assert!(weights.contains("material_mg_knight, "));
    let rust = std::fs::read_to_string(d.join("w.rs")).unwrap();
    assert!(rust.contains("crate::tunable!(\n    pub MATERIAL_MG = eval \"material_mg\": ["));
    ok(&run_in(
        d,
        &[
            "match",
            "--engine",
            "name=tuned",
            "params=w.txt",
            "option.Eval=hce",
            "--engine",
            "name=base",
            "--each",
            "nodes=200",
            "--games",
            "2",
            "--quiet",
        ],
    ));

    // A held-out set: its error per epoch, and the best epoch's weights are kept.
    let out = ok(&run_in(
        d,
        &[
            "texel",
            "--data",
            "pos.txt",
            "--epochs",
            "3",
            "--validation",
            "0.2",
            "--out",
            "v.txt",
        ],
    ));
    assert!(out.contains("Positions: 1200 (+300 held out)"), "{out}");
    assert!(
        out.contains("Epoch 3  Error = ") && out.contains("  Validation = "),
        "{out}"
    );
    assert!(out.contains("Keeping the weights of epoch "), "{out}");
    // Targets blended with the search scores, weights pulled toward their start.
    let out = ok(&run_in(
        d,
        &[
            "texel",
            "--data",
            "pos.txt",
            "--epochs",
            "2",
            "--score-weight",
            "0.5",
            "--l2",
            "1e-7",
            "--out",
            "s.txt",
        ],
    ));
    assert!(out.contains("Epoch 2  Error = "), "{out}");
    usage_error(
        &run_in(
            d,
            &[
                "texel",
                "--data",
                "pos.txt",
                "--out",
                "x.txt",
                "--score-weight",
                "2",
            ],
        ),
        "--score-weight 2",
    );
    usage_error(
        &run_in(
            d,
            &["texel", "--data", "pos.txt", "--out", "x.txt", "--l2=-1"],
        ),
        "--l2 -1",
    );
    usage_error(
        &run_in(
            d,
            &[
                "texel",
                "--data",
                "pos.txt",
                "--out",
                "x.txt",
                "--validation",
                "1",
            ],
        ),
        "--validation 1",
    );

    std::fs::write(
        d.join("bad.txt"),
        "4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 0 | 0.5\nnot a fen | 0 | 1.0\n",
    )
    .unwrap();
    usage_error(
        &run_in(d, &["texel", "--data", "bad.txt", "--out", "x.txt"]),
        "bad.txt:2: bad FEN",
    );
    usage_error(
        &run_in(d, &["texel", "--data", "none.txt", "--out", "x.txt"]),
        "cannot read --data none.txt",
    );
    std::fs::write(d.join("empty.txt"), "# nothing\n").unwrap();
    usage_error(
        &run_in(d, &["texel", "--data", "empty.txt", "--out", "x.txt"]),
        "no positions",
    );
    usage_error(
        &run_in(
            d,
            &["texel", "--data", "pos.txt", "--out", "x.txt", "--lr", "0"],
        ),
        "--lr 0",
    );
    assert!(!d.join("x.txt").exists());
}

/// `spar uci` as an external engine: its search parameters are `spin` options.
fn spar_uci() -> String {
    format!("cmd={}", env!("CARGO_BIN_EXE_spar"))
}

#[test]
fn spar_uci_announces_its_parameters_as_spin_options() {
    use std::io::Write;
    let mut child = spar()
        .arg("uci")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"uci\nquit\n")
        .unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    for name in ["rfp_margin", "lmr_base"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("option name {name} type spin"))
                    && l.contains(" min ")
                    && l.contains(" max ")),
            "{name} is not a spin option in: {out}"
        );
    }
}

#[test]
fn tunes_an_external_uci_engine_reproducibly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("spsa.txt"),
        "rfp_margin, int, 75, 20, 200, 6, 0.002\nlmr_base, 75, 0, 200, 8, 0.002\n",
    )
    .unwrap();
    let cmd = spar_uci();
    let tune = |csv: &'static str| {
        ok(&run_in(
            d,
            &[
                "tune",
                "--no-verify",
                "--params",
                "spsa.txt",
                "--each",
                &cmd,
                "args=uci",
                "option.Hash=1",
                "nodes=300",
                "--iterations",
                "3",
                "--pairs-per-iteration",
                "2",
                "--seed",
                "5",
                "--csv",
                csv,
                "--quiet",
            ],
        ))
    };
    let out = tune("a.csv");
    assert!(out.contains("SPSA: 3/3 iterations, 12 games"), "{out}");
    assert!(out.contains("setoption name rfp_margin value"), "{out}");
    let a = std::fs::read_to_string(d.join("a.csv")).unwrap();
    assert_eq!(
        a.lines().count(),
        5,
        "header, start row and 3 iterations: {a}"
    );
    assert!(a.starts_with("iteration,games,rfp_margin,lmr_base,"), "{a}");
    // Two copies of one engine with the same options play each pair's games mirrored, so
    // W − L is 0 and θ never moves; a moved θ shows the setoption values reach the engines.
    let last = a.lines().last().unwrap();
    assert!(!last.starts_with("3,12,75,75,"), "θ moved: {a}");
    tune("b.csv");
    let b = std::fs::read_to_string(d.join("b.csv")).unwrap();
    assert_eq!(a, b, "same seed, same trajectory");

    // `--engine` takes the same words as --each (as in `spar match`).
    ok(&run_in(
        d,
        &[
            "tune",
            "--no-verify",
            "--params",
            "spsa.txt",
            "--engine",
            &cmd,
            "args=uci",
            "option.Hash=1",
            "--each",
            "nodes=300",
            "--iterations",
            "3",
            "--pairs-per-iteration",
            "2",
            "--seed",
            "5",
            "--csv",
            "c.csv",
            "--quiet",
        ],
    ));
    let c = std::fs::read_to_string(d.join("c.csv")).unwrap();
    assert_eq!(a, c, "--engine words as --each words");

    // A tuned option may not also be fixed; nothing is played.
    usage_error(
        &run_in(
            d,
            &[
                "tune",
                "--no-verify",
                "--params",
                "spsa.txt",
                "--engine",
                &cmd,
                "args=uci",
                "option.rfp_margin=50",
                "--each",
                "nodes=300",
                "--csv",
                "d.csv",
            ],
        ),
        "option.rfp_margin=50 fixes a parameter that is tuned",
    );
    assert!(!d.join("d.csv").exists());
}

#[test]
fn external_engine_options_are_checked_before_any_game() {
    let Some(sf) = stockfish() else {
        missing_client(
            "external_engine_options_are_checked_before_any_game",
            "stockfish is not installed (apt-get install stockfish)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cmd = format!("cmd={sf}");
    for (line, needle) in [
        (
            "no_such_option, int, 10, 0, 20, 2, 0.002",
            "engine 'stockfish' has no UCI option 'no_such_option'; tune one of its spin options: ",
        ),
        (
            "EvalFile, int, 10, 0, 20, 2, 0.002",
            "offers 'EvalFile' as a 'string' option, and SPSA tunes integer (spin) options only",
        ),
        (
            "nodestime, int, 100, 0, 20000, 10, 0.002",
            "range 0..20000 is outside engine 'stockfish''s spin option 'nodestime' (min 0, max 10000); narrow it",
        ),
    ] {
        std::fs::write(d.join("spsa.txt"), format!("{line}\n")).unwrap();
        let o = run_in(
            d,
            &[
                "tune", "--no-verify", "--params", "spsa.txt", "--each", &cmd, "nodes=500", "--iterations",
                "3", "--csv", "run.csv",
            ],
        );
        usage_error(&o, needle);
        assert!(!d.join("run.csv").exists(), "{line}: no trajectory before the check");
    }
}

#[test]
fn an_external_engine_that_hangs_at_uci_is_one_line() {
    if !Path::new("/bin/sleep").exists() {
        missing_client(
            "an_external_engine_that_hangs_at_uci_is_one_line",
            "/bin/sleep is missing",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Never answers `uci` (the startup timeout is 10 s).
    let o = run_in(
        dir.path(),
        &[
            "tune",
            "--no-verify",
            "--param",
            "rfp_margin",
            "--engine",
            "cmd=/bin/sleep",
            "args=60",
            "--each",
            "nodes=300",
            "--csv",
            "run.csv",
        ],
    );
    usage_error(&o, "did not answer 'uci' with 'uciok' within 10.0s");
    assert!(!dir.path().join("run.csv").exists());
}

/// Tuned values that a node-limited match shows to be weaker: huge steps slam the
/// parameters to their bounds after two iterations; with seed 8 (the full-data generation-2
/// net and the correction history) they land on rfp_margin 200, lmr_base 0, futility_margin 20,
/// nmp_base 1: every margin at the far end of its range (48-66-10 against the start values
/// in the verification, which ends H0 after 124 games).
const BAD_SET: &str = "rfp_margin, int, 75, 20, 200, 60, 40\n\
                       lmr_base, int, 75, 0, 200, 60, 40\n\
                       futility_margin, int, 90, 20, 300, 60, 40\n\
                       nmp_base, int, 3, 1, 6, 2, 40\n";

#[test]
fn the_verification_sprt_of_a_bad_set_ends_h0_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bad.txt"), BAD_SET).unwrap();
    let line = "tune --params bad.txt --each nodes=400 --iterations 2 --pairs-per-iteration 2 \
                --seed 8 --concurrency 2 --verify-elo1 40 --csv t.csv --quiet";
    let out = ok(&run_in(d, &argv(line)));
    assert!(
        out.contains("rfp_margin, 200\nlmr_base, 0\nfutility_margin, 20\nnmp_base, 1\n"),
        "{out}"
    );
    assert!(out.contains("Score of tuned vs start:"), "{out}");
    assert!(
        out.contains("Verification SPRT tuned vs start: failed (H0: the tuned values are not better; keep the start values)"),
        "{out}"
    );
    let record = json(&d.join("t.csv.run.json"));
    assert_eq!(record["verify"]["decision"], "H0", "{record}");
    let games = record["verify"]["games"].as_u64().unwrap();
    assert!(games >= 2 && games.is_multiple_of(2), "{record}");
    // The verification's games are resumable like any SPRT's: resuming a finished run
    // replays nothing and gives the same verdict.
    let again = ok(&run_in(d, &argv(&format!("{line} --resume"))));
    assert!(again.contains("failed (H0"), "{again}");
    assert_eq!(json(&d.join("t.csv.run.json"))["verify"]["games"], games);
    // --verify-each replaces the limit; --no-verify skips it.
    let skipped = ok(&run_in(
        d,
        &argv(&line.replace("--csv t.csv", "--no-verify")),
    ));
    assert!(!skipped.contains("Verification"), "{skipped}");
}

/// The verification SPRT is the match job `spar sprt` runs with the same words: the tuned
/// values against the start values, the tune's book, adjudication and seed, the limit of
/// `--verify-each`, the bounds and games of `--verify-*`; its games and summary are those.
#[test]
fn the_verification_plays_the_games_of_the_same_spar_sprt() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("p.txt"),
        "rfp_margin, int, 80, 20, 200, 30, 0.5\nlmr_base, int, 70, 0, 200, 30, 0.5\n",
    )
    .unwrap();
    std::fs::write(
        d.join("b.epd"),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n\
         rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -\n\
         rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq -\n",
    )
    .unwrap();
    let shared = "--book b.epd order=sequential --resign movecount=3 score=500 \
                  --draw movenumber=20 movecount=4 score=10 --maxmoves 60 --seed 5 \
                  --concurrency 2 --quiet";
    let tune = format!(
        "tune --params p.txt --each nodes=300 option.Hash=4 --iterations 2 \
         --pairs-per-iteration 2 --verify-each nodes=500 --verify-elo0 -1 --verify-elo1 3 \
         --verify-games 8 --csv t.csv --out t.txt {shared}"
    );
    let out = ok(&run_in(d, &argv(&tune)));
    let finals = std::fs::read_to_string(d.join("t.txt")).unwrap();
    let value = |name: &str| -> String {
        finals
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}, ")))
            .unwrap_or_else(|| panic!("{name} in {finals}"))
            .to_string()
    };
    let sprt = format!(
        "sprt --engine name=tuned option.Hash=4 option.rfp_margin={} option.lmr_base={} \
         --engine name=start option.Hash=4 option.rfp_margin=80 option.lmr_base=70 \
         --each nodes=500 --elo0 -1 --elo1 3 --games 8 --results s.csv --json s.json {shared}",
        value("rfp_margin"),
        value("lmr_base")
    );
    let sprt_out = ok(&run_in(d, &argv(&sprt)));
    let rows = rows_without_time(&d.join("t.csv.verify.csv"));
    assert_eq!(rows.len(), 9, "a header and 8 games: {rows:?}");
    assert_eq!(rows, rows_without_time(&d.join("s.csv")));
    let summary = |p: &str| {
        let mut j = json(&d.join(p));
        let o = j.as_object_mut().unwrap();
        o.remove("duration_seconds");
        o.remove("command_line");
        j
    };
    assert_eq!(summary("t.csv.verify.json"), summary("s.json"));
    // The summary lines the tune printed are the SPRT's.
    let score = |o: &str| {
        o.lines()
            .find(|l| l.starts_with("Score of"))
            .map(String::from)
    };
    assert!(score(&sprt_out).is_some(), "{sprt_out}");
    assert_eq!(score(&out), score(&sprt_out), "{out}");
}

#[test]
fn an_interrupted_verification_stops_shows_its_games_in_the_status_and_resumes_to_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line = "tune --param rfp_margin --param lmr_base --each nodes=300 --iterations 2 \
                --pairs-per-iteration 2 --seed 6 --concurrency 1 --verify-each nodes=3000 \
                --verify-games 40 --csv t.csv --quiet";
    let child = spar()
        .current_dir(d)
        .args(argv(line))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ctrl-C once the verification has written two games: the verification (not the
    // finished tune) takes it and stops gracefully.
    let results = d.join("t.csv.verify.csv");
    wait_for_lines(&results, 3, Duration::from_millis(10), "verification games");
    let o = interrupted(child);
    let err = stderr(&o);
    assert!(err.contains("spar: interrupt: finishing up"), "{err}");
    assert!(!err.contains("second interrupt"), "{err}");
    let played = lines_in(&results) - 1;
    assert!(played < 40, "the verification ended before the kill");
    let status = ok(&run_in(d, &["status", "t.csv"]));
    assert!(
        status.contains(
            "Verification SPRT tuned vs start so far (stopped: the same command with \
             --resume continues it; `spar status t.csv.verify.csv` for its page):"
        ),
        "{status}"
    );
    let games = status
        .lines()
        .find(|l| l.starts_with("  Games: "))
        .unwrap_or_else(|| panic!("{status}"));
    // Complete pairs only (a row cut by the kill is not counted).
    let shown: usize = games["  Games: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        shown >= 2 && shown <= played && games.contains(" of 40"),
        "{games} after {played} rows:\n{status}"
    );
    assert!(status.contains("\n  LLR: "), "{status}");
    // Stopped: no ETA, the play it has left instead (a fixed --verify-games run).
    assert!(!status.contains("ETA"), "{status}");
    assert!(status.contains("\n  Not running: about "), "{status}");
    assert!(!json(&d.join("t.csv.run.json"))
        .as_object()
        .unwrap()
        .contains_key("verify"));
    // --resume plays the rest of the verification only; its verdict replaces the progress.
    let out = ok(&run_in(d, &argv(&format!("{line} --resume"))));
    assert!(out.contains("Verification SPRT tuned vs start: "), "{out}");
    let status = ok(&run_in(d, &["status", "t.csv"]));
    assert!(!status.contains("so far"), "{status}");
    assert!(
        status.contains("Verification SPRT tuned vs start: undecided (no verdict within --verify-games) after 40 games"),
        "{status}"
    );
}

#[test]
fn a_crash_under_a_perturbation_is_recorded_with_both_sets_and_a_replay() {
    if !Path::new("/usr/bin/python3").exists() {
        missing_client(
            "a_crash_under_a_perturbation_is_recorded_with_both_sets_and_a_replay",
            "python3 is missing (apt-get install python3)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // spar's engine behind a proxy that dies on `go` when its rfp_margin is above 75.
    let shim = d.join("fragile");
    std::fs::write(
        &shim,
        format!(
            "#!/usr/bin/python3\n\
             import subprocess, sys\n\
             p = subprocess.Popen(['{}', 'uci'], stdin=subprocess.PIPE, text=True, bufsize=1)\n\
             fragile = False\n\
             for line in sys.stdin:\n\
             \x20   if line.startswith('setoption name rfp_margin value'):\n\
             \x20       fragile = int(line.split()[-1]) > 75\n\
             \x20   if line.startswith('go') and fragile:\n\
             \x20       p.kill()\n\
             \x20       sys.exit(3)\n\
             \x20   p.stdin.write(line)\n\
             \x20   p.stdin.flush()\n",
            env!("CARGO_BIN_EXE_spar")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(d.join("p.txt"), "rfp_margin, int, 75, 20, 200, 6, 0.002\n").unwrap();
    let o = run_in(
        d,
        &argv(
            "tune --no-verify --params p.txt --engine cmd=./fragile --each nodes=300 \
             --iterations 1 --pairs-per-iteration 1 --seed 2 --concurrency 1 --csv t.csv --quiet",
        ),
    );
    ok(&o);
    let err = stderr(&o);
    assert!(
        err.contains("crash: pair 0 (iteration 1), game 1: engine '"),
        "{err}"
    );
    let text = std::fs::read_to_string(d.join("t.csv.crashes.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "both games of the pair crash: {text}");
    for r in &records {
        let (dev, base) = (
            r["dev"]["rfp_margin"].as_i64().unwrap(),
            r["base"]["rfp_margin"].as_i64().unwrap(),
        );
        assert!(dev != base && dev.max(base) > 75, "{r}");
        let who = r["engine"].as_str().unwrap();
        assert_eq!(
            who == "dev",
            dev > 75,
            "the engine with the larger value crashed: {r}"
        );
        assert_eq!(r["termination"], "crash");
        let replay = r["replay"].as_str().unwrap();
        assert!(
            replay.starts_with("spar match --engine name=dev "),
            "{replay}"
        );
        assert!(
            replay.contains(" cmd=./fragile ") && replay.contains("nodes=300"),
            "{replay}"
        );
        assert!(
            replay.contains("--book t.csv.crash-pair-0.epd "),
            "{replay}"
        );
        assert!(replay.contains(&format!("option.rfp_margin={dev}")));
    }
    // The replay command plays the pair again, and the engine crashes again.
    let replay = records[0]["replay"].as_str().unwrap().replacen(
        "spar ",
        &format!("{} ", env!("CARGO_BIN_EXE_spar")),
        1,
    );
    let o = std::process::Command::new("sh")
        .args(["-c", &replay])
        .current_dir(d)
        .output()
        .unwrap();
    let out = ok(&o);
    assert!(out.contains("Score of dev vs base:"), "{out}");
    assert!(out.to_lowercase().contains("crash"), "{out}");
}

#[test]
fn a_kill_at_every_write_then_resume_gives_the_uninterrupted_trajectory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line = "tune --no-verify --param rfp_margin --param lmr_base --each nodes=200 \
                --iterations 6 --pairs-per-iteration 2 --delay 2 --seed 9 --concurrency 2 --quiet";
    ok(&run_in(d, &argv(&format!("{line} --csv whole.csv"))));
    let whole = std::fs::read_to_string(d.join("whole.csv")).unwrap();
    assert_eq!(whole.lines().count(), 8);
    // Stopped dead (as by kill -9) right after each of the 6 rows it writes in turn.
    for at in 1..=6 {
        let csv = format!("k{at}.csv");
        let killed = spar()
            .current_dir(d)
            .env("SPAR_TEST_KILL_AT", at.to_string())
            .args(argv(&format!("{line} --csv {csv}")))
            .output()
            .unwrap();
        assert_eq!(killed.status.code(), Some(137), "killed after row {at}");
        let rows = std::fs::read_to_string(d.join(&csv)).unwrap();
        assert_eq!(rows.lines().count(), 2 + at, "kill after row {at}");
        ok(&run_in(d, &argv(&format!("{line} --csv {csv} --resume"))));
        assert_eq!(
            std::fs::read_to_string(d.join(&csv)).unwrap(),
            whole,
            "killed after row {at}, then resumed"
        );
    }
}

/// Issue 33: the verification SPRT's bounds are checked as `spar sprt` checks its own, and
/// before the tune starts (they were refused only after every iteration had been played);
/// a negative bound is a number, not an option.
#[test]
fn verification_bounds_are_checked_before_the_tune() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    for (bounds, why) in [
        (
            "--verify-elo0 5 --verify-elo1 5",
            "elo0 (5) must be less than elo1 (5)",
        ),
        (
            "--verify-elo0 -1 --verify-elo1 -3",
            "elo0 (-1) must be less than elo1 (-3)",
        ),
        ("--verify-elo1 -2", "elo0 (0) must be less than elo1 (-2)"),
    ] {
        let line = format!(
            "tune --param rfp_margin --each nodes=300 --iterations 2 --pairs-per-iteration 1 \
             --quiet --csv {} {bounds}",
            path_str(&csv)
        );
        let o = spar().args(argv(&line)).output().unwrap();
        usage_error(
            &o,
            "spar: error: the verification SPRT's options: --verify-elo0 ",
        );
        usage_error(&o, why);
        assert!(!csv.exists(), "{bounds}: nothing written");
    }
}
