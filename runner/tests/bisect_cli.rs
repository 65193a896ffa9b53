//! `spar bisect` run as a user runs it, on a repository of 16 commits after the good root
//! (`bisect_repo`: a script engine running the spar under test with the words of a file
//! of the repository; one commit, at a seeded random place, switches to `Eval=hce`): it
//! finds that commit locally; killed during a step (`SPAR_TEST_KILL_AT`) and resumed, it
//! gives the same steps and answer; with `--slurm --shards 2` on the local Slurm (skipped
//! without one, unless `CI=true`) the same steps again. Skipped commits (a broken build,
//! a bench that is not its message's), a gate that finds no regression, and bad input.
//!
//! The drop is 50 normalized Elo: an SPRT of a commit against an identical engine (a good
//! step) needs about 200 games at [-50, 0], against about 5000 at [-10, 0]; the weak
//! commit is some 150 normalized Elo worse at `nodes=100`.

mod bisect_repo;
mod common;

use std::path::Path;
use std::process::Output;

use bisect_repo::{make_repo, weak_place};
use common::*;

/// The engine words and SPRT options every bisect of these tests plays with.
const PLAY: &str = "--each nodes=100 --drop 50 --seed 3 --quiet";

/// `spar bisect` of `repo` from its root to `main` into `run` with `extra` options.
fn bisect(d: &Path, repo: &Path, good: &str, run: &str, extra: &str) -> Output {
    let line = format!(
        "bisect --repo {} --good {good} --bad main --run-dir {run} {PLAY} {extra}",
        repo.display()
    );
    run_in(d, &argv(&line))
}

/// The lines of a bisect's steps file.
fn steps(run_dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run_dir.join("steps.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A bisect's own lines: its steps' and its answer (after its blank line), without the
/// summaries the steps' SPRTs print as `spar sprt` does.
fn bisect_lines(out: &str) -> Vec<String> {
    let is_step = |l: &str| {
        l.starts_with("gate: ")
            || l.strip_prefix("step ")
                .and_then(|r| r.split_once(':'))
                .is_some_and(|(k, _)| k.parse::<u32>().is_ok())
    };
    let answer = out.rsplit("\n\n").next().unwrap_or_default();
    out.lines()
        .filter(|l| is_step(l))
        .chain(answer.lines())
        .map(str::to_string)
        .collect()
}

/// The numbers of each step (what must not depend on where or how often it ran).
fn numbers(steps: &[serde_json::Value]) -> Vec<String> {
    steps
        .iter()
        .map(|s| {
            let keys = [
                "role", "commit", "outcome", "games", "wins", "losses", "draws",
            ];
            let mut v: Vec<String> = keys.iter().map(|k| s[*k].to_string()).collect();
            for k in ["elo", "elo_pm", "llr", "alpha", "beta"] {
                v.push(format!("{:.6}", s[k].as_f64().unwrap()));
            }
            v.join(" ")
        })
        .collect()
}

#[test]
fn the_weak_commit_is_found_locally_after_a_kill_and_on_slurm_with_the_same_steps() {
    let seed = std::env::var("BISECT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs()
        });
    let weak = weak_place(16, seed);
    println!("the weak commit: {weak} of 16 (BISECT_SEED={seed} replays it)");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let repo = make_repo(&d.join("eng"), 16, weak, &[], &[]);
    let root = &repo.shas[0];

    let out = ok(&bisect(d, &d.join("eng"), root, "local", "--concurrency 2"));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.last(), Some(&repo.shas[weak].as_str()), "{out}");
    assert!(
        out.contains(&format!(
            "First bad commit: {} \"commit {weak}: a simpler evaluation\"",
            repo.shas[weak]
        )),
        "{out}"
    );
    let gate = lines
        .iter()
        .find(|l| l.starts_with("gate: "))
        .expect("the gate's line");
    assert!(gate.ends_with(": regression"), "{out}");
    assert!(out.contains("Total: "), "{out}");
    let local = steps(&d.join("local"));
    let tested: Vec<u64> = local
        .iter()
        .skip(1)
        .map(|s| s["commit"].as_u64().unwrap())
        .collect();
    assert!(tested.len() <= 4, "at most log2(16) steps: {tested:?}");
    for s in &local {
        let bad = s["commit"].as_u64().unwrap() as usize >= weak;
        assert_eq!(s["outcome"], if bad { "bad" } else { "good" }, "{s}");
        assert!(d
            .join("local")
            .join(s["dir"].as_str().unwrap())
            .join("results.csv")
            .is_file());
    }
    // The plan holds the line, good first.
    let plan = json(&d.join("local/bisect.json"));
    assert_eq!(plan["commits"].as_array().unwrap().len(), 17);
    assert_eq!(plan["commits"][16]["sha"], repo.shas[16].as_str());
    assert_eq!(plan["commits"][3]["bench"], bisect_repo::BENCH);

    // Killed in the middle of the first search step, then resumed: the same steps.
    let gate_games = local[0]["games"].as_u64().unwrap();
    let first_games = local[1]["games"].as_u64().unwrap();
    let kill_at = gate_games + 1 + first_games / 2;
    let mut c = spar();
    c.current_dir(d)
        .env("SPAR_TEST_KILL_AT", kill_at.to_string());
    let line = format!(
        "bisect --repo {} --good {root} --bad main --run-dir killed {PLAY} --concurrency 2",
        d.join("eng").display()
    );
    let o = c.args(argv(&line)).output().unwrap();
    assert_eq!(o.status.code(), Some(137), "{}", stderr(&o));
    assert_eq!(steps(&d.join("killed")).len(), 1, "the gate only");
    let o = bisect(d, &d.join("eng"), root, "killed", "--concurrency 1");
    usage_error(&o, "already holds a bisect");
    let resumed = ok(&bisect(
        d,
        &d.join("eng"),
        root,
        "killed",
        "--resume --concurrency 1",
    ));
    assert_eq!(
        bisect_lines(&resumed),
        bisect_lines(&out),
        "the same lines, the steps before the kill printed again"
    );
    assert_eq!(numbers(&steps(&d.join("killed"))), numbers(&local));

    // The same bisect with each step a cluster run of 2 shards: the same steps.
    let Some(conf) = cluster("the_weak_commit_is_found_on_slurm_with_the_same_steps") else {
        return;
    };
    let mut c = spar();
    c.current_dir(d).env("SLURM_CONF", conf);
    let line = format!(
        "bisect --repo {} --good {root} --bad main --run-dir slurm {PLAY} --slurm --shards 2",
        d.join("eng").display()
    );
    let sharded = ok(&c.args(argv(&line)).output().unwrap());
    assert_eq!(
        sharded.lines().last(),
        Some(repo.shas[weak].as_str()),
        "{sharded}"
    );
    assert_eq!(numbers(&steps(&d.join("slurm"))), numbers(&local));
    assert!(d
        .join("slurm")
        .join(local[0]["dir"].as_str().unwrap())
        .join("manifest.json")
        .is_file());
}

#[test]
fn commits_that_do_not_build_or_bench_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 2 does not build: 3 is tested instead (good), then 4 is the first bad commit.
    let repo = make_repo(&d.join("a"), 4, 4, &[2], &[]);
    let out = ok(&bisect(
        d,
        &d.join("a"),
        &repo.shas[0],
        "ra",
        "--known-bad --concurrency 2",
    ));
    assert_eq!(out.lines().last(), Some(repo.shas[4].as_str()), "{out}");
    let s = steps(&d.join("ra"));
    assert_eq!(s[0]["outcome"], "skip");
    let why = s[0]["why"].as_str().unwrap();
    assert!(
        why.contains("the build failed") && why.contains("build.log"),
        "{why}"
    );
    assert!(d
        .join("ra")
        .join(s[0]["dir"].as_str().unwrap())
        .join("build.log")
        .is_file());
    assert!(out.contains(": skipped (engine a at"), "{out}");
    assert_eq!(s[1]["commit"], 3);
    assert_eq!(s[1]["outcome"], "good");
    let a = repo;

    // 2 does not build, 3 states another bench (--check-bench), 1 is good: the first bad
    // commit is one of 2..4, which is said, and the exit code is 1.
    let repo = make_repo(&d.join("b"), 4, 4, &[2], &[3]);
    let o = bisect(
        d,
        &d.join("b"),
        &repo.shas[0],
        "rb",
        "--known-bad --check-bench --concurrency 2",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("its bench is 4242, its message says 4243"),
        "{out}"
    );
    assert!(
        out.contains("The first bad commit is one of these 3"),
        "{out}"
    );
    for sha in &repo.shas[2..=4] {
        assert!(out.contains(sha.as_str()), "{out}");
    }
    assert!(
        stderr(&o).contains("the first bad commit is one of"),
        "{}",
        stderr(&o)
    );

    // No regression between two good commits: the gate says so, exit 0.
    let line = format!(
        "bisect --repo {} --good {} --bad {} --run-dir rc {PLAY} --concurrency 2",
        d.join("a").display(),
        a.shas[0],
        a.shas[1]
    );
    let out = ok(&run_in(d, &argv(&line)));
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("no regression of at least 50 between good"),
        "{out}"
    );
    assert_eq!(steps(&d.join("rc")).len(), 1, "the gate only");
}

#[test]
fn bad_input_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let repo = make_repo(&d.join("e"), 2, 2, &[], &[]);
    let r = d.join("e");
    let r = r.to_str().unwrap();
    let plain = d.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let (g, b) = (repo.shas[0].as_str(), repo.shas[2].as_str());
    let base = |rest: &str| {
        format!(
            "bisect --repo {r} --run-dir {}/x {PLAY} {rest}",
            d.display()
        )
    };
    let cases: Vec<(String, &str)> = vec![
        (
            base("--good nope --bad main"),
            "--good nope: engine e: unknown revision 'nope'",
        ),
        (
            base(&format!("--good {b} --bad {g}")),
            "is not an ancestor of --bad",
        ),
        (
            base(&format!("--good {b} --bad main")),
            "are the same commit",
        ),
        (
            base(&format!("--good {g} --bad main")).replace("--drop 50", "--drop 0"),
            "--drop 0: give",
        ),
        (
            base(&format!("--good {g} --bad main --alpha 2")),
            "--alpha 2: give a rate",
        ),
        (
            base(&format!("--good {g} --bad main --build cmake")),
            "--build cmake",
        ),
        (
            format!("bisect --repo {r} --good {g} --bad main {PLAY}"),
            "needs --run-dir",
        ),
        (
            format!(
                "bisect --repo {} --good {g} --bad main --run-dir {}/y {PLAY}",
                plain.display(),
                d.display()
            ),
            "not a git repository",
        ),
        (
            format!(
                "bisect --repo {}/none --good {g} --bad main --run-dir {}/y {PLAY}",
                d.display(),
                d.display()
            ),
            "no such directory",
        ),
    ];
    for (line, needle) in &cases {
        let o = run(&argv(line));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{line}: {err}");
        assert!(err.contains(needle), "{line}: expected '{needle}' in {err}");
        assert!(!err.contains("panicked"), "{line}: {err}");
    }
    // A URL is mirrored into the builds' cache (file:// works offline); a resumed bisect
    // with other words is refused, naming what differs.
    let url = format!("file://{r}");
    let out = ok(&run_in(
        d,
        &argv(&format!(
            "bisect --repo {url} --good {g} --bad main --run-dir z {PLAY} --known-bad --concurrency 2"
        )),
    ));
    assert_eq!(out.lines().last(), Some(b), "{out}");
    assert!(d.join("z/builds/.mirror.git/HEAD").is_file());
    assert!(
        d.join("z/builds").join(b).join("e").is_file(),
        "named after the URL"
    );
    let o = run_in(
        d,
        &argv(&format!(
            "bisect --repo {url} --good {g} --bad main --run-dir z --each nodes=100 --drop 40 \
             --seed 3 --quiet --known-bad --resume"
        )),
    );
    usage_error(
        &o,
        "--resume: --drop differs from the bisect's plan: it has 50, this command 40",
    );
}
