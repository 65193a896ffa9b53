//! Runs that outgrow one machine: a match, SPRT, datagen or report run split into shards
//! that run as the tasks of one Slurm job array (or any scheduler that can run `spar
//! shard`).
//!
//! Everything lives in the run directory, on a filesystem every node shares:
//!
//! ```text
//! RUN_DIR/manifest.json        the immutable plan (manifest.rs)
//! RUN_DIR/jobs.json            the array jobs submitted (coordinator.rs)
//! RUN_DIR/STOP                 present: every shard stops within a second
//! RUN_DIR/horizon              an SPRT's first pair no shard may start yet (horizon.rs)
//! RUN_DIR/coordinator.lock     held by the live coordinator (one per run directory)
//! RUN_DIR/engines/SEAT/spar    git=/features= builds, built once by the coordinator
//! RUN_DIR/logs/JOB_TASK.out    the array tasks' output
//! RUN_DIR/shards/I/            shard I's own records: results.csv (the commit record),
//!                              games.pgn, positions (dump or datagen file), stats.json
//!                              (a report's statistics checkpoint), failed.json,
//!                              shard.lock (held by the process playing the shard),
//!                              paused (the pair it stopped before, at the horizon)
//! ```
//!
//! Pair k always plays opening k with seeds derived from (run seed, k), both games on one
//! worker, so a pair played twice gives the same games; shard I of N plays pairs I, I+N, …
//! and appends to its own directory only (no file is shared between nodes). `merge` and
//! `status` read the shard records at any time. No output of any command may be one of
//! these files ([`crate::files::run_dir::owned_file`]).

pub mod coordinator;
pub mod csv_tail;
pub mod horizon;
pub mod html;
pub mod manifest;
pub mod merge;
pub mod merged;
pub mod records;
pub mod setup;
pub mod shard;
pub mod slurm;
pub mod status;

use std::path::{Path, PathBuf};

/// The directory of shard `index`.
pub fn shard_dir(dir: &Path, index: u64) -> PathBuf {
    dir.join("shards").join(index.to_string())
}

/// Shard `index`'s results CSV: the record of its finished pairs.
pub fn shard_results(dir: &Path, index: u64) -> PathBuf {
    shard_dir(dir, index).join("results.csv")
}

/// Shard `index`'s PGN.
pub fn shard_pgn(dir: &Path, index: u64) -> PathBuf {
    shard_dir(dir, index).join("games.pgn")
}

/// Shard `index`'s training positions (a match's dump, or datagen's file).
pub fn shard_positions(dir: &Path, index: u64) -> PathBuf {
    shard_dir(dir, index).join("positions")
}

/// Shard `index`'s statistics checkpoint (a report's: the `track!` statistics of its
/// first pairs, see `jobs/report/checkpoint.rs`).
pub fn shard_stats(dir: &Path, index: u64) -> PathBuf {
    shard_dir(dir, index).join(crate::files::run_dir::SHARD_STATS)
}

/// Written by a shard that failed (its exit code and message).
pub fn shard_failed(dir: &Path, index: u64) -> PathBuf {
    shard_dir(dir, index).join("failed.json")
}

/// Written by a shard when it starts: the machine it plays on (Slurm's `SLURMD_NODENAME`,
/// else the host name), one line; the server's residuals group the shards by it.
pub fn shard_node(dir: &Path, index: u64) -> PathBuf {
    shard_dir(dir, index).join("node")
}

/// Written by a shard when it starts with [`SHARD_BENCH_ENV`] set: its machine's `spar
/// bench` speed (nodes per second), one line; the server stores it per machine.
pub fn shard_nps(dir: &Path, index: u64) -> PathBuf {
    shard_dir(dir, index).join("nps")
}

/// The environment variable that asks `spar shard` for [`shard_nps`] (`1`): set by
/// `spar serve` for its cluster runs' coordinators (sbatch passes its environment to the
/// tasks), so that a shard started from the command line benches nothing.
pub const SHARD_BENCH_ENV: &str = "SPAR_SHARD_BENCH";

/// The name of the machine this process runs on: `SLURMD_NODENAME` when Slurm set it (the
/// node as Slurm names it, which `--exclude` takes), else the kernel's host name, else
/// `localhost`.
pub fn machine_name(env: &dyn Fn(&str) -> Option<String>) -> String {
    let slurm = env("SLURMD_NODENAME").filter(|n| !n.trim().is_empty());
    slurm
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// The file whose presence stops every shard.
pub fn stop_file(dir: &Path) -> PathBuf {
    dir.join("STOP")
}

/// The coordinator's lock: one coordinator per run directory.
pub fn coordinator_lock(dir: &Path) -> PathBuf {
    dir.join("coordinator.lock")
}

/// Shard `index`'s lock: one process per shard.
pub fn shard_lock(dir: &Path, index: u64) -> PathBuf {
    shard_dir(dir, index).join("shard.lock")
}

/// The array tasks' output files.
pub fn log_dir(dir: &Path) -> PathBuf {
    dir.join("logs")
}
