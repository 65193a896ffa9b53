//! Ctrl-C for every long run: the first interrupt raises a flag the run watches (it stops
//! taking new work, keeps what is complete and prints its summary); the second exits at
//! once. Every file a run appends to is written one whole record at a time, so an exit at
//! any moment leaves files that `--resume` accepts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Installs the handler and returns the flag it raises. `what_happens` completes the
/// message printed at the first interrupt, e.g. "finishing up".
pub fn on_ctrl_c(what_happens: &'static str) -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let raised = flag.clone();
    // A second handler cannot be installed (only one run per process): the flag then stays
    // low and the default action (exit) applies.
    let _ = ctrlc::set_handler(move || {
        if raised.swap(true, Ordering::SeqCst) {
            eprintln!("\nspar: second interrupt, exiting now");
            std::process::exit(130);
        }
        eprintln!("\nspar: interrupt: {what_happens} (press Ctrl-C again to exit at once)");
    });
    flag
}
