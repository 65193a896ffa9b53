//! Ctrl-C (and SIGTERM) for every long run: the first interrupt raises a flag the run
//! watches (it stops taking new work, keeps what is complete and prints its summary); a
//! second one, pressed later, exits at once. Every file a run appends to is written one
//! whole record at a time, so an exit at any moment leaves files that `--resume` accepts.
//!
//! `timeout -s INT`, Slurm and a terminal deliver one signal to the process *and* to its
//! process group, so spar can see two signals microseconds apart: a repeat within
//! [`SAME_INTERRUPT`] of the first counts as the same interrupt. SIGTERM (what Slurm sends
//! before a walltime kill or on `scancel`) is a graceful stop, like the first Ctrl-C.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// Signals this close to the first one are the same interrupt (delivered twice).
pub const SAME_INTERRUPT: Duration = Duration::from_secs(1);

/// What a signal means, given when the first one arrived (`None`: this is the first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The first interrupt: stop gracefully.
    First,
    /// The same interrupt again (delivered to the process and its group): ignore it.
    Repeat,
    /// A second interrupt, pressed later: exit at once.
    Second,
}

/// Classifies a signal arriving `since_first` after the first one (`None`: no earlier one).
pub fn verdict(since_first: Option<Duration>) -> Verdict {
    match since_first {
        None => Verdict::First,
        Some(d) if d < SAME_INTERRUPT => Verdict::Repeat,
        Some(_) => Verdict::Second,
    }
}

/// The run that interrupts go to now: its flag and the message of its first interrupt.
type Current = Option<(Arc<AtomicBool>, &'static str)>;

static CURRENT: Mutex<Current> = Mutex::new(None);
/// When the first interrupt of the current run arrived.
static FIRST: Mutex<Option<Instant>> = Mutex::new(None);
static INSTALL: Once = Once::new();

/// Returns a fresh flag that the next interrupt (SIGINT, SIGTERM, SIGHUP) raises, for the
/// run that starts now. `what_happens` completes the message printed at the first
/// interrupt, e.g. "finishing up". The handler is installed once per process; a run that
/// follows another in the same process (a tune's verification SPRT after its iterations)
/// calls this again and takes the interrupts over from the first.
pub fn on_ctrl_c(what_happens: &'static str) -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    *FIRST.lock().unwrap_or_else(|e| e.into_inner()) = None;
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some((flag.clone(), what_happens));
    INSTALL.call_once(|| {
        // Fails only when another handler is installed (none is): the default action
        // (exit) then applies.
        let _ = ctrlc::set_handler(handle);
    });
    flag
}

/// The handler: raises the current run's flag at the first interrupt, exits at a second.
fn handle() {
    let mut first = FIRST.lock().unwrap_or_else(|e| e.into_inner());
    match verdict(first.map(|t| t.elapsed())) {
        Verdict::First => {
            *first = Some(Instant::now());
            if let Some((flag, what)) = &*CURRENT.lock().unwrap_or_else(|e| e.into_inner()) {
                flag.store(true, Ordering::SeqCst);
                eprintln!("\nspar: interrupt: {what} (press Ctrl-C again to exit at once)");
            }
        }
        Verdict::Repeat => {}
        Verdict::Second => {
            eprintln!("\nspar: second interrupt, exiting now");
            std::process::exit(130);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_within_a_second_is_the_same_interrupt() {
        assert_eq!(verdict(None), Verdict::First);
        assert_eq!(verdict(Some(Duration::from_micros(30))), Verdict::Repeat);
        assert_eq!(verdict(Some(Duration::from_millis(999))), Verdict::Repeat);
        assert_eq!(verdict(Some(Duration::from_millis(1500))), Verdict::Second);
    }
}
