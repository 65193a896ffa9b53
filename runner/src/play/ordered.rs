//! Jobs `first, first + 1, …` run on a pool of workers; their results come back to the
//! calling thread **in job order**. A match's jobs are game pairs ([`super::schedule`]),
//! datagen's are single games.
//!
//! Because results are handed over strictly in index order, a run whose jobs are
//! deterministic writes the same files at any concurrency. Jobs that finish early wait in a
//! small buffer; if the run stops, they are dropped (and replayed on `--resume`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use crate::error::{CliError, CliResult};

/// What to do after a result has been accounted for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Keep going.
    Continue,
    /// Stop: abandon the jobs in flight.
    Stop,
}

/// One worker's state: whatever it needs to run jobs (players, searchers).
pub trait Worker {
    /// The result of one job.
    type Output: Send;

    /// Runs job `k`. `stop` is raised when the run ends; a job that sees it returns
    /// `Ok(None)` and is not counted. `tick` may be called for progress (e.g. after each
    /// game of a pair). An error ends the run.
    fn run(
        &mut self,
        k: u64,
        stop: &AtomicBool,
        tick: &dyn Fn(),
    ) -> CliResult<Option<Self::Output>>;

    /// Flags that make this worker's running searches return at once.
    fn stop_flags(&self) -> Vec<Arc<AtomicBool>> {
        Vec::new()
    }

    /// Ends the worker (quits external engines). Called once.
    fn shutdown(&mut self) {}
}

/// Which job indices a run plays: `offset, offset + step, offset + 2 step, …` (all of them
/// by default). Shard I of N of a cluster run plays `Stride { offset: I, step: N }`; its
/// local job j is the run's job `offset + step * j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stride {
    /// The first job index.
    pub offset: u64,
    /// The distance between two jobs (at least 1).
    pub step: u64,
}

impl Stride {
    /// Every job: 0, 1, 2, …
    pub const ALL: Stride = Stride { offset: 0, step: 1 };

    /// Shard `index` of `count`.
    pub fn shard(index: u64, count: u64) -> Stride {
        Stride {
            offset: index,
            step: count.max(1),
        }
    }

    /// The run's job index of local job `j`.
    pub fn job(&self, j: u64) -> u64 {
        self.offset + self.step * j
    }

    /// How many of the run's jobs `0..total` are in this stride.
    pub fn count_below(&self, total: u64) -> u64 {
        if total <= self.offset {
            0
        } else {
            (total - self.offset).div_ceil(self.step)
        }
    }

    /// The local index of the run's job `k`, if it is in this stride.
    pub fn local(&self, k: u64) -> Option<u64> {
        (k >= self.offset && (k - self.offset).is_multiple_of(self.step))
            .then(|| (k - self.offset) / self.step)
    }
}

/// The jobs of a run.
pub struct Jobs<'a> {
    /// Which job indices are played; `first` and `end` count local jobs of this stride.
    pub stride: Stride,
    /// First job index.
    pub first: u64,
    /// One past the last job (`None`: until stopped).
    pub end: Option<u64>,
    /// Worker threads.
    pub concurrency: usize,
    /// Raised from outside (Ctrl-C): no new job starts, jobs in flight are abandoned.
    pub abort: &'a AtomicBool,
    /// Whether the run's job `k` may start now (`None`: every job may). A worker told no
    /// ends, leaving the job to a later start; jobs in flight finish. Jobs start in order,
    /// so the jobs started are always `first..` without a gap.
    pub admit: Option<&'a (dyn Fn(u64) -> bool + Sync)>,
}

enum Message<T> {
    Done(u64, T),
    Tick,
    Failed(CliError),
}

/// How often the accounting thread looks at `abort` while no result arrives.
const ABORT_POLL: Duration = Duration::from_millis(20);

/// Stack of a worker thread: searches recurse deeply.
const WORKER_STACK: usize = 64 << 20;

/// Runs the jobs; `on_tick` hears every worker tick, `on_result` receives results in job
/// order and decides whether to go on. Errors, as the worker classed them (bad input or a
/// failure): a worker that could not be made or a job that failed; or threads that could not
/// be started (a failure).
pub fn run<W, T>(
    jobs: &Jobs,
    make_worker: &(dyn Fn() -> CliResult<W> + Sync),
    mut on_tick: impl FnMut(),
    mut on_result: impl FnMut(T) -> Control,
) -> CliResult
where
    W: Worker<Output = T>,
    T: Send,
{
    let next = AtomicU64::new(jobs.first);
    let stop = AtomicBool::new(false);
    let stop_flags: Mutex<Vec<Arc<AtomicBool>>> = Mutex::new(Vec::new());
    let halt = || {
        stop.store(true, Ordering::SeqCst);
        for f in stop_flags.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            f.store(true, Ordering::SeqCst);
        }
    };
    let (tx, rx) = mpsc::channel::<Message<T>>();
    let mut failure = None;
    std::thread::scope(|scope| {
        for i in 0..jobs.concurrency.max(1) {
            let tx = tx.clone();
            let (next, stop, stop_flags) = (&next, &stop, &stop_flags);
            let spawned = std::thread::Builder::new()
                .name(format!("spar-worker-{i}"))
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, move || {
                    work(jobs, make_worker, next, stop, stop_flags, &tx);
                });
            if let Err(e) = spawned {
                failure = Some(CliError::failure(format!(
                    "cannot start worker threads: {e}"
                )));
                halt();
                break;
            }
        }
        drop(tx);

        let mut buffer: BTreeMap<u64, T> = BTreeMap::new();
        let mut expected = jobs.first;
        let mut stopped = failure.is_some();
        loop {
            if jobs.abort.load(Ordering::Relaxed) && !stopped {
                stopped = true;
                halt();
            }
            let msg = match rx.recv_timeout(ABORT_POLL) {
                Ok(m) => m,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            match msg {
                Message::Tick if !stopped => on_tick(),
                Message::Tick => {}
                Message::Failed(e) => {
                    failure.get_or_insert(e);
                    if !stopped {
                        stopped = true;
                        halt();
                    }
                }
                Message::Done(k, result) => {
                    if stopped {
                        continue;
                    }
                    buffer.insert(k, result);
                    while let Some(r) = buffer.remove(&expected) {
                        expected += 1;
                        if on_result(r) == Control::Stop {
                            stopped = true;
                            halt();
                            break;
                        }
                    }
                }
            }
        }
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Takes the next job, if there is one and it may start; only then does `next` move on,
/// so a job refused now is the next one taken later.
fn claim(jobs: &Jobs, next: &AtomicU64) -> Option<u64> {
    loop {
        let k = next.load(Ordering::SeqCst);
        if jobs.end.is_some_and(|end| k >= end) {
            return None;
        }
        if jobs.admit.is_some_and(|admit| !admit(jobs.stride.job(k))) {
            return None;
        }
        if next
            .compare_exchange(k, k + 1, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return Some(k);
        }
    }
}

fn work<W: Worker>(
    jobs: &Jobs,
    make_worker: &(dyn Fn() -> CliResult<W> + Sync),
    next: &AtomicU64,
    stop: &AtomicBool,
    stop_flags: &Mutex<Vec<Arc<AtomicBool>>>,
    tx: &mpsc::Sender<Message<W::Output>>,
) {
    let halted = || stop.load(Ordering::SeqCst) || jobs.abort.load(Ordering::SeqCst);
    if halted() {
        return;
    }
    let mut worker = match make_worker() {
        Ok(w) => w,
        Err(e) => {
            let _ = tx.send(Message::Failed(e));
            return;
        }
    };
    stop_flags
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(worker.stop_flags());
    let tick = || {
        let _ = tx.send(Message::Tick);
    };
    // A worker made late must see a stop that happened while it was being made; and a
    // Ctrl-C stops new jobs at once, before the accounting thread has noticed it.
    while !halted() {
        let Some(k) = claim(jobs, next) else {
            break;
        };
        match worker.run(jobs.stride.job(k), stop, &tick) {
            Ok(Some(out)) => {
                if tx.send(Message::Done(k, out)).is_err() {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                let _ = tx.send(Message::Failed(e));
                break;
            }
        }
    }
    worker.shutdown();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(abort: &AtomicBool, end: Option<u64>, concurrency: usize) -> Jobs<'_> {
        Jobs {
            stride: Stride::ALL,
            first: 0,
            end,
            concurrency,
            abort,
            admit: None,
        }
    }

    /// Counts results, stopping after `stop_at` (if any).
    fn count(jobs: &Jobs, stop_at: Option<u64>) -> u64 {
        let mut got = 0;
        run(
            jobs,
            &|| Ok(Squares),
            || {},
            |_| {
                got += 1;
                if Some(got) == stop_at {
                    Control::Stop
                } else {
                    Control::Continue
                }
            },
        )
        .unwrap();
        got
    }

    /// The results of [`Squares`] over `jobs`, in the order they came, and the ticks.
    fn squares(jobs: &Jobs) -> (Vec<u64>, u64) {
        let mut got = Vec::new();
        let mut ticks = 0;
        run(
            jobs,
            &|| Ok(Squares),
            || ticks += 1,
            |r| {
                got.push(r);
                Control::Continue
            },
        )
        .unwrap();
        (got, ticks)
    }

    /// A worker whose job k returns k² after a delay that makes later jobs finish first.
    struct Squares;

    impl Worker for Squares {
        type Output = u64;
        fn run(&mut self, k: u64, _stop: &AtomicBool, tick: &dyn Fn()) -> CliResult<Option<u64>> {
            std::thread::sleep(Duration::from_millis((7 - k % 7) * 2));
            tick();
            Ok(Some(k * k))
        }
    }

    #[test]
    fn results_arrive_in_job_order_at_any_concurrency() {
        for concurrency in [1, 3, 8] {
            let abort = AtomicBool::new(false);
            let jobs = Jobs {
                stride: Stride::ALL,
                first: 5,
                end: Some(30),
                concurrency,
                abort: &abort,
                admit: None,
            };
            let (got, ticks) = squares(&jobs);
            let want: Vec<u64> = (5..30).map(|k| k * k).collect();
            assert_eq!(got, want, "concurrency {concurrency}");
            assert_eq!(ticks, 25);
        }
    }

    #[test]
    fn stop_ends_an_open_ended_run_and_failures_are_reported() {
        let abort = AtomicBool::new(false);
        let jobs = jobs(&abort, None, 4);
        assert_eq!(count(&jobs, Some(10)), 10);
        let err = run::<Squares, u64>(
            &jobs,
            &|| Err(CliError::usage("no engine")),
            || {},
            |_| Control::Continue,
        );
        assert_eq!(err, Err(CliError::usage("no engine")));
    }

    #[test]
    fn an_abort_raised_before_the_start_runs_nothing() {
        let abort = AtomicBool::new(true);
        assert_eq!(count(&jobs(&abort, Some(100), 2), None), 0);
    }

    #[test]
    fn a_stride_plays_every_nth_job_in_order() {
        let s = Stride::shard(2, 4);
        assert_eq!((0..3).map(|j| s.job(j)).collect::<Vec<_>>(), [2, 6, 10]);
        assert_eq!(s.count_below(11), 3);
        assert_eq!(s.count_below(2), 0);
        assert_eq!(Stride::shard(0, 4).count_below(1), 1);
        assert_eq!((s.local(10), s.local(9), s.local(1)), (Some(2), None, None));
        let abort = AtomicBool::new(false);
        let jobs = Jobs {
            stride: s,
            first: 1,
            end: Some(4),
            concurrency: 3,
            abort: &abort,
            admit: None,
        };
        assert_eq!(squares(&jobs).0, [36, 100, 196]);
    }

    #[test]
    fn jobs_stop_without_a_gap_where_admission_ends() {
        for concurrency in [1, 4] {
            let abort = AtomicBool::new(false);
            let asked = Mutex::new(Vec::new());
            let admit = |k: u64| {
                asked.lock().unwrap().push(k);
                k < 20
            };
            let jobs = Jobs {
                stride: Stride::shard(1, 3),
                first: 0,
                end: None,
                concurrency,
                abort: &abort,
                admit: Some(&admit),
            };
            let (got, _) = squares(&jobs);
            let want: Vec<u64> = [1u64, 4, 7, 10, 13, 16, 19].iter().map(|k| k * k).collect();
            assert_eq!(got, want, "concurrency {concurrency}");
            // Every worker was refused job 22, the first one past the limit, and none later.
            let asked = asked.into_inner().unwrap();
            assert_eq!(asked.iter().max(), Some(&22), "{asked:?}");
        }
    }
}
