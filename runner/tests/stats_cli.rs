//! `spar stats` and `spar sim` through the binary: the reference vectors via `--json`,
//! the text lines, and one-line errors with exit code 2.

mod common;

use common::*;
use serde_json::Value;

fn as_number(value: &Value) -> f64 {
    match value {
        Value::Number(n) => n.as_f64().unwrap(),
        Value::String(s) => match s.as_str() {
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            "nan" => f64::NAN,
            other => panic!("unexpected string {other}"),
        },
        other => panic!("unexpected value {other}"),
    }
}

fn close(actual: f64, expected: f64) -> bool {
    if expected.is_nan() {
        return actual.is_nan();
    }
    if expected.is_infinite() {
        return actual == expected;
    }
    let diff = (actual - expected).abs();
    diff <= 1e-6 || diff <= 1e-6 * expected.abs()
}

#[test]
fn json_matches_every_vector() {
    let root: Value =
        serde_json::from_str(include_str!("../../sprt/tests/data/vectors.json")).unwrap();
    let mut failures = Vec::new();
    for vector in root["vectors"].as_array().unwrap() {
        let id = vector["id"].as_str().unwrap();
        let input = &vector["input"];
        let mut args: Vec<String> = vec!["stats".into(), "--json".into()];
        let (flag, counts) = match input.get("wdl") {
            Some(wdl) => ("--wdl", wdl),
            None => ("--ptnml", &input["ptnml"]),
        };
        args.push(flag.into());
        args.extend(counts.as_array().unwrap().iter().map(|c| c.to_string()));
        if let Some(sprt) = vector.get("sprt") {
            for key in ["elo0", "elo1", "alpha", "beta"] {
                args.push(format!("--{key}"));
                args.push(sprt[key].to_string());
            }
            args.push("--model".into());
            args.push(sprt["model"].as_str().unwrap().into());
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(&argv);
        assert!(output.status.success(), "{id}: {}", stderr(&output));
        let actual: Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
        for (key, want) in vector["expected"].as_object().unwrap() {
            let got = &actual[key.as_str()];
            let ok = match key.as_str() {
                "games" => got.as_u64() == want.as_u64(),
                "decision" => got
                    .as_str()
                    .is_some_and(|g| g.eq_ignore_ascii_case(want.as_str().unwrap())),
                _ => !got.is_null() && close(as_number(got), as_number(want)),
            };
            if !ok {
                failures.push(format!("{id}: {key} = {got}, expected {want}"));
            }
        }
        // Inputs are echoed back.
        if flag == "--wdl" {
            let wdl = counts.as_array().unwrap();
            assert_eq!(actual["wins"], wdl[0], "{id}");
            assert_eq!(actual["draws"], wdl[1], "{id}");
            assert_eq!(actual["losses"], wdl[2], "{id}");
        } else {
            assert_eq!(&actual["ptnml"], counts, "{id}");
        }
        if let Some(sprt) = vector.get("sprt") {
            assert_eq!(actual["model"], sprt["model"], "{id}");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn text_output_has_the_cutechess_and_fastchess_lines() {
    let output = run(&[
        "stats", "--wdl", "136", "111", "96", "--names", "new", "old",
    ]);
    assert!(output.status.success());
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Score of new vs old: 136 - 96 - 111  [0.558] 343");
    assert_eq!(
        lines[1],
        "Elo difference: 40.7 +/- 30.4, LOS: 99.6 %, DrawRatio: 32.4 %"
    );
    assert_eq!(lines[2], "Elo: 40.70 +/- 30.43, nElo: 49.77 +/- 36.77");
    assert_eq!(lines[3], "LOS: 99.60 %, DrawRatio: 32.36 %");
    assert_eq!(
        lines[4],
        "Games: 343, Wins: 136, Losses: 96, Draws: 111, Points: 191.5 (55.83 %)"
    );

    let output = run(&[
        "stats", "--ptnml", "365", "16618", "36229", "16974", "390", "--elo0", "0", "--elo1", "2",
    ]);
    assert!(output.status.success());
    let text = stdout(&output);
    assert!(
        text.contains("Elo: 1.00 +/- 0.92, nElo: 1.96 +/- 1.81\n"),
        "{text}"
    );
    assert!(
        text.contains("LOS: 98.31 %, DrawRatio: 51.33 %, PairsRatio: 1.02\n"),
        "{text}"
    );
    assert!(
        text.contains("Ptnml(0-2): [365, 16618, 36229, 16974, 390]\n"),
        "{text}"
    );
    assert!(
        text.contains("LLR: 2.25 (76.4%) (-2.94, 2.94) [0.00, 2.00]\n"),
        "{text}"
    );
}

#[test]
fn wdl_and_ptnml_together_must_agree() {
    // 2 pairs: WL and DD → 1 win, 2 draws, 1 loss.
    let ok = run(&[
        "stats", "--wdl", "1", "2", "1", "--ptnml", "0", "0", "2", "0", "0", "--json",
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let v: Value = serde_json::from_str(&stdout(&ok)).unwrap();
    assert_eq!(v["games"], 4);
    assert_eq!(v["wins"], 1);
    assert_eq!(v["pair_draw_ratio"], 1.0);
    let bad = run(&[
        "stats", "--wdl", "2", "0", "0", "--ptnml", "0", "0", "2", "0", "0",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("cannot describe the same games"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["stats", "--wdl", "1", "2"], "--wdl takes 3 counts"),
        (
            &["stats", "--ptnml", "1", "2", "3", "4"],
            "--ptnml takes 5 counts",
        ),
        (&["stats", "--wdl", "1", "-2", "3"], "'-2' is not a count"),
        (&["stats", "--wdl", "1", "x", "3"], "'x' is not a count"),
        (&["stats"], "no counts given"),
        (
            &[
                "stats", "--wdl", "1", "2", "3", "--elo0", "5", "--elo1", "0",
            ],
            "elo0 (5) must be less than elo1 (0)",
        ),
        (
            &[
                "stats", "--wdl", "1", "2", "3", "--elo0", "0", "--elo1", "5", "--alpha", "0",
            ],
            "alpha (0)",
        ),
        (
            &[
                "stats", "--wdl", "1", "2", "3", "--elo0", "0", "--elo1", "5", "--beta", "1.5",
            ],
            "beta (1.5)",
        ),
        (
            &[
                "stats", "--wdl", "1", "2", "3", "--elo0", "0", "--elo1", "5", "--alpha", "0.5",
                "--beta", "0.5",
            ],
            "alpha + beta",
        ),
        (
            &["stats", "--wdl", "1", "2", "3", "--elo0", "0"],
            "--elo0 needs --elo1",
        ),
        (
            &[
                "stats", "--wdl", "1", "2", "3", "--elo0", "0", "--elo1", "5", "--model", "gauss",
            ],
            "unknown SPRT model",
        ),
        (
            &[
                "stats", "--ptnml", "1", "2", "3", "4", "5", "--elo0", "0", "--elo1", "5",
                "--model", "bayesian",
            ],
            "bayesian needs W/D/L",
        ),
        (
            &["sim", "--elo", "0", "--elo0", "5", "--elo1", "0"],
            "elo0 (5) must be less than elo1 (0)",
        ),
        (&["sim", "--elo", "0", "--draw-ratio", "1"], "draw ratio"),
        (&["sim", "--elo", "0", "--runs", "0"], "--runs 0"),
    ];
    for (args, needle) in cases {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let err = stderr(&output);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("spar: error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
        assert!(stdout(&output).is_empty(), "{args:?}");
    }
}

#[test]
fn sim_reports_pass_rate_and_games() {
    let args = [
        "sim", "--elo", "15", "--elo0", "0", "--elo1", "15", "--runs", "200", "--seed", "3",
    ];
    let output = run(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let rate_line = text
        .lines()
        .find(|l| l.starts_with("Pass rate: "))
        .expect("pass rate line");
    let rate: f64 = rate_line["Pass rate: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((rate - 0.95).abs() < 0.06, "{text}");
    assert!(text.contains("Games to a decision: mean "), "{text}");
    // Deterministic for a seed.
    assert_eq!(stdout(&run(&args)), text);
}

/// Issue 33: `spar sprt`, `spar stats` and `spar sim` check their bounds alike (one check,
/// shared with both personalities' `-sprt`): elo0 = elo1, elo0 > elo1, a negative beta (a
/// number, not an option) and an alpha above 1 are one line naming the key, exit 2, before
/// any game; valid bounds play.
#[test]
fn sprt_stats_and_sim_check_bounds_alike() {
    let cases = [
        ("--elo0 5 --elo1 5", "elo0 (5) must be less than elo1 (5)"),
        ("--elo0 5 --elo1 0", "elo0 (5) must be less than elo1 (0)"),
        (
            "--elo0 0 --elo1 5 --beta -0.1",
            "beta (-0.1) must be strictly between 0 and 1",
        ),
        (
            "--elo0 0 --elo1 5 --alpha 1.5",
            "alpha (1.5) must be strictly between 0 and 1",
        ),
    ];
    for (bounds, why) in cases {
        for command in [
            "sprt --engine name=a --engine name=b --each nodes=300 --games 2",
            "stats --wdl 1 2 3",
            "sim --elo 0 --runs 10",
        ] {
            let line = format!("{command} {bounds}");
            let o = run(&argv(&line));
            check_one_line(&line, &o, why);
        }
    }
    let out = ok(&run(&argv(
        "sprt --engine name=a --engine name=b --each nodes=300 --games 2 --concurrency 1 \
         --elo0 -10 --elo1 -2 --alpha 0.1 --beta 0.1 --quiet",
    )));
    assert!(out.contains("Score of a vs b"), "{out}");
}

fn check_one_line(line: &str, o: &std::process::Output, why: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{line}: {err}");
    assert_eq!(err.lines().count(), 1, "{line}: {err}");
    assert!(err.contains(why), "{line}: {err}");
    assert!(stdout(o).is_empty(), "{line}");
}
