//! A test hook for crash safety: `SPAR_TEST_KILL_AT=N` in the environment makes spar stop
//! dead (exit code 137, as after `kill -9`: no destructors run, nothing more is written;
//! every record is written unbuffered, so the files hold exactly what a kill leaves) right after
//! the Nth record it writes — a game to the PGN, a row to the results CSV, a game to a
//! position dump or a datagen file, an epoch's checkpoint of `spar train`. The integration
//! tests use it to stop a run at every write boundary and check that `--resume` repairs the
//! files. Unset (always, outside tests), it costs one check of a cached value per record.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable.
pub const ENV: &str = "SPAR_TEST_KILL_AT";

static WRITES: AtomicU64 = AtomicU64::new(0);

fn kill_at() -> Option<u64> {
    static AT: OnceLock<Option<u64>> = OnceLock::new();
    *AT.get_or_init(|| std::env::var(ENV).ok().and_then(|v| v.trim().parse().ok()))
}

/// Called after each record is written; aborts the process at the chosen record.
pub fn record_written() {
    let Some(at) = kill_at() else { return };
    if WRITES.fetch_add(1, Ordering::Relaxed) + 1 == at {
        // Not abort(): that could leave core files in the user's directory.
        std::process::exit(137);
    }
}
