//! What a tune reports, through the binary: `spar status` of a tune's trajectory CSV (text
//! and HTML, the signal verdicts of constructed trajectories, live or not), the averaged θ
//! at the end of `spar tune` and what `--out` writes, and the `spar tune --probe` preflight.

mod common;

use std::path::Path;

use common::*;

const TUNE: &[&str] = &[
    "tune",
    "--no-verify",
    "--param",
    "rfp_margin",
    "--param",
    "lmr_base",
    "--each",
    "nodes=300",
    "--pairs-per-iteration",
    "2",
    "--seed",
    "3",
    "--quiet",
];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    TUNE.iter().copied().chain(extra.iter().copied()).collect()
}

/// The θ columns of a trajectory's rows.
fn thetas(csv: &Path, params: usize) -> Vec<Vec<f64>> {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .skip(2)
                .take(params)
                .map(|v| v.parse().unwrap())
                .collect()
        })
        .collect()
}

/// The line of a status table that starts with `name` and a space.
fn row<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no line for {name} in:\n{text}"))
}

#[test]
fn the_status_of_a_tune_csv_shows_its_values_and_the_page_draws_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&run_in(
        d,
        &with(&["--iterations", "8", "--csv", "run.csv"]),
    ));
    let out = ok(&run_in(d, &["status", "run.csv", "--html", "run.html"]));
    assert!(out.starts_with("Tune run.csv\n"), "{out}");
    assert!(
        out.contains(
            "Iterations: 8/8 (100.0 %), 32 games; 2 pairs (4 games) per iteration, 2 parameters"
        ),
        "{out}"
    );
    assert!(out.contains("games/s; Finished"), "{out}");
    let theta = thetas(&d.join("run.csv"), 2);
    let last = theta.last().unwrap();
    for (i, name) in ["rfp_margin", "lmr_base"].iter().enumerate() {
        let line = row(&out, name);
        let cells: Vec<&str> = line.split_whitespace().collect();
        // parameter, start, current, min, max, Δ/c_end, …
        assert_eq!(cells[1], "75", "{line}");
        assert_eq!(cells[2], format!("{:.2}", last[i]), "{line}");
        let verdict = line.rsplit("  ").next().unwrap().trim();
        assert!(
            ["signal", "noise", "still", "at bound"].contains(&verdict),
            "{line}"
        );
    }
    assert!(out.contains("z = moved / walk"));
    let page = std::fs::read_to_string(d.join("run.html")).unwrap();
    assert_eq!(page.matches("<svg").count(), 2, "one chart per parameter");
    assert!(
        !page.contains("http-equiv"),
        "a finished run's page does not reload"
    );
    assert!(page.contains(&format!("<td>{:.2}</td>", last[0])));
    assert!(page.contains("<td>rfp_margin</td>") && page.contains("<td>lmr_base</td>"));
    for external in ["src=", "href=", "<script"] {
        assert!(!page.contains(external), "{external}");
    }
    // --plot still draws the same file.
    ok(&run_in(d, &["tune", "--plot", "run.csv"]));

    // The page may not overwrite what it reads; a trajectory without its record is one line.
    usage_error(
        &run_in(d, &["status", "run.csv", "--html", "run.csv.run.json"]),
        "run.csv.run.json",
    );
    std::fs::copy(d.join("run.csv"), d.join("bare.csv")).unwrap();
    usage_error(
        &run_in(d, &["status", "bare.csv"]),
        "bare.csv: its run record bare.csv.run.json is missing",
    );
}

/// A trajectory of `steps` (one list per parameter) with its run record, as `spar tune`
/// writes them, started `ago` seconds before now.
fn write_tune(d: &Path, name: &str, params: &[&str], steps: &[Vec<f64>], iterations: u64) {
    let n = params.len();
    let mut text = String::from("iteration,games");
    for prefix in ["", "c_", "r_"] {
        for p in params {
            text += &format!(",{prefix}{p}");
        }
    }
    text.push('\n');
    let mut theta = vec![100.0; n];
    text += &format!("0,0{}{}\n", ",100".repeat(n), ",".repeat(2 * n));
    for k in 0..steps[0].len() {
        for (t, s) in theta.iter_mut().zip(steps) {
            *t += s[k];
        }
        let values: Vec<String> = theta.iter().map(|t| t.to_string()).collect();
        text += &format!(
            "{},{},{}{}{}\n",
            k + 1,
            4 * (k + 1),
            values.join(","),
            ",4".repeat(n),
            ",0.002".repeat(n)
        );
    }
    std::fs::write(d.join(name), text).unwrap();
    let record = serde_json::json!({
        "spar_run": 1,
        "command": "tune",
        "fields": {
            "params": params.iter().map(|p| format!("{p} 100 0 400 4 0.002")).collect::<Vec<_>>(),
            "iterations": iterations,
            "pairs-per-iteration": 2,
        },
        "session": { "started": 0.0, "games": 0 },
        "verify": { "decision": "H0", "games": 96 },
    });
    std::fs::write(
        d.join(format!("{name}.run.json")),
        serde_json::to_string_pretty(&record).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_drifting_parameter_is_signal_and_a_wandering_one_noise() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Up, up, down: a third of a step per iteration on average. Up, down: nowhere. Up all
    // the way: into its max (400). Never moving.
    let drift: Vec<f64> = (0..240)
        .map(|k| if k % 3 == 2 { -1.0 } else { 1.0 })
        .collect();
    let wander: Vec<f64> = (0..240)
        .map(|k| if k % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let bound = vec![1.25; 240];
    let still = vec![0.0; 240];
    write_tune(
        d,
        "t.csv",
        &["drift", "wander", "pressed", "still"],
        &[drift, wander, bound, still],
        1000,
    );
    let out = ok(&run_in(d, &["status", "t.csv", "--html", "t.html"]));
    assert!(row(&out, "drift").ends_with("  signal"), "{out}");
    assert!(row(&out, "wander").ends_with("  noise"), "{out}");
    assert!(row(&out, "pressed").ends_with("  at bound"), "{out}");
    assert!(row(&out, "still").ends_with("  still"), "{out}");
    // drift: over iterations 121..240, 80 steps up and 40 down: moved 40, walk √120,
    // z = 3.65; Δ/c_end = 80 / 4 = +20.
    let cells: Vec<&str> = row(&out, "drift").split_whitespace().collect();
    assert_eq!(cells[2], "180.00");
    assert_eq!(cells[5], "+20.00");
    assert_eq!(cells[8], "+40.00");
    assert_eq!(cells[9], format!("{:.2}", 120f64.sqrt()));
    assert_eq!(cells[10], format!("{:+.2}", 40.0 / 120f64.sqrt()));
    assert!(
        out.contains("Iterations: 240/1000 (24.0 %), 960 games"),
        "{out}"
    );
    // The record's verification verdict is one of the lines.
    assert!(
        out.contains("Verification SPRT tuned vs start: failed (H0: the tuned values are not better; keep the start values) after 96 games"),
        "{out}"
    );
    // No spar holds the CSV: not live, said so, and the page does not reload.
    assert!(
        out.contains("Not running (no spar tune holds t.csv)"),
        "{out}"
    );
    assert!(!out.contains("ETA"), "{out}");
    let page = std::fs::read_to_string(d.join("t.html")).unwrap();
    assert!(!page.contains("http-equiv") && page.contains("Not running."));
    assert!(page.contains("<td class=\"signal\">signal</td>"));

    // While a tune holds the CSV's lock the run is live: an ETA from the session's rate,
    // and a page that reloads.
    let lock = std::fs::File::create(d.join("t.csv.lock")).unwrap();
    lock.lock().unwrap();
    let out = ok(&run_in(d, &["status", "t.csv", "--html", "t.html"]));
    assert!(out.contains("games/s; ETA "), "{out}");
    assert!(!out.contains("Not running"), "{out}");
    let page = std::fs::read_to_string(d.join("t.html")).unwrap();
    assert!(page.contains("http-equiv=\"refresh\""));
    drop(lock);
}

#[test]
fn the_end_of_a_tune_prints_the_averaged_values_that_out_writes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = ok(&run_in(
        d,
        &with(&[
            "--iterations",
            "12",
            "--csv",
            "a.csv",
            "--out",
            "a.txt",
            "--concurrency",
            "2",
        ]),
    ));
    // The last quarter of 12 iterations: 10, 11, 12.
    assert!(
        out.contains("Averaged θ over iterations 10..12 (the last 25 %, 3 iterates)"),
        "{out}"
    );
    let theta = thetas(&d.join("a.csv"), 2);
    assert_eq!(theta.len(), 13);
    let mut expected = String::new();
    for (i, name) in ["rfp_margin", "lmr_base"].iter().enumerate() {
        let mean = theta[10..].iter().map(|t| t[i]).sum::<f64>() / 3.0;
        let line = row(&out, name);
        let cells: Vec<&str> = line.split_whitespace().collect();
        // parameter, start, last, average, ± (none: under 4 iterates)
        assert_eq!(cells[1], "75.00", "{line}");
        assert_eq!(cells[2], format!("{:.2}", theta[12][i]), "{line}");
        assert_eq!(cells[3], format!("{mean:.2}"), "{line}");
        assert_eq!(cells[4], "-", "{line}");
        expected += &format!("{name}, {}\n", mean.round() as i64);
    }
    let written = std::fs::read_to_string(d.join("a.txt")).unwrap();
    assert_eq!(written, expected, "--out holds the averaged values");
    assert!(out.contains(&format!(
        "Parameter values, averaged (OpenBench, `--engine … params=FILE`; what --out writes):\n{expected}"
    )));
    assert!(out.contains(&format!(
        "const RFP_MARGIN: i32 = {};",
        expected.lines().next().unwrap().split(", ").nth(1).unwrap()
    )));
    let last: String = ["rfp_margin", "lmr_base"]
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{n}, {}\n", theta[12][i].round() as i64))
        .collect();
    assert!(
        out.contains(&format!("Last iterate (iteration 12):\n{last}")),
        "{out}"
    );
}

#[test]
fn the_probe_measures_each_parameter_deterministically() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // c_end 0.4 rounds to the start on both sides: nothing to play.
    std::fs::write(
        d.join("spsa.txt"),
        "rfp_margin, int, 75, 20, 200, 30, 0.002\nlmr_base, int, 75, 0, 200, 0.4, 0.002\n",
    )
    .unwrap();
    let probe = |concurrency: &'static str| {
        ok(&run_in(
            d,
            &[
                "tune",
                "--params",
                "spsa.txt",
                "--each",
                "nodes=300",
                "--probe",
                "--probe-games",
                "12",
                "--concurrency",
                concurrency,
                "--quiet",
            ],
        ))
    };
    let out = probe("2");
    assert!(
        out.starts_with("Probe: θ + c_end against θ − c_end, 12 games (6 pairs) per parameter"),
        "{out}"
    );
    let rfp = row(&out, "rfp_margin");
    let cells: Vec<&str> = rfp.split_whitespace().collect();
    // parameter, c_end, +, −, W-D-L, …
    assert_eq!(&cells[1..4], &["30.0", "105", "45"], "{rfp}");
    let wdl: Vec<u64> = cells[4].split('-').map(|n| n.parse().unwrap()).collect();
    assert_eq!(wdl.iter().sum::<u64>(), 12, "{rfp}");
    assert!(rfp.contains(" ± "), "{rfp}");
    let lmr = row(&out, "lmr_base");
    assert!(lmr.contains("0-0-0") && lmr.contains("identical"), "{lmr}");
    assert!(out.contains("No effect at ±c_end: lmr_base"), "{out}");
    assert!(out.contains("r_end: 0.002"), "{out}");
    assert!(out.contains("Budget: about "), "{out}");
    assert_eq!(probe("1"), out, "the same at any concurrency");
    // Nothing of a tune is written.
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 1);

    usage_error(
        &run_in(
            d,
            &[
                "tune",
                "--params",
                "spsa.txt",
                "--each",
                "nodes=300",
                "--probe",
                "--probe-games",
                "7",
            ],
        ),
        "--probe-games 7: give an even number",
    );
    let o = run_in(
        d,
        &[
            "tune",
            "--params",
            "spsa.txt",
            "--each",
            "nodes=300",
            "--probe",
            "--csv",
            "x.csv",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("'--probe' cannot be used with '--csv"));
}

#[test]
fn the_probe_drives_an_external_engine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("spsa.txt"),
        "rfp_margin, int, 75, 20, 200, 30, 0.002\nlmr_base, 75, 0, 200, 40, 0.002\n\
         SyzygyProbeDepth, 50, 1, 100, 10, 0.002\n",
    )
    .unwrap();
    let cmd = format!("cmd={}", env!("CARGO_BIN_EXE_spar"));
    let out = ok(&run_in(
        d,
        &[
            "tune",
            "--params",
            "spsa.txt",
            "--engine",
            &cmd,
            "args=uci",
            "option.Hash=1",
            "--each",
            "nodes=300",
            "--probe",
            "--probe-games",
            "4",
            "--concurrency",
            "2",
            "--quiet",
        ],
    ));
    for (name, plus, minus) in [("rfp_margin", "105", "45"), ("lmr_base", "115", "35")] {
        let cells: Vec<String> = row(&out, name)
            .split_whitespace()
            .map(String::from)
            .collect();
        assert_eq!(
            (cells[2].as_str(), cells[3].as_str()),
            (plus, minus),
            "{out}"
        );
        let wdl: u64 = cells[4].split('-').map(|n| n.parse::<u64>().unwrap()).sum();
        assert_eq!(wdl, 4, "{out}");
    }
    // Without tables the probe depth changes nothing: both games of every pair are the same
    // moves, and the verdict says so.
    let none = row(&out, "SyzygyProbeDepth");
    assert!(
        none.contains(" 2/2 ") && none.contains("no effect"),
        "{none}"
    );
    assert!(
        out.contains("No effect at ±c_end: SyzygyProbeDepth"),
        "{out}"
    );
}
