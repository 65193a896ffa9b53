//! `spar sim --bisect` through the binary: simulated whole bisects, their table and CSV,
//! the same output for any number of threads, and one-line errors with exit code 2.

mod common;

use common::*;

/// The table's data rows: the lines between the first header (`drop  true  commits …`) and
/// the blank line after it, split at white space.
fn table_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("drop"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn bisects_are_simulated_into_a_table_and_a_csv_alike_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bisect.csv");
    let line = format!(
        "sim --bisect --commits 4,8 --drop 40 --true-drop 1x,80 --runs 150 --seed 5 --csv {}",
        path_str(&csv)
    );
    let one = spar()
        .args(argv(&line))
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    let text = ok(&one);
    let csv_one = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.starts_with("Bisect: normalized Elo, draw ratio 0.50, alpha 0.05, beta 0.05"),
        "{text}"
    );
    assert!(text.contains("max(alpha, beta) = 0.05"), "{text}");
    assert!(
        text.contains("Runs: 150 per row (seed 5), culprit uniform"),
        "{text}"
    );
    let rows = table_rows(&text);
    let setups: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str(), r[2].as_str()))
        .collect();
    assert_eq!(
        setups,
        [
            ("40.00", "40.00", "4"),
            ("40.00", "80.00", "4"),
            ("40.00", "40.00", "8"),
            ("40.00", "80.00", "8")
        ],
        "{text}"
    );
    for r in &rows {
        // right, wrong, +/-, early, late, none: rates; right + wrong + none = 1.
        let rate = |i: usize| r[i].parse::<f64>().unwrap();
        assert!((rate(3) + rate(4) + rate(8) - 1.0).abs() < 1e-3, "{r:?}");
        assert!((rate(6) + rate(7) - rate(4)).abs() < 1e-3, "{r:?}");
        assert!(
            rate(4) < 0.05 + 3.0 * 0.018,
            "wrong answers far above alpha: {r:?}"
        );
        let steps: f64 = r[10].parse().unwrap();
        assert!(steps <= if r[2] == "4" { 2.0 } else { 3.0 }, "{r:?}");
    }
    assert!(
        text.contains("Mean games by step (gate, then the search's steps"),
        "{text}"
    );
    let lines: Vec<&str> = csv_one.lines().collect();
    assert_eq!(lines.len(), 5, "{csv_one}");
    assert!(
        lines[0].starts_with("model,draw_ratio,alpha,beta,known_bad,"),
        "{csv_one}"
    );
    assert!(
        lines[1].starts_with("normalized,0.5,0.05,0.05,false,,,5,40,40,4,150,"),
        "{csv_one}"
    );

    let three = spar()
        .args(argv(&line))
        .env("RAYON_NUM_THREADS", "3")
        .output()
        .unwrap();
    assert_eq!(ok(&three), text);
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), csv_one);
}

#[test]
fn a_fixed_culprit_a_spread_drop_and_known_bad_are_reported() {
    let out = ok(&run(&argv(
        "sim --bisect --commits 8 --drop 30 --culprit 4 --spread 0.5 --known-bad --runs 60",
    )));
    assert!(out.contains("bad commit known bad (no gate)"), "{out}");
    assert!(
        out.contains("culprit commit 4, the drop spread: 0.5 at the culprit, the rest at the next"),
        "{out}"
    );
    let rows = table_rows(&out);
    assert_eq!(rows.len(), 1, "{out}");
    // The columns with a spread: drop true commits right next wrong …; no gate games.
    let (right, next): (f64, f64) = (rows[0][3].parse().unwrap(), rows[0][4].parse().unwrap());
    assert!(right > 0.0 && next > 0.0, "{out}");
    assert_eq!(rows[0][12], "-", "{out}");
}

#[test]
fn bad_bisect_options_are_one_line_errors() {
    usage_errors(&[
        (
            argv("sim --bisect --commits 0"),
            "commits (0) must be at least 1",
        ),
        (
            argv("sim --bisect --drop -5"),
            "drop (-5) must be a positive Elo difference",
        ),
        (
            argv("sim --bisect --commits 8 --culprit 9"),
            "culprit (9) must be a commit from 1 to 8",
        ),
        (
            argv("sim --bisect --commits 8,x"),
            "--commits 8,x: 'x' is not a number",
        ),
        (
            argv("sim --bisect --true-drop 1x..3x"),
            "needs a step: FROM..TO:STEP",
        ),
        (
            argv("sim --bisect --spread 1.5"),
            "spread (1.5) must be strictly between 0 and 1",
        ),
        (
            argv("sim --bisect --alpha 0"),
            "alpha (0) must be between 0 and 1",
        ),
        (argv("sim --bisect --runs 0"), "--runs 0"),
        (
            argv("sim --elo 0 --commits 8"),
            "--commits is an option of spar sim --bisect",
        ),
    ]);
    // clap's own message for a conflict: several lines, exit 2.
    let o = run(&argv("sim --bisect --elo 0"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'--bisect' cannot be used with '--elo <ELO>'"));
}
