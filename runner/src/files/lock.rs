//! One writer at a time: an exclusive lock on a run's output (`--results`, datagen's
//! `--out`, a tune's `--csv`), on a cluster run directory (its coordinator) and on a
//! shard's directory, so that a second process on the same files is refused before any
//! work instead of interleaving its records with the first's.
//!
//! The lock is the operating system's advisory lock (`flock`) on a small file next to what
//! it guards (`FILE.lock`, `RUN_DIR/coordinator.lock`): it is held by an open file, so the
//! kernel drops it when the process ends, however it ends (`kill -9` too) — a dead process
//! never leaves it held, and the file it leaves is harmless: the next run locks it again.
//! It holds the pid and command line of the holder, for the message a refused process
//! prints. Special files (`/dev/null`) need and get no lock.
//!
//! An output's lock file is removed when its run ends (normally, by Ctrl-C or by an
//! error: whenever the [`Lock`] is dropped), so that no `FILE.lock` litters the user's
//! directory. The file is unlinked while still locked, and a locker checks after `flock`
//! that the path still names the file it locked (same device and inode), trying again
//! if not: two processes can never hold locks on two different files of the same path.
//! A cluster run directory's locks stay (they are files the run owns).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{CliError, CliResult};
use crate::files::names::with_suffix;

/// A held lock; dropping it releases it (and removes the lock file of an output).
#[derive(Debug)]
pub struct Lock {
    file: File,
    path: PathBuf,
    /// Remove the lock file on drop (an output's `FILE.lock`, not a run directory's).
    remove: bool,
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Unlinked while the lock is held (the file closes after this): a process that
        // opened the old file and locks it once we let go sees that the path no longer
        // names it, and starts over on a new one.
        if self.remove && names(&self.path, &self.file) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Whether `path` names the open file `file` now (same device and inode; links followed).
fn names(path: &Path, file: &File) -> bool {
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(at_path), Ok(open)) => same_file(&at_path, &open),
        _ => false,
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_a: &std::fs::Metadata, _b: &std::fs::Metadata) -> bool {
    true
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
    let mut lock = acquire(&lock_file_for(file), &format!("{flag} {}", file.display()))?;
    lock.remove = true;
    Ok(Some(lock))
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

/// How many times a lock is taken again when its file was removed or replaced between
/// the open and the lock (its holder ending just then): far more than any real race needs.
const RETRIES: usize = 100;

/// Locks `lock_file` (created if missing) for this process; `what` names what it guards
/// in the refusal (`--out games.vf`, `--run-dir /shared/r1`). The lock file stays when the
/// lock is dropped.
pub fn acquire(lock_file: &Path, what: &str) -> CliResult<Lock> {
    for _ in 0..RETRIES {
        if let Some(lock) = try_acquire(lock_file, what)? {
            return Ok(lock);
        }
    }
    Err(CliError::failure(format!(
        "{what}: its lock file {} keeps being removed or replaced by another process: \
         find what removes it, then run again",
        lock_file.display()
    )))
}

/// One try of [`acquire`]: `None` when the file locked is no longer the one at the path
/// (its holder removed it as it ended), to be tried again.
fn try_acquire(lock_file: &Path, what: &str) -> CliResult<Option<Lock>> {
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
    if !names(lock_file, &file) {
        return Ok(None);
    }
    // Who holds it, for the message of a process that is refused.
    let args: Vec<String> = std::env::args().collect();
    let me = format!("pid {}: {}", std::process::id(), args.join(" "));
    let _ = file
        .set_len(0)
        .and_then(|_| file.seek(SeekFrom::Start(0)))
        .and_then(|_| file.write_all(me.as_bytes()));
    Ok(Some(Lock {
        file,
        path: lock_file.to_path_buf(),
        remove: false,
    }))
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
    fn an_output_lock_file_is_removed_when_dropped_and_a_stale_one_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.csv");
        let lock = lock_output(&out, "--results").unwrap().expect("a lock");
        assert!(lock_file_for(&out).is_file());
        drop(lock);
        assert!(!lock_file_for(&out).exists(), "no litter once the run ends");
        // A lock file left by a killed holder (no one holds it): locked again and removed.
        std::fs::write(lock_file_for(&out), "pid 1: spar match").unwrap();
        let lock = lock_output(&out, "--results").unwrap().expect("a lock");
        assert!(std::fs::read_to_string(lock_file_for(&out))
            .unwrap()
            .contains(&format!("pid {}", std::process::id())));
        drop(lock);
        assert!(!lock_file_for(&out).exists());
        // A run directory's lock stays.
        let dir_lock = dir.path().join("coordinator.lock");
        drop(acquire(&dir_lock, "--run-dir").unwrap());
        assert!(dir_lock.is_file());
    }

    #[test]
    fn a_lock_on_a_file_no_longer_at_the_path_is_taken_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv.lock");
        // The file a late locker opened, then removed by its holder before the lock.
        let old = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(!names(&path, &old), "the path no longer names it");
        // Replaced by a new file at the same path: not the same either.
        std::fs::write(&path, "").unwrap();
        assert!(!names(&path, &old));
        let lock = acquire(&path, "--results r.csv").unwrap();
        assert!(
            names(&path, &lock.file),
            "the lock is on the file at the path"
        );
        // Its holder's lock is seen by a second locker of the path.
        assert!(acquire(&path, "--results r.csv").is_err());
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
