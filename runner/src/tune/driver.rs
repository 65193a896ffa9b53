//! Plays a tune's pairs on the workers of a [`SelfPlay`] as the [`schedule`](super::schedule)
//! allows: a worker takes the next pair in order, waits until the θ its iteration plays from
//! is known, plays it, and records it; complete iterations are applied in order. The same
//! loop runs a local tune (all pairs) and one shard of a cluster tune (its stride of pairs,
//! with the other shards' pairs read from their records while it waits).
//!
//! A shard never waits forever for a peer: when no pair has been recorded anywhere for
//! [`patience`] while a worker waits, the worker plays the first missing pair of the next
//! iteration itself, counts it and does not record it (the shard it belongs to plays and
//! records it when it runs; the games are the same). So shards that do not all run at once
//! — a partition smaller than the array, shards run one after another by hand — still
//! finish, at the cost of repeated games.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::schedule::Tuner;
use super::selfplay::{tally, SelfPlay, Values};
use super::spsa::Perturbation;
use super::trajectory::Row;
use crate::error::{CliError, CliResult};
use crate::play::game::PlayedGame;

/// How often a waiting worker looks for pairs recorded elsewhere.
const POLL_EVERY: Duration = Duration::from_millis(250);

/// Where a driver's results go. Called under the driver's lock, one call at a time.
pub trait Sink: Send {
    /// A pair has been played (in completion order).
    fn pair(&mut self, pair: u64, games: &[PlayedGame; 2], engines: &Perturbation) -> CliResult;
    /// Iterations were applied, in order: their rows.
    fn rows(&mut self, rows: &[Row], tuner: &Tuner) -> CliResult;
    /// Pairs recorded by other processes from pair `from` on, as (pair, dev's wins minus
    /// losses); a local run has none.
    fn poll(&mut self, _from: u64) -> CliResult<Vec<(u64, i64)>> {
        Ok(Vec::new())
    }
}

/// The two engines of one iteration.
struct Engines {
    perturbation: Perturbation,
    dev: Values,
    base: Values,
}

struct Shared<'a> {
    tuner: Tuner,
    /// When a pair was last recorded (here or elsewhere).
    progress_at: Instant,
    /// Pairs of other processes this one is playing.
    helping: std::collections::BTreeSet<u64>,
    /// Time spent per pair played here, and pairs played.
    played: (Duration, u32),
    next: usize,
    engines: BTreeMap<u64, Arc<Engines>>,
    error: Option<CliError>,
    sink: &'a mut dyn Sink,
    last_poll: Option<Instant>,
}

/// Dev's wins minus losses in a pair.
pub fn score(games: &[PlayedGame; 2]) -> i64 {
    let t = tally(games);
    t.wins as i64 - t.losses as i64
}

/// Plays `pairs` (in this order; each pair's iteration must not be applied yet) with
/// `names` the tuned parameters, feeding `tuner`; returns it when the pairs are played,
/// `abort` is raised or the sink fails (with the error).
pub fn run(
    selfplay: &SelfPlay,
    tuner: Tuner,
    names: &[String],
    pairs: &[u64],
    sink: &mut dyn Sink,
    abort: &AtomicBool,
) -> (Tuner, Option<CliError>) {
    let shared = Mutex::new(Shared {
        tuner,
        progress_at: Instant::now(),
        helping: Default::default(),
        played: (Duration::ZERO, 0),
        next: 0,
        engines: BTreeMap::new(),
        error: None,
        sink,
        last_poll: None,
    });
    let wake = Condvar::new();
    std::thread::scope(|scope| {
        for worker in 0..selfplay.workers() {
            let (shared, wake) = (&shared, &wake);
            std::thread::Builder::new()
                .name(format!("spar-tune-{worker}"))
                .spawn_scoped(scope, move || {
                    work(worker, selfplay, names, pairs, shared, wake, abort)
                })
                .expect("a worker thread");
        }
    });
    let shared = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    (shared.tuner, shared.error)
}

fn lock<'a, 'b>(m: &'a Mutex<Shared<'b>>) -> MutexGuard<'a, Shared<'b>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records what other processes recorded; wakes the waiting workers when θ moved.
fn poll(s: &mut Shared, wake: &Condvar) -> CliResult {
    s.last_poll = Some(Instant::now());
    let from = s.tuner.frontier();
    let found = s.sink.poll(from)?;
    for (pair, score) in found {
        if !s.tuner.is_recorded(pair) {
            s.progress_at = Instant::now();
        }
        s.tuner.record(pair, score);
    }
    applied(s, wake)
}

/// Applies complete iterations and hands their rows to the sink.
fn applied(s: &mut Shared, wake: &Condvar) -> CliResult {
    let rows = s.tuner.advance();
    if rows.is_empty() {
        return Ok(());
    }
    let done = s.tuner.done();
    s.engines.retain(|&j, _| j > done);
    wake.notify_all();
    s.sink.rows(&rows, &s.tuner)
}

/// How long a waiting worker waits with no pair recorded anywhere before it plays a
/// missing pair of another process itself: `SPAR_TUNE_PATIENCE` seconds, else ten times
/// this process's mean time per pair, at least two minutes.
fn patience(s: &Shared) -> Duration {
    if let Some(secs) = std::env::var("SPAR_TUNE_PATIENCE")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
    {
        return Duration::from_secs_f64(secs);
    }
    let (time, n) = s.played;
    let mean = if n == 0 { Duration::ZERO } else { time / n };
    (mean * 10).max(Duration::from_secs(120))
}

/// The first pair of the next iteration that nobody here has: not recorded, not one of
/// this process's own (`mine`, sorted), not being helped already.
fn missing(s: &Shared, mine: &[u64]) -> Option<u64> {
    let first = s.tuner.frontier();
    let per = s.tuner.schedule().pairs_per_iteration;
    (first..first + per).find(|&k| {
        !s.tuner.is_recorded(k) && mine.binary_search(&k).is_err() && !s.helping.contains(&k)
    })
}

fn fail(s: &mut Shared, wake: &Condvar, e: CliError) {
    s.error.get_or_insert(e);
    wake.notify_all();
}

fn work(
    worker: usize,
    selfplay: &SelfPlay,
    names: &[String],
    pairs: &[u64],
    shared: &Mutex<Shared>,
    wake: &Condvar,
    abort: &AtomicBool,
) {
    let stopped = |s: &Shared| s.error.is_some() || abort.load(Ordering::SeqCst);
    loop {
        let (pair, j) = {
            let mut s = lock(shared);
            if stopped(&s) || s.next >= pairs.len() {
                return;
            }
            let pair = pairs[s.next];
            s.next += 1;
            (pair, s.tuner.schedule().iteration_of(pair))
        };
        // Wait until the θ iteration j plays from is known.
        let engines = {
            let mut s = lock(shared);
            loop {
                if stopped(&s) {
                    return;
                }
                if let Some(e) = s.engines.get(&j) {
                    break e.clone();
                }
                if let Some(p) = s.tuner.perturbation(j) {
                    let values = selfplay
                        .values(names, &p.dev)
                        .and_then(|dev| Ok((dev, selfplay.values(names, &p.base)?)));
                    match values {
                        Ok((dev, base)) => {
                            let e = Arc::new(Engines {
                                perturbation: p,
                                dev,
                                base,
                            });
                            s.engines.insert(j, e.clone());
                            break e;
                        }
                        Err(e) => return fail(&mut s, wake, e),
                    }
                }
                if s.last_poll.is_none_or(|t| t.elapsed() >= POLL_EVERY) {
                    if let Err(e) = poll(&mut s, wake) {
                        return fail(&mut s, wake, e);
                    }
                    continue;
                }
                if s.progress_at.elapsed() >= patience(&s) {
                    if let Some(k) = missing(&s, pairs) {
                        s.helping.insert(k);
                        drop(s);
                        let helped = help(worker, k, selfplay, names, shared, wake, abort);
                        s = lock(shared);
                        s.helping.remove(&k);
                        if let Err(e) = helped {
                            return fail(&mut s, wake, e);
                        }
                        continue;
                    }
                }
                s = wake
                    .wait_timeout(s, POLL_EVERY)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        };
        let started = Instant::now();
        let Some(games) =
            selfplay.play_on(worker, pair, &engines.dev, &engines.base, abort, &|| {})
        else {
            return;
        };
        let mut s = lock(shared);
        s.played.0 += started.elapsed();
        s.played.1 += 1;
        s.progress_at = Instant::now();
        if let Err(e) = s.sink.pair(pair, &games, &engines.perturbation) {
            return fail(&mut s, wake, e);
        }
        s.tuner.record(pair, score(&games));
        if let Err(e) = applied(&mut s, wake) {
            return fail(&mut s, wake, e);
        }
    }
}

/// Plays pair `k` of another process (of the next iteration, whose θ is known) and counts
/// it without recording it.
fn help(
    worker: usize,
    k: u64,
    selfplay: &SelfPlay,
    names: &[String],
    shared: &Mutex<Shared>,
    wake: &Condvar,
    abort: &AtomicBool,
) -> CliResult {
    let perturbation = {
        let s = lock(shared);
        let j = s.tuner.schedule().iteration_of(k);
        match s.tuner.perturbation(j) {
            Some(p) => p,
            None => return Ok(()),
        }
    };
    let dev = selfplay.values(names, &perturbation.dev)?;
    let base = selfplay.values(names, &perturbation.base)?;
    let Some(games) = selfplay.play_on(worker, k, &dev, &base, abort, &|| {}) else {
        return Ok(());
    };
    let mut s = lock(shared);
    if !s.tuner.is_recorded(k) {
        s.progress_at = Instant::now();
    }
    s.tuner.record(k, score(&games));
    applied(&mut s, wake)
}
