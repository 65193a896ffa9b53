//! How a child's end (or a start that failed) becomes its run's state, and why a failure
//! never makes a restart loop (issue 56: on a full disk the child exited 1, the database
//! could not record it, the run stayed `running` and was started again every second).
//!
//! - A child that failed for lack of space fails its run with `disk full: …` as the first
//!   line of its stored stderr tail ([`super::super::disk::full_reason`]).
//! - The end is written as one unit (state, stored numbers, event); when the database says
//!   the disk is full, the reserve is released and it is written again
//!   ([`Space::retry`](super::super::disk::Space::retry)).
//! - When it still cannot be written it is held in memory ([`Scheduler::record`]): the run
//!   is not started again, and each tick tries to write it ([`Scheduler::flush`]).
//! - A run whose child fails the same way twice or more in a row waits before its next start
//!   ([`Backoffs`]: 2 s, then doubling up to 5 min), should anything ever queue it again at
//!   once.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{end_state, stderr_tail, Scheduler};
use crate::serve::db::runs::{Run, State};
use crate::serve::disk::{self, size::show};

/// What an end writes: the run's state, exit code and stderr tail, what its files say
/// (JSON, for the pages), and its event.
#[derive(Clone, Debug)]
pub struct End {
    pub state: State,
    pub code: Option<i64>,
    pub tail: String,
    /// `None`: a start that failed (the stored numbers stay as they are).
    pub numbers: Option<String>,
    pub kind: &'static str,
    pub message: String,
    /// How it failed, to tell the same failure again (`None`: it did not fail).
    pub how: Option<String>,
}

/// The end of `run`'s child, which exited with `code` (`None`: a signal), `stopped` by the
/// server or not, the run being `now` in the database.
pub fn child_end(run: &Run, code: Option<i32>, stopped: bool, now: State) -> End {
    let id = run.id;
    let dir = Path::new(&run.dir);
    let tail = stderr_tail(dir);
    let state = end_state(code, stopped, now);
    let numbers = super::super::live::live(run.kind.as_str(), &run.words, dir);
    let numbers = Some(serde_json::to_string(&numbers).unwrap_or_default());
    let exit = code.map_or("by a signal".to_string(), |c| c.to_string());
    let (kind, message, how, tail) = match state {
        State::Finished => ("finish", format!("run {id} finished (exit 0)"), None, tail),
        State::Failed => match disk::full_reason(&tail, disk::free(dir).ok(), dir) {
            Some(reason) => (
                "failure",
                format!("run {id} failed (exit {exit}): {reason}"),
                Some("disk full".to_string()),
                format!("{reason}\n{tail}"),
            ),
            None => {
                let last = tail.lines().last().unwrap_or("no stderr");
                (
                    "failure",
                    format!("run {id} failed (exit {exit}): {last}"),
                    Some(format!("exit {exit}: {last}")),
                    tail,
                )
            }
        },
        State::Queued => (
            "stop",
            format!("run {id}: its child ended; it is queued again"),
            None,
            tail,
        ),
        other => (
            "stop",
            format!("run {id}: its child ended; the run is {other}"),
            None,
            tail,
        ),
    };
    End {
        code: code.map(i64::from),
        state,
        tail,
        numbers,
        kind,
        message,
        how,
    }
}

/// The failure of `run`'s child to start (`error`): the run fails, with `disk full: …`
/// first when the error says the disk is full.
pub fn start_failure(run: &Run, error: &str) -> End {
    let dir = Path::new(&run.dir);
    let reason = disk::full_reason(error, None, dir);
    End {
        state: State::Failed,
        code: None,
        tail: match &reason {
            Some(r) => format!("{r}\n{error}"),
            None => error.to_string(),
        },
        numbers: None,
        kind: "failure",
        message: format!("run {}: {}", run.id, reason.as_deref().unwrap_or(error)),
        how: Some(format!("start: {error}")),
    }
}

/// The first wait of [`Backoffs`], doubled at each failure the same way again.
pub const BACKOFF_FIRST: Duration = Duration::from_secs(2);

/// The longest wait of [`Backoffs`].
pub const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// The wait before the next start of a run whose child failed the same way `streak` times
/// in a row: none after one failure, then [`BACKOFF_FIRST`], doubling up to [`BACKOFF_MAX`].
pub fn backoff_delay(streak: u32) -> Duration {
    if streak < 2 {
        return Duration::ZERO;
    }
    BACKOFF_FIRST
        .saturating_mul(1 << (streak - 2).min(16))
        .min(BACKOFF_MAX)
}

/// One run's failures in a row.
#[derive(Debug)]
struct Streak {
    how: String,
    count: u32,
    until: Instant,
}

/// The runs whose child failed, how and how often in a row, and until when their next start
/// waits.
#[derive(Debug, Default)]
pub struct Backoffs(HashMap<i64, Streak>);

impl Backoffs {
    /// Run `id`'s child ended `how` (`None`: it did not fail, which ends its streak) at
    /// `now`: the wait before its next start.
    pub fn ended(&mut self, id: i64, how: Option<&str>, now: Instant) -> (u32, Duration) {
        let Some(how) = how else {
            self.0.remove(&id);
            return (0, Duration::ZERO);
        };
        let count = match self.0.get(&id) {
            Some(s) if s.how == how => s.count + 1,
            _ => 1,
        };
        let delay = backoff_delay(count);
        let streak = Streak {
            how: how.to_string(),
            count,
            until: now + delay,
        };
        self.0.insert(id, streak);
        (count, delay)
    }

    /// Whether run `id` waits at `now` before its next start.
    pub fn waits(&self, id: i64, now: Instant) -> bool {
        self.0.get(&id).is_some_and(|s| s.until > now)
    }
}

impl Scheduler {
    /// `end` of run `id`, its streak of failures noted: when it failed the same way again,
    /// its message says how long its next start waits.
    pub(super) fn backed_off(&self, id: i64, mut end: End) -> End {
        let now = Instant::now();
        let (count, delay) =
            self.backoffs
                .lock()
                .expect("backoffs lock")
                .ended(id, end.how.as_deref(), now);
        if !delay.is_zero() {
            end.message.push_str(&format!(
                " (the same failure {count} times in a row: its next start waits {} s)",
                delay.as_secs()
            ));
        }
        end
    }

    /// Whether run `id` must not start now: its end is not recorded yet, or it waits after
    /// failing the same way again.
    pub(super) fn held(&self, id: i64) -> bool {
        self.unrecorded
            .lock()
            .expect("unrecorded lock")
            .contains_key(&id)
            || self
                .backoffs
                .lock()
                .expect("backoffs lock")
                .waits(id, Instant::now())
    }

    /// Writes `end` of run `id` as one unit (state, numbers, event; the reserve released
    /// when the disk is full). When it cannot be written, it is held: the run is not
    /// started again, and [`Scheduler::flush`] writes it once the database can take it.
    pub(super) fn record(&self, id: i64, end: End) {
        let written = self.space.retry(|| {
            self.store.blocking(|db| {
                db.atomically(|db| {
                    db.ended(id, end.state, end.code, &end.tail)?;
                    if let Some(numbers) = &end.numbers {
                        db.set_last_live(id, numbers)?;
                    }
                    db.event(Some(id), end.kind, &end.message)
                })
            })
        });
        let mut unrecorded = self.unrecorded.lock().expect("unrecorded lock");
        match written {
            Ok(()) => {
                if unrecorded.remove(&id).is_some() {
                    eprintln!(
                        "spar serve: run {id}: its end ({}) is recorded now",
                        end.state
                    );
                }
            }
            Err(e) => {
                if !unrecorded.contains_key(&id) {
                    eprintln!(
                        "spar serve: run {id} is {}, but the database cannot record it ({e}): \
                         it is not started again, and is recorded once the database can take it",
                        end.state
                    );
                }
                unrecorded.insert(id, end);
            }
        }
    }

    /// Tries again to write the ends held by [`Scheduler::record`].
    pub(super) fn flush(&self) {
        let held: Vec<(i64, End)> = self
            .unrecorded
            .lock()
            .expect("unrecorded lock")
            .iter()
            .map(|(id, end)| (*id, end.clone()))
            .collect();
        for (id, end) in held {
            self.record(id, end);
        }
    }

    /// The runs whose end the database could not record yet, each with what it will
    /// record (`failed: disk full: …`), by run.
    pub fn unrecorded(&self) -> Vec<(i64, String)> {
        let held = self.unrecorded.lock().expect("unrecorded lock");
        let mut v: Vec<(i64, String)> = held
            .iter()
            .map(|(id, end)| {
                let why = end.tail.lines().next().unwrap_or_default();
                (*id, format!("{}: {why}", end.state))
            })
            .collect();
        v.sort_by_key(|x| x.0);
        v
    }

    /// Whether the free space is under `--min-free` now; when that changes, a `disk`
    /// event says so.
    pub(super) fn watch_space(&self) -> bool {
        let low = self.space.low();
        if self.low.swap(low.is_some(), Ordering::SeqCst) == low.is_some() {
            return low.is_some();
        }
        let message = match (low, self.space.banner()) {
            (Some(_), Some(banner)) => banner,
            _ => format!(
                "disk space back: {} free in {}, at least --min-free {}: new runs are taken \
                 and queued runs start again",
                self.space.free().map_or("?".into(), show),
                self.space.data().display(),
                show(self.space.min_free()),
            ),
        };
        eprintln!("spar serve: {message}");
        self.event(None, "disk", &message);
        low.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_failure_again_waits_doubling_up_to_five_minutes() {
        assert_eq!(backoff_delay(1), Duration::ZERO);
        assert_eq!(backoff_delay(2), Duration::from_secs(2));
        assert_eq!(backoff_delay(3), Duration::from_secs(4));
        assert_eq!(backoff_delay(9), Duration::from_secs(256));
        assert_eq!(backoff_delay(10), BACKOFF_MAX);
        assert_eq!(backoff_delay(u32::MAX), BACKOFF_MAX);
        let mut b = Backoffs::default();
        let t = Instant::now();
        assert_eq!(b.ended(1, Some("disk full"), t), (1, Duration::ZERO));
        assert!(!b.waits(1, t));
        assert_eq!(b.ended(1, Some("disk full"), t).0, 2);
        assert!(b.waits(1, t) && !b.waits(1, t + Duration::from_secs(3)));
        assert!(!b.waits(2, t));
        assert_eq!(b.ended(1, Some("disk full"), t).1, Duration::from_secs(4));
        // Another failure starts a new streak; an end that is no failure ends it.
        assert_eq!(b.ended(1, Some("exit 1: x"), t), (1, Duration::ZERO));
        b.ended(1, Some("exit 1: x"), t);
        assert!(b.waits(1, t));
        assert_eq!(b.ended(1, None, t), (0, Duration::ZERO));
        assert!(!b.waits(1, t));
    }

    fn run(dir: &Path) -> Run {
        Run {
            id: 7,
            kind: "datagen".into(),
            words: vec!["--games".into(), "9".into()],
            throughput: 100,
            state: State::Running,
            dir: dir.to_string_lossy().into_owned(),
            cwd: "/".into(),
            ..Run::default()
        }
    }

    #[test]
    fn a_child_that_failed_for_lack_of_space_fails_its_run_with_disk_full() {
        let dir = tempfile::tempdir().unwrap();
        let r = run(dir.path());
        std::fs::write(
            dir.path().join("stderr.log"),
            "spar: error: positions.txt: No space left on device (os error 28)\n",
        )
        .unwrap();
        let end = child_end(&r, Some(1), false, State::Running);
        assert_eq!((end.state.as_str(), end.code), ("failed", Some(1)));
        assert!(end
            .tail
            .starts_with("disk full: spar: error: positions.txt"));
        assert!(end
            .tail
            .ends_with("\nspar: error: positions.txt: No space left on device (os error 28)"));
        assert!(end
            .message
            .starts_with("run 7 failed (exit 1): disk full: "));
        assert_eq!(end.how.as_deref(), Some("disk full"));
        assert!(end.numbers.is_some());
        // Stopped by the server, the same stderr is no failure.
        let end = child_end(&r, Some(130), true, State::Running);
        assert_eq!((end.state.as_str(), end.how), ("queued", None));
        // Another failure keeps its tail as it is.
        std::fs::write(dir.path().join("stderr.log"), "spar: error: bad book\n").unwrap();
        let end = child_end(&r, Some(1), false, State::Running);
        assert_eq!(end.tail, "spar: error: bad book");
        assert_eq!(end.how.as_deref(), Some("exit 1: spar: error: bad book"));
        // A start that failed.
        let end = start_failure(&r, "x/stderr.log: No space left on device (os error 28)");
        assert!(
            end.tail.starts_with("disk full: x/stderr.log"),
            "{}",
            end.tail
        );
        assert!(
            end.message.starts_with("run 7: disk full: "),
            "{}",
            end.message
        );
        let end = start_failure(&r, "cannot start /nope: not found");
        assert_eq!(end.message, "run 7: cannot start /nope: not found");
    }
}
