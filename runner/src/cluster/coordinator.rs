//! The coordinator of `spar match|sprt|datagen --slurm`: it only submits, polls, decides and
//! cancels; all state lives in the run directory, so it can die and `--resume` reattaches.
//!
//! 1. [`setup::prepare`](super::setup::prepare) checks the cluster options, the Slurm tools
//!    and the run directory (before anything is built or submitted), and the command checks
//!    everything else.
//! 2. [`setup::plan_manifest`](super::setup::plan_manifest) copies `git=`/`features=` builds
//!    into the run directory and writes the manifest;
//!    [`setup::reattach`](super::setup::reattach) reads it back for `--resume` and refuses
//!    other options.
//! 3. [`run`] submits one array `0-(N-1)`, then every [`POLL`] reads the shard records that
//!    changed, shows the live line, and every [`SQUEUE_EVERY`] asks `squeue` which tasks
//!    are alive: a task that is gone twice in a row with its work not done (failed,
//!    cancelled, preempted, walltime) is resubmitted as a smaller array, at most
//!    [`MAX_RESUBMITS`] times per shard. A shard that refused to run (exit 2: a manifest
//!    mismatch) ends the run with its message. An SPRT without a fixed total keeps
//!    `RUN_DIR/horizon` at its count plus a window ([`horizon`](super::horizon)); a shard
//!    that paused there is resubmitted, not counted as failed, once the count nears its pair.
//! 4. At the end (every pair played, the SPRT decided, or Ctrl-C) it writes `RUN_DIR/STOP`,
//!    cancels the array, waits until no task is left, merges and prints what the local
//!    command would.
//!
//! Nothing is left running unwatched: on *any* exit (a refusal, a failure, a Slurm tool
//! that keeps failing or hangs) the coordinator writes STOP, cancels, merges what is there
//! and says how to merge again and resume. Every Slurm call that fails (`sbatch`, `squeue`,
//! `scancel`: at submission, adoption, in the watch loop and when stopping) is retried by
//! one policy, [`slurm::Retry`], for [`slurm::give_up`] (600 s). One coordinator per run
//! directory (`coordinator.lock`, freed when it dies). Ctrl-C is handled from before the
//! submission on, and each array's job name is unique to the run, so an array submitted by
//! a coordinator that died before recording it is found in the queue and adopted by
//! `--resume`, never submitted twice.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::horizon;
use super::manifest::Manifest;
use super::records::{NotCounted, Records};
use super::setup::Cluster;
use super::slurm;
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::input::SMALL_FILE;
use crate::interrupt;
use crate::job::{Job, Unit};
use crate::play::ordered::Stride;
use crate::progress::Progress;
use crate::stdout;

/// How often the coordinator reads the shard records.
pub const POLL: Duration = Duration::from_millis(500);

/// How often it asks `squeue` which tasks are alive.
pub const SQUEUE_EVERY: Duration = Duration::from_secs(2);

/// Resubmissions of one shard before the run gives up.
pub const MAX_RESUBMITS: u32 = 3;

/// How long the coordinator waits for cancelled tasks to leave the queue.
const CANCEL_WAIT: Duration = Duration::from_secs(60);

/// The array jobs of a run (`RUN_DIR/jobs.json`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct JobsFile {
    /// Job ids, first submission first.
    pub jobs: Vec<String>,
    /// Resubmissions per shard.
    pub resubmitted: BTreeMap<u64, u32>,
}

impl JobsFile {
    /// The jobs file of `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join("jobs.json")
    }

    /// Reads it (empty when missing or unreadable).
    pub fn read(dir: &Path) -> JobsFile {
        crate::files::input::read_optional(&JobsFile::path(dir), "the jobs file", SMALL_FILE)
            .ok()
            .flatten()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    fn write(&self, dir: &Path) -> CliResult {
        let text = serde_json::to_string_pretty(self).expect("json") + "\n";
        write_atomically(&JobsFile::path(dir), &text).map_err(|e| {
            CliError::failure(format!(
                "cannot write {}: {e}",
                JobsFile::path(dir).display()
            ))
        })
    }
}

/// A run to coordinate.
pub struct Submission<'a> {
    /// The kind of job.
    pub job: &'a dyn Job,
    /// The cluster options.
    pub cluster: &'a Cluster,
    /// The run's manifest.
    pub manifest: &'a Manifest,
    /// No progress display.
    pub quiet: bool,
}

/// Whether shard `i` has done all its work (never, for an SPRT without `--games`).
fn shard_complete(m: &Manifest, records: &Records, i: u64) -> bool {
    match m.total {
        Some(t) => records.shards[i as usize].done >= Stride::shard(i, m.shards).count_below(t),
        None => false,
    }
}

/// Games played so far by the records of a run whose total counts `unit` (pairs: the games
/// of the pairs counted, see [`Records::counted`]).
pub fn games_played(records: &Records, unit: Unit) -> u64 {
    match unit {
        Unit::Games => records.games(),
        Unit::Pairs => 2 * records.counted_pairs(),
    }
}

/// Submits, watches, stops and merges; prints the summary.
pub fn run(s: &Submission) -> CliResult {
    let (c, m, job) = (s.cluster, s.manifest, s.job);
    let dir = &c.dir;
    if c.plan_only {
        return stdout::print_lines(&[format!(
            "Wrote {}: run `spar shard {} --index I` for I in 0..{} (any scheduler), then `spar merge {}`",
            Manifest::path(dir).display(),
            dir.display(),
            m.shards - 1,
            dir.display()
        )]);
    }
    // From here on an interrupt is a graceful stop, also during the submission: the array
    // is recorded first, then stopped.
    let abort = interrupt::on_ctrl_c("stopping the shards and merging");
    let _ = std::fs::remove_file(super::stop_file(dir));
    // Failures of earlier attempts (a refusal the user has since fixed) are void: what
    // still fails fails again and is recorded again.
    for i in 0..m.shards {
        let _ = std::fs::remove_file(super::shard_failed(dir, i));
    }
    let mut jobs = JobsFile::read(dir);
    let watched = watch(s, &mut jobs, &abort);

    // Whatever ended the watch, no shard plays on unwatched.
    let stopped = if jobs.jobs.is_empty() {
        // Nothing recorded; but an sbatch that failed or hung may have queued the array all
        // the same: STOP ends its tasks as they start.
        if watched.is_err() {
            let _ = write_atomically(&super::stop_file(dir), "stop\n");
        }
        Ok(Duration::ZERO)
    } else {
        stop(dir, &jobs.jobs)
    };
    if let (Ok(took), false, false) = (&stopped, s.quiet, jobs.jobs.is_empty()) {
        eprintln!(
            "Stopped job array {}: no task left {:.1} s after the end of the run",
            jobs.jobs.join(", "),
            took.as_secs_f64()
        );
    }
    let merged = job.merge(dir, m, None);
    if let Ok(merged) = &merged {
        stdout::print_lines(&merged.lines)?;
        if !s.quiet {
            for note in &merged.notes {
                eprintln!("{note}");
            }
        }
    }
    // What to do next: merging always works; resuming only helps a run that failed, not
    // one refused for its input (exit 2), which must be fixed first.
    let next = |e: CliError| CliError {
        message: format!(
            "{}; the shards were told to stop ({}): `spar merge {}` writes the files from what \
             they recorded{}",
            e.message,
            super::stop_file(dir).display(),
            dir.display(),
            if e.code == 2 {
                ""
            } else {
                ", and the same command with --resume continues the run"
            }
        ),
        code: e.code,
    };
    watched.map_err(next)?;
    stopped.map_err(next)?;
    let merged = merged.map_err(next)?;
    let unit = job.unit().plural();
    if !abort.load(Ordering::SeqCst)
        && m.total.is_some()
        && !merged.complete
        && m.plan.as_ref().is_none_or(|p| p.sprt.is_none())
    {
        return Err(CliError::failure(format!(
            "the merge of {} found {} of {} {}: run `spar status {}`",
            dir.display(),
            merged.done,
            m.total.unwrap_or(0),
            unit,
            dir.display()
        )));
    }
    if abort.load(Ordering::SeqCst) {
        stdout::print_lines(&[format!(
            "Interrupted: {} complete {} merged; rerun with --resume to continue",
            merged.done, unit
        )])?;
        return Err(CliError::interrupted());
    }
    Ok(())
}

/// Submits (or adopts) the array and watches it until the run is over, interrupted, or
/// fails; `jobs` holds every array submitted, also when it fails.
fn watch(s: &Submission, jobs: &mut JobsFile, abort: &AtomicBool) -> CliResult {
    let (c, m, job) = (s.cluster, s.manifest, s.job);
    let dir = &c.dir;
    let exe = m.binary.path.clone();
    let mut records = Records::new(dir, m, job.records(m)?);
    records.refresh()?;
    // An SPRT without a fixed total: its shards play up to the horizon, written before
    // any shard starts.
    let open_sprt = m.total.is_none() && m.plan.as_ref().is_some_and(|p| p.sprt.is_some());
    let mut horizon = open_sprt
        .then(|| horizon::Writer::new(dir, horizon::window(m.shards, &super::shard::process_env)));
    if let Some(h) = &mut horizon {
        h.update(records.counted_pairs())?;
    }
    let name = slurm::job_name(&m.command, dir, m.created);
    // One policy for every Slurm call: a failing one is retried (slurm::Retry).
    let mut retry = slurm::Retry::new();
    let quiet = s.quiet;
    let mut note = |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };
    let submit = |indices: &[u64],
                  known: &[String],
                  retry: &mut slurm::Retry,
                  note: &mut dyn FnMut(&str)|
     -> CliResult<String> {
        let submit = slurm::Submit {
            dir,
            cwd: &m.cwd,
            spar: &exe,
            indices,
            shards: m.shards,
            cpus: m.cpus_per_shard,
            name: &name,
            extra: &c.sbatch_args,
        };
        slurm::submit_or_adopt(&submit, known, retry, note, abort)
    };
    // Arrays of this run that are queued but were never recorded (a coordinator killed
    // between `sbatch` and writing jobs.json): adopted, not submitted twice.
    let adopted: Vec<String> = retry
        .call(|| slurm::jobs_named(&name), &mut note, abort)?
        .into_iter()
        .filter(|id| !jobs.jobs.contains(id))
        .collect();
    if !adopted.is_empty() {
        jobs.jobs.extend(adopted.iter().cloned());
        jobs.write(dir)?;
        if !s.quiet {
            eprintln!(
                "Found job array {} of this run in the queue (not recorded before): adopted",
                adopted.join(", ")
            );
        }
    }
    if jobs.jobs.is_empty() {
        let todo: Vec<u64> = (0..m.shards)
            .filter(|&i| !shard_complete(m, &records, i))
            .collect();
        if !todo.is_empty() {
            let id = submit(&todo, &jobs.jobs, &mut retry, &mut note)?;
            jobs.jobs.push(id.clone());
            jobs.write(dir)?;
            if !s.quiet {
                eprintln!(
                    "Submitted job array {id} ({} tasks, {} CPUs each); run directory {}",
                    todo.len(),
                    m.cpus_per_shard,
                    dir.display()
                );
            }
        }
    } else if !s.quiet {
        eprintln!("Reattached to job array {}", jobs.jobs.join(", "));
    }

    let unit = job.unit();
    let progress = Progress::new(s.quiet, "games", m.total.map(|t| unit.games(t)), 0);
    let mut gone: Vec<u32> = vec![0; m.shards as usize];
    let mut last_squeue: Option<Instant> = None;
    let mut pending_noted: Vec<u64> = Vec::new();
    let mut over = job.finished(m, &records)?;
    let result = loop {
        match records.refresh() {
            Ok(true) => {
                over = match job.finished(m, &records) {
                    Ok(over) => over,
                    Err(e) => break Err(e),
                };
                if let Some(h) = &mut horizon {
                    if let Err(e) = h.update(records.counted_pairs()) {
                        break Err(e);
                    }
                }
                progress.set_position(games_played(&records, unit));
                progress.set_message(&job.progress_message(m, &records));
            }
            Ok(false) => {}
            Err(e) => break Err(e),
        }
        if over || abort.load(Ordering::SeqCst) {
            break Ok(());
        }
        if let Some((i, (_, msg))) = records
            .shards
            .iter()
            .enumerate()
            .find_map(|(i, r)| r.failed.as_ref().filter(|f| f.0 == 2).map(|f| (i, f)))
        {
            break Err(CliError::usage(format!("shard {i} refused to run: {msg}")));
        }
        if last_squeue.is_none_or(|t| t.elapsed() >= SQUEUE_EVERY) {
            last_squeue = Some(Instant::now());
            // A failing squeue (a busy controller, a failover) is retried while the
            // shards play on.
            let mut shown = |line: &str| progress.println(line);
            let live = match retry.judge(slurm::live_tasks(&jobs.jobs), &mut shown) {
                Ok(Some(live)) => live,
                Ok(None) => {
                    std::thread::sleep(POLL);
                    continue;
                }
                Err(e) => break Err(e),
            };
            // An SPRT counts in pair order: say once when it waits for a shard in the
            // queue, which starts when others end (an open SPRT's, at the horizon).
            if let Some(u) = records.uncounted() {
                if let NotCounted::Waiting { shard, .. } = u.why {
                    let state = live.get(&shard).map(String::as_str);
                    if state == Some("PENDING") && !pending_noted.contains(&shard) {
                        pending_noted.push(shard);
                        let why = horizon.as_ref().and_then(horizon::Writer::current).map_or(
                            String::new(),
                            |h| {
                                format!(
                                    "; the shards ahead of it pause before pair {h} (the \
                                     horizon), which frees their CPUs for it"
                                )
                            },
                        );
                        progress.println(&format!("{}{why}", u.describe(state)));
                    }
                }
            }
            // Gone with their work not done: failed (again), or paused at the horizon
            // (paused: resubmitted once the count nears their pair, never counted).
            let mut again = Vec::new();
            let mut paused = Vec::new();
            let limit = horizon.as_ref().and_then(horizon::Writer::current);
            for i in 0..m.shards {
                let g = &mut gone[i as usize];
                let pause = records.shards[i as usize]
                    .failed
                    .is_none()
                    .then(|| horizon::read_paused(dir, i))
                    .flatten();
                let waits = pause.is_some_and(|k| limit.is_some_and(|h| k >= h));
                if live.contains_key(&i) || shard_complete(m, &records, i) || waits {
                    *g = 0;
                } else {
                    *g += 1;
                    if *g >= 2 {
                        match pause {
                            Some(k) => paused.push((i, k)),
                            None => again.push(i),
                        }
                        *g = 0;
                    }
                }
            }
            if !paused.is_empty() {
                let indices: Vec<u64> = paused.iter().map(|p| p.0).collect();
                let mut shown = |line: &str| progress.println(line);
                let id = match submit(&indices, &jobs.jobs, &mut retry, &mut shown) {
                    Ok(id) => id,
                    Err(e) => break Err(e),
                };
                jobs.jobs.push(id.clone());
                if let Err(e) = jobs.write(dir) {
                    break Err(e);
                }
                // Recorded: the pause is over (a shard that paused again since, at
                // another pair, keeps its marker).
                for &(i, k) in &paused {
                    if horizon::read_paused(dir, i) == Some(k) {
                        horizon::clear_paused(dir, i);
                    }
                }
                progress.println(&format!(
                    "Resubmitted paused shards {} as job array {id}: the count nears the pairs \
                     they paused before ({})",
                    slurm::array_list(&indices),
                    paused
                        .iter()
                        .map(|p| p.1.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if !again.is_empty() {
                if let Some(&i) = again
                    .iter()
                    .find(|i| jobs.resubmitted.get(i).copied().unwrap_or(0) >= MAX_RESUBMITS)
                {
                    let why = records.shards[i as usize]
                        .failed
                        .as_ref()
                        .map_or("it left the queue without finishing".to_string(), |f| {
                            f.1.clone()
                        });
                    break Err(CliError::failure(format!(
                        "shard {i} failed {MAX_RESUBMITS} times, last: {why} (see {})",
                        super::log_dir(dir).display()
                    )));
                }
                let mut shown = |line: &str| progress.println(line);
                let id = match submit(&again, &jobs.jobs, &mut retry, &mut shown) {
                    Ok(id) => id,
                    Err(e) => break Err(e),
                };
                for i in &again {
                    *jobs.resubmitted.entry(*i).or_default() += 1;
                }
                jobs.jobs.push(id.clone());
                if let Err(e) = jobs.write(dir) {
                    break Err(e);
                }
                progress.println(&format!(
                    "Resubmitted shards {} as job array {id}",
                    slurm::array_list(&again)
                ));
            }
        }
        std::thread::sleep(POLL);
    };
    progress.finish();
    result
}

/// Stops every shard: `RUN_DIR/STOP`, `scancel`, and a wait until no task is left; returns
/// how long that took.
pub fn stop(dir: &Path, jobs: &[String]) -> CliResult<Duration> {
    write_atomically(&super::stop_file(dir), "stop\n").map_err(|e| {
        CliError::failure(format!(
            "cannot write {}: {e}",
            super::stop_file(dir).display()
        ))
    })?;
    // Ctrl-C has already been pressed when stopping: only the give-up time ends the tries.
    let never = AtomicBool::new(false);
    slurm::Retry::new().call(|| slurm::cancel(jobs), &mut |l| eprintln!("{l}"), &never)?;
    let started = Instant::now();
    let mut last_error = None;
    while started.elapsed() < CANCEL_WAIT {
        // A failing squeue is retried until the wait is over.
        match slurm::live_tasks(jobs) {
            Ok(live) if live.is_empty() => return Ok(started.elapsed()),
            Ok(_) => {}
            Err(e) => last_error = Some(e.message),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(CliError::failure(format!(
        "the tasks of job array {} did not leave the queue within {} s of scancel{}",
        jobs.join(", "),
        CANCEL_WAIT.as_secs(),
        last_error.map_or(String::new(), |e| format!(" (last: {e})"))
    )))
}
