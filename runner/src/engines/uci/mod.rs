//! External UCI engines driven over pipes, the way fastchess drives them.
//!
//! One [`UciPlayer`] owns one engine process. Its stdout is read by a thread that feeds lines
//! into a channel, so every wait has a deadline (`recv_timeout`) and end-of-file shows up as a
//! crash at once. The handshake (`uci`/`uciok`, options, `isready`/`readyok`) runs when the
//! player is made and again whenever a crashed or stalled engine is restarted for a new game
//! (`--recover` semantics: the game loop scores the crash as a loss, the next game gets a fresh
//! process).
//!
//! ## Watchdog
//!
//! Every `go` has a deadline, measured from the moment `go` is sent:
//!
//! * with a clock for the side to move: remaining time + the variant's time margin + grace;
//! * with `movetime`: movetime + grace (the smaller of the two when both are given);
//! * otherwise (nodes/depth limits): the stall timeout (default 10 s).
//!
//! When the deadline passes the player sends `stop` and waits [`STOP_WAIT`] for a `bestmove`.
//! An answer in that window is returned (and counted as a late answer; the game loop, which
//! times every move itself, decides about clock forfeits). No answer: the process is killed and
//! `go` returns [`PlayerError::Stalled`].

mod player;
mod process;
mod protocol;
#[cfg(test)]
mod tests;

pub use player::UciPlayer;

use std::time::Duration;

/// Default watchdog for searches without time information (node or depth limits).
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Default extra time beyond the clock (plus margin) or movetime before the watchdog fires.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(1);
/// Default time allowed for `uciok` and for each `readyok`.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a stalled engine gets to answer `stop` before it is killed.
pub const STOP_WAIT: Duration = Duration::from_millis(200);
/// How long `shutdown` waits for the engine to exit after `quit` before killing it.
pub const QUIT_WAIT: Duration = Duration::from_millis(200);
/// How often a running `go` looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(25);
/// Lines of the engine's stderr kept for crash messages.
const STDERR_TAIL: usize = 6;
