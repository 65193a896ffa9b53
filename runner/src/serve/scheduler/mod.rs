//! The scheduler: one thread that starts, watches and stops the runs' children. Each run
//! plays as a child `spar KIND WORDS… OUTPUTS… --concurrency N [--resume]` in the
//! directory the run was submitted from, writing into its run directory, in its own process
//! group, killed by the kernel if this thread (the server) dies (`PR_SET_PDEATHSIG`).
//! Every tick it reaps the children that ended, shares the cores among the queued and
//! running runs ([`super::share`]) and makes the children match the share: a run whose
//! share changed (or that was stopped, deleted, or left out) is stopped gracefully
//! (SIGINT to its group: spar keeps what is complete) and, when it should go on, started
//! again with `--resume` and its new concurrency. Node-limited games do not depend on the
//! concurrency, so this changes no result.
//!
//! How a child's end becomes its run's state, and why a failure is never restarted in a
//! loop (a full disk, issue 56), is [`ends`]. While the data directory's free space is under
//! `--min-free` ([`super::disk`]) no child starts: queued runs wait, running ones play on
//! with the cores they have.

mod ends;

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::db::runs::{Run, State};
use super::disk::Space;
use super::settings::SlurmSettings;
use super::share::{share, Want};
use super::store::Store;
use super::words;
use ends::{Backoffs, End};

/// How long a stopped child has to finish its games before it is killed.
const GRACE: Duration = Duration::from_secs(60);

/// The last lines of stderr a failed run shows.
const TAIL_LINES: usize = 20;

/// One child.
struct Playing {
    child: Child,
    /// Its run as it was when it started (its kind, words and directory).
    run: Run,
    cores: usize,
    /// When the server asked it to stop.
    stopping: Option<Instant>,
    /// When it started, and the games its run had then (its games/s).
    since: Instant,
    games0: u64,
}

/// What a child holds now, for the machines page.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Slot {
    pub run: i64,
    pub cores: usize,
    /// The server asked it to stop (it keeps its cores until it has ended).
    pub stopping: bool,
    /// Seconds since it started, and its run's games then.
    pub secs: f64,
    pub games0: u64,
}

/// The scheduler's shared state.
pub struct Scheduler {
    cores: usize,
    exe: PathBuf,
    store: Store,
    children: Mutex<HashMap<i64, Playing>>,
    wake: (Mutex<bool>, Condvar),
    /// The server is shutting down: no child starts.
    closing: AtomicBool,
    /// The Slurm backend: each run is a `--slurm` run whose coordinator is the child.
    slurm: Option<SlurmSettings>,
    /// The spar that plays report runs (`--track-spar`), when not `exe`.
    track: Option<PathBuf>,
    /// The bench speed `--scale-nps` runs' clocks are meant for (`--reference-nps`).
    reference_nps: Option<u64>,
    /// The data directory's free space, its `--min-free` and its reserve.
    space: Arc<Space>,
    /// Ends of children that the database could not record yet (the disk is full), by run:
    /// such a run is never started again; each tick tries to record them.
    unrecorded: Mutex<HashMap<i64, End>>,
    /// Runs whose child failed the same way twice or more in a row: their next start waits.
    backoffs: Mutex<Backoffs>,
    /// Whether the free space was under `--min-free` at the last tick.
    low: AtomicBool,
}

impl Scheduler {
    /// A scheduler of `cores` cores starting `exe` (this spar) for the runs in `store`, whose
    /// data directory's space is `space`. The runs left `running` by an earlier server are
    /// queued again (their files resume); on a full disk one that cannot be written so
    /// stays `running` in the database, and resumes all the same once there is room.
    pub fn new(
        cores: usize,
        exe: PathBuf,
        store: Store,
        space: Arc<Space>,
    ) -> Result<Scheduler, String> {
        let active = store.blocking(|db| db.active())?;
        for run in active.iter().filter(|r| r.state == State::Running) {
            eprintln!(
                "spar serve: run {} was running: it resumes from its files",
                run.id
            );
            let queued = space.retry(|| store.blocking(|db| db.set_state(run.id, State::Queued)));
            if let Err(e) = queued {
                eprintln!(
                    "spar serve: run {}: cannot queue it again ({e}): it stays 'running' in the \
                     database and resumes once there is room",
                    run.id
                );
            }
        }
        Ok(Scheduler {
            cores,
            exe,
            store,
            children: Mutex::new(HashMap::new()),
            wake: (Mutex::new(false), Condvar::new()),
            closing: AtomicBool::new(false),
            slurm: None,
            track: None,
            reference_nps: None,
            space,
            unrecorded: Mutex::new(HashMap::new()),
            backoffs: Mutex::new(Backoffs::default()),
            low: AtomicBool::new(false),
        })
    }

    /// The data directory's space.
    pub fn space(&self) -> &Space {
        &self.space
    }

    /// The same scheduler with `track` (a spar with the `track` feature) playing the report
    /// runs, or this spar when `None`.
    pub fn with_track(mut self, track: Option<PathBuf>) -> Scheduler {
        self.track = track;
        self
    }

    /// The same scheduler with the Slurm backend `slurm` (or none).
    pub fn with_slurm(mut self, slurm: Option<SlurmSettings>) -> Scheduler {
        self.slurm = slurm;
        self
    }

    /// The same scheduler scaling `--scale-nps` runs' clocks to `reference` nps.
    pub fn with_reference_nps(mut self, reference: Option<u64>) -> Scheduler {
        self.reference_nps = reference;
        self
    }

    /// The bench speed `--scale-nps` runs' clocks are meant for, when set.
    pub fn reference_nps(&self) -> Option<u64> {
        self.reference_nps
    }

    /// The Slurm backend, when on.
    pub fn slurm(&self) -> Option<&SlurmSettings> {
        self.slurm.as_ref()
    }

    /// The children now, by run.
    pub fn slots(&self) -> Vec<Slot> {
        let children = self.children.lock().expect("children lock");
        let mut v: Vec<Slot> = children
            .iter()
            .map(|(id, p)| Slot {
                run: *id,
                cores: p.cores,
                stopping: p.stopping.is_some(),
                secs: p.since.elapsed().as_secs_f64(),
                games0: p.games0,
            })
            .collect();
        v.sort_by_key(|s| s.run);
        v
    }

    /// Records an event (a failure to record it is only reported).
    fn event(&self, run: Option<i64>, kind: &str, message: &str) {
        if let Err(e) = self.store.blocking(|db| db.event(run, kind, message)) {
            eprintln!("spar serve: event log: {e}");
        }
    }

    /// The cores shared.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// Asks the scheduler thread for a tick now.
    pub fn wake(&self) {
        *self.wake.0.lock().expect("wake lock") = true;
        self.wake.1.notify_all();
    }

    /// Whether run `id` has a child now.
    pub fn has_child(&self, id: i64) -> bool {
        self.children
            .lock()
            .expect("children lock")
            .contains_key(&id)
    }

    /// The cores of run `id`'s child, if it has one that is not stopping.
    pub fn cores_of(&self, id: i64) -> Option<usize> {
        let children = self.children.lock().expect("children lock");
        children
            .get(&id)
            .filter(|p| p.stopping.is_none())
            .map(|p| p.cores)
    }

    /// The scheduler thread's loop (never returns). Children are started only here, so
    /// that `PR_SET_PDEATHSIG` (which follows the thread that started them) holds.
    pub fn run(&self) {
        loop {
            if let Err(e) = self.tick() {
                eprintln!("spar serve: scheduler: {e}");
            }
            let guard = self.wake.0.lock().expect("wake lock");
            let (mut woken, _) = self
                .wake
                .1
                .wait_timeout_while(guard, Duration::from_millis(500), |w| !*w)
                .expect("wake lock");
            *woken = false;
        }
    }

    /// Records what could not be recorded, reaps, shares, stops and starts.
    fn tick(&self) -> Result<(), String> {
        self.flush();
        self.reap();
        self.space.keep_reserve();
        let low = self.watch_space();
        // A run whose registered engines are not built yet waits for the builder; one whose
        // end is not recorded yet, or that waits after failing the same way again, too.
        let active = {
            let (unbuilt, mut active) = self
                .store
                .blocking(|db| Ok::<_, String>((db.unbuilt()?, db.active()?)))?;
            active.retain(|r| !unbuilt.contains(&r.id) && !self.held(r.id));
            active
        };
        let wants: Vec<Want> = active
            .iter()
            .map(|r| Want {
                id: r.id,
                priority: r.priority,
                throughput: r.throughput,
            })
            .collect();
        // With Slurm the shares are of the server's shards, and every run of the highest
        // priority plays (the cluster queues the tasks).
        let slots = self.cores;
        // An excluded local host plays nothing: its children stop gracefully and resume
        // when an admin lets it play again.
        let host_excluded = self.slurm.is_none() && super::machines::local_excluded(&self.store);
        let mut events = Vec::new();
        let mut children = self.children.lock().expect("children lock");
        let shares: HashMap<i64, usize> = match &self.slurm {
            // Under --min-free no child starts, and the children that play keep their
            // cores (a child stopped to re-balance could not start again).
            _ if low => children
                .iter()
                .filter(|(id, _)| active.iter().any(|r| r.id == **id))
                .map(|(id, p)| (*id, p.cores))
                .collect(),
            Some(s) => super::slurm::shard_shares(s.shards, &wants)
                .into_iter()
                .collect(),
            None if host_excluded => HashMap::new(),
            None => share(slots, &wants).into_iter().collect(),
        };
        // Stop what should not play, or plays with other cores.
        for (id, p) in children.iter_mut() {
            let wanted = shares.get(id).copied();
            // A cluster run keeps the shards it started with (its manifest fixes them): it
            // stops only when it should not play.
            let differs = match self.slurm {
                Some(_) => wanted.is_none(),
                None => wanted != Some(p.cores),
            };
            if differs {
                match p.stopping {
                    None => {
                        p.stopping = Some(Instant::now());
                        signal(&p.child, Signal::SIGINT);
                        events.push(match wanted {
                            Some(c) => (
                                *id,
                                "rebalance",
                                format!(
                                    "run {id}: its share is now {c} cores (was {}): stopped \
                                     gracefully, it resumes with its new share",
                                    p.cores
                                ),
                            ),
                            None => (
                                *id,
                                "stop",
                                format!("run {id}: its child stops gracefully (SIGINT)"),
                            ),
                        });
                    }
                    Some(t) if t.elapsed() > GRACE => signal(&p.child, Signal::SIGKILL),
                    Some(_) => {}
                }
            }
        }
        // Start what should play and has no child (a stopping child is waited for: never
        // two children on one run), when its cores are free (a stopping child keeps its
        // cores until it has ended: the cores are never over-committed).
        let mut used: usize = children.values().map(|p| p.cores).sum();
        for run in &active {
            if self.closing.load(Ordering::SeqCst) {
                break;
            }
            let Some(&cores) = shares.get(&run.id) else {
                continue;
            };
            // With Slurm the cluster queues the tasks: no local cores to wait for.
            let full = self.slurm.is_none() && used + cores > slots;
            // A run whose clocks are scaled waits for this start's bench of the host.
            let scaling = super::nps_scale::wanted(&run.words) && super::machines::measuring();
            if children.contains_key(&run.id) || full || scaling {
                continue;
            }
            let games0 = super::live::live(run.kind.as_str(), &run.words, Path::new(&run.dir))
                .games
                .unwrap_or(0);
            match self.start(run, cores) {
                Ok((child, how, cores)) => {
                    used += cores;
                    children.insert(
                        run.id,
                        Playing {
                            child,
                            run: run.clone(),
                            cores,
                            stopping: None,
                            since: Instant::now(),
                            games0,
                        },
                    );
                    // The child plays whether or not this is recorded (a full disk): it is
                    // in `children`, so it is never started twice.
                    let started = self.store.blocking(|db| {
                        db.started(run.id).and_then(|()| db.clear_last_live(run.id))
                    });
                    if let Err(e) = started {
                        eprintln!("spar serve: run {}: {e}", run.id);
                    }
                    events.push((run.id, "start", format!("run {}: {how}", run.id)));
                }
                Err(e) => {
                    eprintln!("spar serve: run {}: {e}", run.id);
                    let end = self.backed_off(run.id, ends::start_failure(run, &e));
                    self.record(run.id, end);
                }
            }
        }
        drop(children);
        for (id, kind, message) in events {
            self.event(Some(id), kind, &message);
        }
        Ok(())
    }

    /// Stops every child gracefully (the server is shutting down): SIGINT to each, then
    /// SIGKILL to what is left after `grace`. Their runs are queued again and resume from
    /// their files at the next start.
    pub fn shutdown(&self, grace: Duration) {
        self.closing.store(true, Ordering::SeqCst);
        {
            let mut children = self.children.lock().expect("children lock");
            for p in children.values_mut() {
                p.stopping.get_or_insert_with(Instant::now);
                signal(&p.child, Signal::SIGINT);
            }
        }
        let until = Instant::now() + grace;
        loop {
            self.reap();
            if self.children.lock().expect("children lock").is_empty() {
                return;
            }
            if Instant::now() > until {
                for p in self.children.lock().expect("children lock").values() {
                    signal(&p.child, Signal::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts run `run`'s child with `cores` cores (with Slurm: its coordinator, with
    /// `cores` shards for a new cluster run, its manifest's when it resumes); the child, how
    /// it started, in words, and its cores (shards).
    fn start(&self, run: &Run, cores: usize) -> Result<(Child, String, usize), String> {
        let dir = Path::new(&run.dir);
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let cores = match &self.slurm {
            Some(_) => super::slurm::shards_of(dir).map_or(cores, |n| n as usize),
            None => cores,
        };
        let mut scaled = None;
        let (argv, resume) = match &self.slurm {
            Some(s) => (
                super::slurm::argv(
                    &*run.kind,
                    &run.words,
                    dir,
                    s,
                    cores as u64,
                    &self.store.blocking(|db| db.excluded_machines())?,
                ),
                super::slurm::is_cluster_run(dir),
            ),
            None => {
                let resume = words::has_progress(&*run.kind, dir, &run.words);
                let host = super::machines::local_nps(&self.store);
                let (plays, how) =
                    super::nps_scale::for_child(&run.words, self.reference_nps, host)?;
                if let Some(how) = how {
                    let line = words::command_line(&*run.kind, &plays, dir);
                    self.store
                        .blocking(|db| db.set_scaled(run.id, how.factor, &line))?;
                    scaled = Some(how);
                }
                (words::argv(&*run.kind, &plays, dir, cores, resume), resume)
            }
        };
        let log = |name: &str| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join(name))
                .map_err(|e| format!("{}: {e}", dir.join(name).display()))
        };
        let exe = match &self.track {
            Some(t) if run.kind.served_page().tracked => t,
            _ => &self.exe,
        };
        let mut cmd = Command::new(exe);
        cmd.args(&argv)
            .current_dir(&run.cwd)
            .stdin(Stdio::null())
            .stdout(log("stdout.log")?)
            .stderr(log("stderr.log")?)
            .process_group(0);
        if self.slurm.is_some() {
            // Each shard benches its node (`shards/I/nps`, for the machines page).
            cmd.env(crate::cluster::SHARD_BENCH_ENV, "1");
        }
        // SAFETY: the closure runs in the child between fork and exec and only makes the
        // prctl system call (async-signal-safe); no allocation, no lock.
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)
            });
        }
        let how = format!(
            "starts {}{}",
            match &self.slurm {
                Some(s) => format!(
                    "as a Slurm job array of {} shards × {} CPUs{}",
                    cores,
                    s.cpus_per_shard,
                    s.partition
                        .as_ref()
                        .map_or(String::new(), |p| format!(" on partition {p}"))
                ),
                None => format!("on {cores} core{}", if cores == 1 { "" } else { "s" }),
            },
            if resume {
                ", resumed from its files"
            } else {
                ""
            }
        );
        let how = match scaled {
            Some(s) => format!("{how}, {}", s.describe()),
            None => how,
        };
        eprintln!("spar serve: run {} {how}", run.id);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        Ok((child, how, cores))
    }

    /// Records the children that ended ([`ends::child_end`]): exit 0 is finished; one the
    /// server stopped goes back to the queue (a share changed) or stays as the user left it
    /// (stopped, deleted); any other end is a failure with the last lines of its stderr
    /// (and `disk full: …` first when it failed for lack of space).
    fn reap(&self) {
        let mut ended = Vec::new();
        {
            let mut children = self.children.lock().expect("children lock");
            let mut gone = Vec::new();
            for (id, p) in children.iter_mut() {
                if let Ok(Some(status)) = p.child.try_wait() {
                    ended.push((p.run.clone(), status.code(), p.stopping.is_some()));
                    gone.push(*id);
                }
            }
            for id in gone {
                children.remove(&id);
            }
        }
        for (run, code, stopped) in ended {
            let id = run.id;
            // Its state now (the user may have stopped or deleted it); when the database
            // cannot be read, it is taken as still running.
            let now = match self.store.blocking(|db| db.get(id)) {
                Ok(Some(r)) => r.state,
                Ok(None) => continue,
                Err(e) => {
                    eprintln!("spar serve: run {id}: {e}");
                    State::Running
                }
            };
            let end = ends::child_end(&run, code, stopped, now);
            eprintln!(
                "spar serve: run {id} ended ({}, exit {code:?}){}",
                end.state,
                match disk_reason(&end) {
                    Some(r) => format!(": {r}"),
                    None => String::new(),
                }
            );
            let end = self.backed_off(id, end);
            self.record(id, end);
        }
    }
}

/// The `disk full: …` reason of an end, when it has one.
fn disk_reason(end: &End) -> Option<&str> {
    end.tail
        .lines()
        .next()
        .filter(|l| l.starts_with(super::disk::REASON_PREFIX))
}

/// A run's state after its child ended with `code`: exit 0 is finished (all played, or
/// decided), whatever asked it to stop; a child the server `stopped` leaves the run as it
/// is now (`stopped` by the user, deleted) or queued again (its share changed, or the
/// server shuts down: it resumes); any other end is a failure.
fn end_state(code: Option<i32>, stopped: bool, now: State) -> State {
    match (code, stopped, now) {
        (Some(0), _, _) => State::Finished,
        (_, true, State::Running) => State::Queued,
        (_, true, other) => other,
        (_, false, _) => State::Failed,
    }
}

/// Sends `sig` to a child's process group (the child leads it).
fn signal(child: &Child, sig: Signal) {
    let _ = killpg(Pid::from_raw(child.id() as i32), sig);
}

/// The last lines of a run's stderr log (at most the last 16 KiB read).
pub fn stderr_tail(dir: &Path) -> String {
    let Ok(mut f) = std::fs::File::open(dir.join("stderr.log")) else {
        return String::new();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(16 * 1024)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_end_decides_its_runs_state() {
        assert_eq!(end_state(Some(0), false, State::Running), State::Finished);
        assert_eq!(end_state(Some(0), true, State::Stopped), State::Finished);
        assert_eq!(end_state(Some(130), true, State::Running), State::Queued);
        assert_eq!(end_state(Some(130), true, State::Stopped), State::Stopped);
        assert_eq!(end_state(None, true, State::Running), State::Queued);
        assert_eq!(end_state(Some(1), false, State::Running), State::Failed);
        assert_eq!(end_state(None, false, State::Running), State::Failed);
    }

    #[test]
    fn the_stderr_tail_is_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(stderr_tail(dir.path()), "");
        let text: String = (0..100).map(|i| format!("line {i}\n\n")).collect();
        std::fs::write(dir.path().join("stderr.log"), text).unwrap();
        let tail = stderr_tail(dir.path());
        assert_eq!(tail.lines().count(), TAIL_LINES);
        assert!(
            tail.starts_with("line 80\n") && tail.ends_with("line 99"),
            "{tail}"
        );
    }
}
