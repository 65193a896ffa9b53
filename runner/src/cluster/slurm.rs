//! The Slurm client tools as the coordinator uses them: `sbatch` submits one job array of
//! `spar shard` tasks, `squeue` says which tasks are still pending or running, `scancel`
//! stops them. No accounting (`sacct`) is needed: what a shard has done is in its records.
//!
//! Every call is bounded ([`timeout`]): a tool that does not answer (a controller that is
//! down, a hung filesystem) is killed and reported, never waited on for ever. Each tool runs
//! in its own process group, so a Ctrl-C meant for spar cannot kill an `sbatch` half-way
//! through a submission: spar records the array first, then stops it.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::{CliError, CliResult};
use crate::plan::which;

/// The client tools `--slurm` needs.
pub const TOOLS: [&str; 3] = ["sbatch", "squeue", "scancel"];

/// Refuses a cluster run where the Slurm client tools are missing.
pub fn check_tools() -> CliResult {
    for t in TOOLS {
        if which(t).is_none() {
            return Err(CliError::usage(format!(
                "--slurm: no `{t}` on PATH: run on a machine of the cluster that can submit jobs \
                 (a login node), or install the Slurm client tools (Debian: slurm-client)"
            )));
        }
    }
    Ok(())
}

/// How long a Slurm tool may take: `SPAR_SLURM_TIMEOUT` seconds, else 120 s.
pub fn timeout() -> Duration {
    std::env::var("SPAR_SLURM_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(Duration::from_secs(120), Duration::from_secs_f64)
}

/// How long a Slurm call may keep failing before the run gives up: `SPAR_SLURM_GIVE_UP`
/// seconds, else 600 s (a controller failover takes minutes).
pub fn give_up() -> Duration {
    std::env::var("SPAR_SLURM_GIVE_UP")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Duration::from_secs(600), Duration::from_secs_f64)
}

/// The pause between two tries of a failing Slurm call.
pub const RETRY_PAUSE: Duration = Duration::from_secs(2);

/// The one retry policy of every Slurm call (`sbatch`, `squeue`, `scancel`; at submission,
/// adoption, in the watch loop and when stopping): a call that fails (exit code 1: the tool
/// failed, did not answer, or the controller could not be reached) is tried again every
/// [`RETRY_PAUSE`] until it has been failing for [`give_up`]; the first failure of a
/// streak is reported once (`…; retrying`). A refusal (exit code 2: `sbatch` rejecting its
/// options) is not retried.
#[derive(Debug)]
pub struct Retry {
    give_up: Duration,
    pause: Duration,
    /// When the current streak of failures began.
    failing_since: Option<Instant>,
}

impl Default for Retry {
    fn default() -> Self {
        Retry::new()
    }
}

impl Retry {
    /// The policy, its give-up time read from the environment ([`give_up`]).
    pub fn new() -> Retry {
        Retry::with(give_up(), RETRY_PAUSE)
    }

    /// A policy with these times (tests).
    pub fn with(give_up: Duration, pause: Duration) -> Retry {
        Retry {
            give_up,
            pause,
            failing_since: None,
        }
    }

    /// Judges one try: `Ok(Some(value))` when it worked (the streak of failures ends),
    /// `Ok(None)` when it failed and may be tried again (`note` hears the first failure of
    /// a streak), `Err` when it was refused or has been failing for the give-up time.
    pub fn judge<T>(
        &mut self,
        result: CliResult<T>,
        note: &mut dyn FnMut(&str),
    ) -> CliResult<Option<T>> {
        let e = match result {
            Ok(v) => {
                self.failing_since = None;
                return Ok(Some(v));
            }
            Err(e) if e.code != 1 => return Err(e),
            Err(e) => e,
        };
        let since = *self.failing_since.get_or_insert_with(|| {
            note(&format!("{}; retrying", e.message));
            Instant::now()
        });
        if since.elapsed() >= self.give_up {
            self.failing_since = None;
            return Err(CliError::failure(format!(
                "{} (failing for {} s; SPAR_SLURM_GIVE_UP=SECONDS retries longer)",
                e.message,
                since.elapsed().as_secs()
            )));
        }
        Ok(None)
    }

    /// Tries `call` until it works, is refused, has been failing for the give-up time, or
    /// `stop` is raised (Ctrl-C: then its last failure), pausing between tries.
    pub fn call<T>(
        &mut self,
        mut call: impl FnMut() -> CliResult<T>,
        note: &mut dyn FnMut(&str),
        stop: &AtomicBool,
    ) -> CliResult<T> {
        loop {
            let result = call();
            let last = result.as_ref().err().cloned();
            if let Some(v) = self.judge(result, note)? {
                return Ok(v);
            }
            if stop.load(Ordering::SeqCst) {
                self.failing_since = None;
                return Err(last.expect("a failure"));
            }
            std::thread::sleep(self.pause);
        }
    }
}

/// Whether `sbatch`'s message is a passing trouble of the controller (worth another try)
/// rather than a refusal of the job.
fn transient(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "socket timed out",
        "unable to contact slurm controller",
        "resource temporarily unavailable",
        "temporarily unable",
        "zero bytes were transmitted",
        "communication connection failure",
    ]
    .iter()
    .any(|t| m.contains(t))
}

/// Runs a Slurm tool to its end or [`timeout`], whichever comes first; its output. A tool
/// that cannot be started or does not answer in time (killed then) is a failure (exit 1)
/// whose message says what to check.
pub fn run_tool(mut cmd: Command) -> CliResult<Output> {
    use std::os::unix::process::CommandExt;
    let name = cmd.get_program().to_string_lossy().into_owned();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|e| CliError::failure(format!("cannot run {name}: {e}")))?;
    let pipe = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.by_ref().take(1 << 20).read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = pipe(child.stdout.take().map(|o| Box::new(o) as _));
    let err = pipe(child.stderr.take().map(|e| Box::new(e) as _));
    let limit = timeout();
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < limit => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                // The whole group: a tool may have started helpers that hold the pipes.
                let pid = nix::unistd::Pid::from_raw(child.id() as i32);
                let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
                let _ = child.kill();
                let _ = child.wait();
                return Err(CliError::failure(format!(
                    "{name} did not answer within {} s (is the Slurm controller up? `scontrol \
                     ping`; SPAR_SLURM_TIMEOUT=SECONDS waits longer)",
                    limit.as_secs_f64()
                )));
            }
        }
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// The job name of the run in `dir` created at `created`: unique to the run, so that its
/// arrays can be found in the queue even when spar died before it recorded them.
pub fn job_name(command: &str, dir: &Path, created: u64) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(dir.as_os_str().as_encoded_bytes());
    h.update(created.to_le_bytes());
    let hex: String = h.finalize()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("spar-{command}-{hex}")
}

/// The array jobs named `name` that are still in the queue (pending, running, …).
pub fn jobs_named(name: &str) -> CliResult<Vec<String>> {
    let mut cmd = Command::new("squeue");
    cmd.args(["-h", "-o", "%F", "--name", name]);
    let out = run_tool(cmd)?;
    if !out.status.success() {
        return Err(CliError::failure(format!(
            "squeue failed: {}",
            one_line(&String::from_utf8_lossy(&out.stderr))
        )));
    }
    let mut ids: Vec<String> = Vec::new();
    for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        if id.bytes().all(|b| b.is_ascii_digit()) && !ids.iter().any(|i| i == id) {
            ids.push(id.to_string());
        }
    }
    Ok(ids)
}

/// `0-3,5,7-9`: the indices as an `--array` list.
pub fn array_list(indices: &[u64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let start = indices[i];
        let mut end = start;
        while i + 1 < indices.len() && indices[i + 1] == end + 1 {
            i += 1;
            end = indices[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// A word quoted for `sh`.
fn sh_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// What a submission runs.
pub struct Submit<'a> {
    /// The run directory.
    pub dir: &'a Path,
    /// The directory the tasks start in.
    pub cwd: &'a Path,
    /// The spar binary.
    pub spar: &'a Path,
    /// The shard indices to run (one array task each).
    pub indices: &'a [u64],
    /// The number of shards of the run.
    pub shards: u64,
    /// CPUs per task.
    pub cpus: usize,
    /// The job's name.
    pub name: &'a str,
    /// Extra `sbatch` options.
    pub extra: &'a [String],
}

/// Submits one array; returns its job id.
pub fn submit(s: &Submit) -> CliResult<String> {
    let logs = super::log_dir(s.dir);
    std::fs::create_dir_all(&logs)
        .map_err(|e| CliError::usage(format!("cannot create {}: {e}", logs.display())))?;
    let script = format!(
        "exec {} shard {} --of {}",
        sh_quote(&s.spar.to_string_lossy()),
        sh_quote(&s.dir.to_string_lossy()),
        s.shards
    );
    let mut cmd = Command::new("sbatch");
    cmd.arg("--parsable")
        .arg(format!("--job-name={}", s.name))
        .arg(format!("--array={}", array_list(s.indices)))
        .arg(format!("--cpus-per-task={}", s.cpus))
        .arg(format!("--output={}/%A_%a.out", logs.display()))
        .arg(format!("--chdir={}", s.cwd.display()))
        .args(s.extra)
        .arg("--wrap")
        .arg(script);
    let out = run_tool(cmd).map_err(|e| {
        CliError::failure(format!(
            "{}; if it queued the array all the same, --resume finds it by its job name {}",
            e.message, s.name
        ))
    })?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if transient(&err) {
            return Err(CliError::failure(format!(
                "sbatch failed: {}; if it queued the array all the same, --resume finds it by its job name {}",
                one_line(&err),
                s.name
            )));
        }
        return Err(CliError::usage(format!(
            "sbatch refused the job array: {} (check --sbatch-arg options and the partition)",
            one_line(&err)
        )));
    }
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CliError::failure(format!(
            "sbatch printed no job id: {}",
            one_line(&text)
        )));
    }
    Ok(id)
}

/// Submits one array under [`Retry`]: after a failed `sbatch` (which may have queued the
/// array all the same) an array of the run's name that is not in `known` is the one
/// submitted, and is taken rather than submitted twice.
pub fn submit_or_adopt(
    s: &Submit,
    known: &[String],
    retry: &mut Retry,
    note: &mut dyn FnMut(&str),
    stop: &AtomicBool,
) -> CliResult<String> {
    retry.call(
        || match submit(s) {
            Err(e) if e.code == 1 => match jobs_named(s.name) {
                Ok(ids) => ids.into_iter().find(|id| !known.contains(id)).ok_or(e),
                Err(_) => Err(e),
            },
            result => result,
        },
        note,
        stop,
    )
}

/// The first line of a tool's message.
fn one_line(text: &str) -> String {
    text.trim().lines().next().unwrap_or("").to_string()
}

/// The tasks of `jobs` still known to `squeue` (pending, running, completing…): shard
/// index → state. Jobs Slurm has forgotten have none.
pub fn live_tasks(jobs: &[String]) -> CliResult<BTreeMap<u64, String>> {
    let mut live = BTreeMap::new();
    if jobs.is_empty() {
        return Ok(live);
    }
    let mut cmd = Command::new("squeue");
    cmd.args(["-h", "-r", "-o", "%i|%T", "-j", &jobs.join(",")]);
    let out = run_tool(cmd)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("Invalid job id") {
            // Every job listed has left the controller's memory: nothing runs.
            if jobs.len() == 1 {
                return Ok(live);
            }
            for j in jobs {
                live.extend(live_tasks(std::slice::from_ref(j))?);
            }
            return Ok(live);
        }
        return Err(CliError::failure(format!(
            "squeue failed: {}",
            one_line(&err)
        )));
    }
    parse_squeue(&String::from_utf8_lossy(&out.stdout), &mut live);
    Ok(live)
}

/// Reads `JOB_TASK|STATE` lines.
fn parse_squeue(text: &str, live: &mut BTreeMap<u64, String>) {
    for line in text.lines() {
        let Some((id, state)) = line.trim().split_once('|') else {
            continue;
        };
        let Some((_, task)) = id.split_once('_') else {
            continue;
        };
        if let Ok(t) = task.parse::<u64>() {
            live.insert(t, state.to_string());
        }
    }
}

/// Cancels the jobs (every task): Slurm sends SIGTERM, then SIGKILL after its KillWait.
pub fn cancel(jobs: &[String]) -> CliResult {
    if jobs.is_empty() {
        return Ok(());
    }
    let mut cmd = Command::new("scancel");
    cmd.args(jobs);
    let out = run_tool(cmd)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // Jobs that are already gone need no cancelling.
        if !err.contains("Invalid job id") && !err.contains("already completing") {
            return Err(CliError::failure(format!(
                "scancel failed: {}",
                one_line(&err)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_lists_are_ranges() {
        assert_eq!(array_list(&[0, 1, 2, 3]), "0-3");
        assert_eq!(array_list(&[0, 1, 3, 5, 6, 7]), "0-1,3,5-7");
        assert_eq!(array_list(&[4]), "4");
    }

    #[test]
    fn a_tool_that_hangs_is_killed_and_reported() {
        // One process reads the variable at a time in this test binary: set it only here.
        std::env::set_var("SPAR_SLURM_TIMEOUT", "0.3");
        let started = Instant::now();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30 & sleep 30"]);
        let err = run_tool(cmd).unwrap_err();
        std::env::remove_var("SPAR_SLURM_TIMEOUT");
        assert_eq!(err.code, 1);
        assert!(
            err.message.contains("did not answer within 0.3 s"),
            "{}",
            err.message
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the helper's pipe too"
        );
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo 12; echo oops >&2; exit 3"]);
        let out = run_tool(cmd).unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"12\n");
        assert_eq!(out.stderr, b"oops\n");
        assert_ne!(
            job_name("match", Path::new("/a"), 1),
            job_name("match", Path::new("/a"), 2)
        );
        assert!(job_name("sprt", Path::new("/a"), 1).starts_with("spar-sprt-"));
    }

    #[test]
    fn a_failing_call_is_retried_until_it_works() {
        let mut tries = 0;
        let mut notes = Vec::new();
        let never = AtomicBool::new(false);
        let got = Retry::with(Duration::from_secs(60), Duration::from_millis(1)).call(
            || {
                tries += 1;
                if tries <= 2 {
                    Err(CliError::failure("squeue failed: outage"))
                } else {
                    Ok(tries)
                }
            },
            &mut |l| notes.push(l.to_string()),
            &never,
        );
        assert_eq!(got, Ok(3));
        assert_eq!(
            notes,
            ["squeue failed: outage; retrying"],
            "one note a streak"
        );
    }

    #[test]
    fn a_refusal_is_not_retried_and_a_long_failure_gives_up() {
        let never = AtomicBool::new(false);
        let mut tries = 0;
        let mut retry = Retry::with(Duration::from_secs(60), Duration::from_millis(1));
        let got: CliResult<()> = retry.call(
            || {
                tries += 1;
                Err(CliError::usage(
                    "sbatch refused the job array: bad partition",
                ))
            },
            &mut |_| {},
            &never,
        );
        assert_eq!((got.unwrap_err().code, tries), (2, 1));

        let started = Instant::now();
        let got: CliResult<()> = Retry::with(Duration::from_millis(50), Duration::from_millis(5))
            .call(
                || Err(CliError::failure("squeue failed")),
                &mut |_| {},
                &never,
            );
        let e = got.unwrap_err();
        assert_eq!(e.code, 1);
        assert!(
            e.message.starts_with("squeue failed (failing for "),
            "{}",
            e.message
        );
        assert!(started.elapsed() >= Duration::from_millis(50));

        // Ctrl-C ends the tries with the last failure.
        let stop = AtomicBool::new(true);
        let got: CliResult<()> = Retry::with(Duration::from_secs(60), Duration::from_secs(60))
            .call(
                || Err(CliError::failure("scancel failed")),
                &mut |_| {},
                &stop,
            );
        assert_eq!(got.unwrap_err().message, "scancel failed");
    }

    #[test]
    fn judging_keeps_the_streak_across_tries() {
        let mut retry = Retry::with(Duration::from_secs(60), Duration::ZERO);
        let mut notes = 0;
        let mut note = |_: &str| notes += 1;
        let fail = || -> CliResult<u8> { Err(CliError::failure("squeue failed")) };
        assert_eq!(retry.judge(fail(), &mut note), Ok(None));
        assert_eq!(retry.judge(fail(), &mut note), Ok(None));
        assert_eq!(retry.judge(Ok(7), &mut note), Ok(Some(7)));
        assert_eq!(retry.judge(fail(), &mut note), Ok(None));
        assert_eq!(notes, 2, "a note for each streak");
    }

    #[test]
    fn passing_controller_trouble_is_told_from_a_refusal() {
        assert!(transient(
            "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation"
        ));
        assert!(transient(
            "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)"
        ));
        assert!(!transient(
            "sbatch: error: invalid partition specified: nope"
        ));
    }

    #[test]
    fn squeue_lines_give_tasks_and_states() {
        let mut live = BTreeMap::new();
        parse_squeue("12_0|RUNNING\n12_3|PENDING\n13|RUNNING\n", &mut live);
        assert_eq!(live.len(), 2);
        assert_eq!(live[&3], "PENDING");
        assert_eq!(sh_quote("a'b"), r"'a'\''b'");
    }
}
