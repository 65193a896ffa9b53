//! Issue 33: one retry policy for every Slurm call. The coordinator of `spar match --slurm`
//! runs here against a stand-in Slurm — `sbatch`, `squeue` and `scancel` shell scripts first
//! on `PATH`: `sbatch` starts each array task as a local `spar shard` process, `squeue`
//! lists the tasks still running, `scancel` stops them — whose calls can be made to fail, so
//! these tests need no Slurm and run everywhere (cluster_cli.rs runs the real one).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;

/// The stand-in `sbatch`: call N fails with the message in `STATE/sbatch.fail.N`; with
/// `STATE/sbatch.lie.N` it queues the array and then fails all the same (a reply lost on
/// the way back). Each task (`JOB_I.task`) runs the `--wrap` script in `--chdir` with
/// `SLURM_ARRAY_TASK_ID` (its pid in `JOB_I.pid`) and leaves `JOB_I.done` when it ends.
const SBATCH: &str = r#"#!/bin/sh
F=__STATE__
n=$(($(cat $F/sbatch.count 2>/dev/null || echo 0) + 1)); echo $n > $F/sbatch.count
if [ -e $F/sbatch.fail.$n ]; then cat $F/sbatch.fail.$n >&2; exit 1; fi
name=; array=; chdir=; script=
while [ $# -gt 0 ]; do
  case "$1" in
    --job-name=*) name=${1#--job-name=};;
    --array=*) array=${1#--array=};;
    --chdir=*) chdir=${1#--chdir=};;
    --wrap) shift; script=$1;;
  esac
  shift
done
job=$((1000 + n))
echo "$name" > $F/$job.name
for part in $(echo "$array" | tr , ' '); do
  i=${part%-*}; hi=${part#*-}
  while [ $i -le $hi ]; do
    t=$F/${job}_$i
    touch $t.task
    ( cd "$chdir" && { SLURM_ARRAY_TASK_ID=$i sh -c "$script" & echo $! > $t.pid; wait $!; }
      echo done > $t.done ) </dev/null >$t.log 2>&1 &
    i=$((i + 1))
  done
done
if [ -e $F/sbatch.lie.$n ]; then cat $F/sbatch.lie.$n >&2; exit 1; fi
echo "$job"
"#;

/// The stand-in `squeue`: call N fails with the message in `STATE/squeue.fail.N`;
/// `--name NAME` lists the arrays of that name with a task still running, `-j JOBS` their
/// running tasks as `JOB_I|RUNNING`.
const SQUEUE: &str = r#"#!/bin/sh
F=__STATE__
n=$(($(cat $F/squeue.count 2>/dev/null || echo 0) + 1)); echo $n > $F/squeue.count
if [ -e $F/squeue.fail.$n ]; then cat $F/squeue.fail.$n >&2; exit 1; fi
name=; jobs=
while [ $# -gt 0 ]; do
  case "$1" in
    --name) shift; name=$1;;
    -j) shift; jobs=$1;;
  esac
  shift
done
running() { for t in $F/$1_*.task; do [ -e "$t" ] && [ ! -e "${t%.task}.done" ] && echo "$(basename ${t%.task})"; done; }
if [ -n "$name" ]; then
  for f in $F/*.name; do
    [ -e "$f" ] || continue
    job=$(basename $f .name)
    [ "$(cat $f)" = "$name" ] && [ -n "$(running $job)" ] && echo $job
  done
else
  for job in $(echo "$jobs" | tr , ' '); do
    for t in $(running $job); do echo "$t|RUNNING"; done
  done
fi
exit 0
"#;

/// The stand-in `scancel JOB…`: call N fails with the message in `STATE/scancel.fail.N`;
/// otherwise it sends SIGTERM to the `spar shard` process of each running task of the jobs
/// (by its recorded pid).
const SCANCEL: &str = r#"#!/bin/sh
F=__STATE__
n=$(($(cat $F/scancel.count 2>/dev/null || echo 0) + 1)); echo $n > $F/scancel.count
if [ -e $F/scancel.fail.$n ]; then cat $F/scancel.fail.$n >&2; exit 1; fi
for job in "$@"; do
  for p in $F/${job}_*.pid; do
    [ -e "$p" ] && [ ! -e "${p%.pid}.done" ] && kill -TERM "$(cat $p)"
  done
done
exit 0
"#;

/// A stand-in Slurm in `d/slurm` (its state in `d/slurm/state`); returns its directory.
fn fake_slurm(d: &Path) -> PathBuf {
    let bin = d.join("slurm");
    let state = bin.join("state");
    std::fs::create_dir_all(&state).unwrap();
    for (name, script) in [("sbatch", SBATCH), ("squeue", SQUEUE), ("scancel", SCANCEL)] {
        let path = bin.join(name);
        std::fs::write(&path, script.replace("__STATE__", path_str(&state))).unwrap();
        std::process::Command::new("chmod")
            .arg("+x")
            .arg(&path)
            .status()
            .unwrap();
    }
    bin
}

/// Makes calls `calls` of the stand-in `tool` fail with `message` (`how`: `fail`, or `lie`
/// for an `sbatch` that queues and then fails).
fn fail(bin: &Path, tool: &str, how: &str, calls: std::ops::RangeInclusive<u32>, message: &str) {
    for n in calls {
        std::fs::write(bin.join(format!("state/{tool}.{how}.{n}")), message).unwrap();
    }
}

/// How many times the stand-in `tool` was called.
fn calls(bin: &Path, tool: &str) -> u32 {
    std::fs::read_to_string(bin.join(format!("state/{tool}.count")))
        .map_or(0, |t| t.trim().parse().unwrap())
}

/// `spar LINE` in `d` with the stand-in Slurm first on `PATH` and failing calls retried for
/// `give_up` seconds.
fn spar_on(d: &Path, bin: &Path, give_up: &str, line: &str) -> Output {
    let path = std::env::var("PATH").unwrap_or_default();
    spar()
        .current_dir(d)
        .env("PATH", format!("{}:{path}", bin.display()))
        .env("SPAR_SLURM_GIVE_UP", give_up)
        .args(argv(line))
        .output()
        .expect("spawn spar")
}

const MATCH: &str = "match --engine name=dev option.rfp_margin=60 --engine name=base \
                     --each nodes=300 --games 8 --seed 5";

/// The `Score of` line of a run's summary.
fn score(out: &str) -> String {
    out.lines()
        .find(|l| l.starts_with("Score of"))
        .unwrap_or_else(|| panic!("no score line in {out}"))
        .to_string()
}

/// The example of the issue: `squeue` fails at submission (looking for arrays to adopt),
/// then at the first poll of the watch loop, and `scancel` fails when stopping; each is
/// retried, and the run ends as the local run does.
#[test]
fn slurm_calls_that_fail_at_submission_polling_and_stopping_are_retried() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = fake_slurm(d);
    fail(&bin, "squeue", "fail", 1..=3, "squeue: error: fake outage");
    fail(
        &bin,
        "scancel",
        "fail",
        1..=1,
        "scancel: error: fake outage",
    );
    let o = spar_on(
        d,
        &bin,
        "60",
        &format!("{MATCH} --slurm --run-dir run --shards 2 --results r.csv"),
    );
    let out = ok(&o);
    let err = stderr(&o);
    assert!(
        err.contains("squeue: error: fake outage; retrying"),
        "{err}"
    );
    assert!(
        err.contains("scancel: error: fake outage; retrying"),
        "{err}"
    );
    assert_eq!(calls(&bin, "sbatch"), 1, "one array: {err}");
    assert_eq!(lines_in(&d.join("r.csv")), 9, "4 pairs");
    let local = ok(&run_in(d, &argv(&format!("{MATCH} --concurrency 1"))));
    assert_eq!(score(&out), score(&local));
}

/// `sbatch` that fails for a passing controller trouble is retried; one whose array was
/// queued although it reported a failure is adopted, never submitted twice; one that
/// refuses the job is not retried (exit 2).
#[test]
fn a_failing_sbatch_is_retried_and_an_array_it_queued_is_adopted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line = format!("{MATCH} --slurm --run-dir run --shards 2");

    let bin = fake_slurm(d);
    let timed_out =
        "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation";
    fail(&bin, "sbatch", "fail", 1..=1, timed_out);
    let o = spar_on(d, &bin, "60", &line);
    ok(&o);
    assert!(stderr(&o).contains("Socket timed out"), "{}", stderr(&o));
    assert_eq!(calls(&bin, "sbatch"), 2);
    assert_eq!(recorded_jobs(&d.join("run")), ["1002"]);

    let d2 = d.join("lie");
    std::fs::create_dir(&d2).unwrap();
    let bin = fake_slurm(&d2);
    fail(&bin, "sbatch", "lie", 1..=1, timed_out);
    let o = spar_on(&d2, &bin, "60", &line);
    ok(&o);
    assert_eq!(calls(&bin, "sbatch"), 1, "adopted, not submitted again");
    assert_eq!(recorded_jobs(&d2.join("run")), ["1001"]);

    let d3 = d.join("refused");
    std::fs::create_dir(&d3).unwrap();
    let bin = fake_slurm(&d3);
    fail(
        &bin,
        "sbatch",
        "fail",
        1..=1,
        "sbatch: error: invalid partition specified: nope",
    );
    let o = spar_on(&d3, &bin, "60", &line);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("sbatch refused the job array: sbatch: error: invalid partition"),
        "{}",
        stderr(&o)
    );
    assert_eq!(calls(&bin, "sbatch"), 1, "a refusal is not retried");
}

/// A Slurm that keeps failing ends the run after the give-up time with what to do next
/// (exit 1); nothing was submitted.
#[test]
fn a_slurm_that_keeps_failing_gives_up_after_the_give_up_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = fake_slurm(d);
    fail(
        &bin,
        "squeue",
        "fail",
        1..=50,
        "squeue: error: controller down",
    );
    let o = spar_on(
        d,
        &bin,
        "1",
        &format!("{MATCH} --slurm --run-dir run --shards 2"),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("squeue: error: controller down (failing for "),
        "{err}"
    );
    assert!(err.contains("spar merge"), "{err}");
    assert_eq!(
        err.trim()
            .lines()
            .last()
            .map(|l| l.starts_with("spar: error: ")),
        Some(true)
    );
    assert_eq!(calls(&bin, "sbatch"), 0, "nothing submitted");
}
