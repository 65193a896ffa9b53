//! The Slurm client tools as the coordinator uses them: `sbatch` submits one job array of
//! `spar shard` tasks, `squeue` says which tasks are still pending or running, `scancel`
//! stops them. No accounting (`sacct`) is needed: what a shard has done is in its records.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

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
    let out = cmd
        .output()
        .map_err(|e| CliError::failure(format!("cannot run sbatch: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
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
    let out = Command::new("squeue")
        .args(["-h", "-r", "-o", "%i|%T", "-j", &jobs.join(",")])
        .output()
        .map_err(|e| CliError::failure(format!("cannot run squeue: {e}")))?;
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
    let out = Command::new("scancel")
        .args(jobs)
        .output()
        .map_err(|e| CliError::failure(format!("cannot run scancel: {e}")))?;
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
    fn squeue_lines_give_tasks_and_states() {
        let mut live = BTreeMap::new();
        parse_squeue("12_0|RUNNING\n12_3|PENDING\n13|RUNNING\n", &mut live);
        assert_eq!(live.len(), 2);
        assert_eq!(live[&3], "PENDING");
        assert_eq!(sh_quote("a'b"), r"'a'\''b'");
    }
}
