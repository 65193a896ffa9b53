//! One writer at a time: an exclusive lock on a run's output (`--results`, datagen's
//! `--out`, a tune's `--csv`), on a cluster run directory (its coordinator) and on a
//! shard's directory, so that a second process on the same files is refused before any
//! work instead of interleaving its records with the first's.
//!
//! The lock is the operating system's advisory lock (`flock`) on a small file next to what
//! it guards (`FILE.lock`, `RUN_DIR/coordinator.lock`): it is held by an open file, so the
//! kernel drops it when the process ends, however it ends (`kill -9` too) — a dead process
//! never leaves it held. The file itself stays (removing it could let two processes lock
//! two different files); it holds the pid and command line of the last holder, for the
//! message a refused process prints. Special files (`/dev/null`) need and get no lock.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{CliError, CliResult};
use crate::files::paths::with_suffix;

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct Lock {
    _file: File,
    path: PathBuf,
}

impl Lock {
    /// The lock file.
    #[allow(dead_code)] // for the cluster's directory locks; the local outputs need no path
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The lock file of an output `file` (`R.csv` → `R.csv.lock`).
pub fn lock_file_for(file: &Path) -> PathBuf {
    with_suffix(file, ".lock")
}

/// Whether some process holds the lock of the output `file` now (tested with a shared lock
/// on its lock file, opened read-only: nothing is written). A missing lock file, or one
/// that is not a regular file (never opened: a FIFO would block), means no holder.
pub fn is_held(file: &Path) -> bool {
    let path = lock_file_for(file);
    if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(lock) = File::open(path) else {
        return false;
    };
    matches!(
        lock.try_lock_shared(),
        Err(std::fs::TryLockError::WouldBlock)
    )
}

/// Locks the output `file` named by `flag` for this process (`None` for a device or pipe,
/// which is written in place and shared by design). A file another spar holds is a usage
/// error naming it, the holder and the fix.
pub fn lock_output(file: &Path, flag: &str) -> CliResult<Option<Lock>> {
    if std::fs::metadata(file).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Ok(None);
    }
    acquire(&lock_file_for(file), &format!("{flag} {}", file.display())).map(Some)
}

/// [`acquire`], waiting up to `wait` for a holder that is on its way out (a shard's earlier
/// task still flushing after SIGTERM when its requeue starts).
pub fn acquire_within(lock_file: &Path, what: &str, wait: std::time::Duration) -> CliResult<Lock> {
    let started = std::time::Instant::now();
    loop {
        match acquire(lock_file, what) {
            Err(e) if started.elapsed() < wait && e.message.contains(IN_USE) => {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// The words of a refusal because another process holds the lock.
const IN_USE: &str = "is in use by another spar";

/// Locks `lock_file` (created if missing) for this process; `what` names what it guards
/// in the refusal (`--out games.vf`, `--run-dir /shared/r1`).
pub fn acquire(lock_file: &Path, what: &str) -> CliResult<Lock> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_file)
        .map_err(|e| {
            CliError::usage(format!(
                "{what}: cannot create its lock file {}: {e} (give a path in a writable directory)",
                lock_file.display()
            ))
        })?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = (&file).take(4096).read_to_string(&mut holder);
            let holder = holder.trim();
            let by = if holder.is_empty() {
                String::new()
            } else {
                format!(" ({holder})")
            };
            return Err(CliError::usage(format!(
                "{what} {IN_USE}{by}: wait for it to end, stop it, or give another name"
            )));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(CliError::usage(format!(
                "{what}: cannot lock {}: {e} (the filesystem must support file locks)",
                lock_file.display()
            )))
        }
    }
    // Who holds it, for the message of a process that is refused.
    let args: Vec<String> = std::env::args().collect();
    let me = format!("pid {}: {}", std::process::id(), args.join(" "));
    let _ = file
        .set_len(0)
        .and_then(|_| file.seek(SeekFrom::Start(0)))
        .and_then(|_| file.write_all(me.as_bytes()));
    Ok(Lock {
        _file: file,
        path: lock_file.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_a_released_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("games.vf");
        let first = lock_output(&out, "--out").unwrap().expect("a lock");
        assert_eq!(first.path(), lock_file_for(&out));
        let err = lock_output(&out, "--out").unwrap_err();
        assert_eq!(err.code, 2);
        assert!(
            err.message.contains("--out") && err.message.contains("in use by another spar (pid"),
            "{}",
            err.message
        );
        drop(first);
        // Another test's child, between its fork and exec, may share the descriptor for a
        // moment: free within a second.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while lock_output(&out, "--out").is_err() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(lock_output(&out, "--out").unwrap().is_some());
        assert!(lock_output(Path::new("/dev/null"), "--json")
            .unwrap()
            .is_none());
    }

    #[test]
    fn is_held_sees_a_holder_and_never_opens_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.csv");
        assert!(!is_held(&out), "no lock file: no holder");
        let held = lock_output(&out, "--results").unwrap().expect("a lock");
        assert!(is_held(&out));
        drop(held);
        // The kernel may take a moment if another test's child shares the descriptor.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while is_held(&out) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!is_held(&out));
        // A FIFO in the lock file's place would block an open: it is not opened.
        let fifo_out = dir.path().join("f.csv");
        let made = std::process::Command::new("mkfifo")
            .arg(lock_file_for(&fifo_out))
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        assert!(!is_held(&fifo_out));
    }

    #[test]
    fn a_lock_held_by_a_killed_process_is_free() {
        // A child takes the lock with flock(1) (`-o`: its `sleep` does not inherit it), then
        // is killed with SIGKILL.
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("run.lock");
        let Ok(mut child) = std::process::Command::new("flock")
            .arg("-o")
            .arg(&lock)
            .args(["sleep", "20"])
            .spawn()
        else {
            return; // no flock(1) here
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while acquire(&lock, "x").is_ok() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(acquire(&lock, "x").is_err(), "the child holds it");
        child.kill().unwrap();
        child.wait().unwrap();
        // flock(1)'s forked child may still hold the descriptor for a moment after the
        // kill (`-o` closes it in the child just before the exec): wait for it, briefly.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while acquire(&lock, "x").is_err() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(acquire(&lock, "x").is_ok(), "freed by the kernel");
    }
}
