//! The data directory's free space (issue 56: a full disk made an endless restart loop).
//!
//! - Below `--min-free` ([`Space::low`]) the server refuses new runs (507, [`Space::refusal`])
//!   and starts no child (queued runs wait; running ones play on), and the index says so
//!   ([`Space::banner`]).
//! - A child that fails for lack of space ([`full_reason`]: its stderr says so, or the disk
//!   is nearly empty when it ends) fails its run with a reason `disk full: …` that the pages
//!   show ([`reason`]).
//! - The reserve ([`reserve`]) holds room for the database's records: when one fails
//!   because the disk is full, [`Space::retry`] releases it and writes again; it is made
//!   again once there is room ([`Space::keep_reserve`]).

pub mod reserve;
pub mod size;

use std::path::{Path, PathBuf};

use super::db::runs::{Run, State};
use reserve::RESERVE;
use size::show;

/// The free space the data directory keeps without `--min-free`: 1 GiB.
pub const DEFAULT_MIN_FREE: u64 = 1 << 30;

/// Below this free space a failed child's end is put down to a full disk even when its
/// stderr does not say so (on a full disk its last message may not reach its log).
pub const NEARLY_NOTHING: u64 = 1 << 20;

/// How a run's reason starts when its child failed for lack of space.
pub const REASON_PREFIX: &str = "disk full: ";

/// The words (lower case) by which programs say that a disk is full: the kernel's ENOSPC
/// and EDQUOT as Rust, C and SQLite print them.
const FULL_WORDS: &[&str] = &[
    "no space left on device",
    "enospc",
    "os error 28",
    "disk is full",
    "disk quota exceeded",
    "os error 122",
];

/// The longest part of a child's stderr line a reason quotes, in characters.
const MAX_CAUSE: usize = 300;

/// The bytes free for this user on the filesystem of `dir` (`statvfs`: the blocks
/// available to an unprivileged user, not the root's reserve).
pub fn free(dir: &Path) -> Result<u64, String> {
    let s = nix::sys::statvfs::statvfs(dir)
        .map_err(|e| format!("{}: cannot read its free space: {e}", dir.display()))?;
    #[allow(clippy::unnecessary_cast)] // the types differ between platforms
    let bytes = (s.blocks_available() as u64).saturating_mul(s.fragment_size() as u64);
    Ok(bytes)
}

/// Whether `text` says that a disk is full.
pub fn says_full(text: &str) -> bool {
    full_line(text).is_some()
}

/// The last line of `text` that says a disk is full.
pub fn full_line(text: &str) -> Option<&str> {
    text.lines().rev().find(|l| {
        let l = l.to_ascii_lowercase();
        FULL_WORDS.iter().any(|w| l.contains(w))
    })
}

/// Why a child failed, when it is for lack of space: `disk full: CAUSE; FREE free on DIR:
/// …`, where CAUSE is the last line of its stderr `tail` that says so, or, when none does
/// and `free` (the free space on the filesystem of its run directory `dir`) is under
/// [`NEARLY_NOTHING`], that the disk was nearly full. `None`: another failure.
pub fn full_reason(tail: &str, free: Option<u64>, dir: &Path) -> Option<String> {
    let line = full_line(tail);
    if line.is_none() && free.is_none_or(|f| f >= NEARLY_NOTHING) {
        return None;
    }
    let cause = match line {
        Some(l) => {
            let l = l.trim();
            match l.char_indices().nth(MAX_CAUSE) {
                Some((cut, _)) => format!("{}…", &l[..cut]),
                None => l.to_string(),
            }
        }
        None => "its child failed with the disk nearly full".to_string(),
    };
    let left = free.map_or(String::new(), |f| {
        format!("; {} free on {}", show(f), dir.display())
    });
    Some(format!(
        "{REASON_PREFIX}{cause}{left}: free space, then resume the run"
    ))
}

/// Why a failed run failed, when the server knows more than its exit: the first line of
/// its stored stderr tail when that is a [`full_reason`].
pub fn reason(run: &Run) -> Option<&str> {
    if run.state != State::Failed {
        return None;
    }
    run.stderr_tail
        .lines()
        .next()
        .filter(|l| l.starts_with(REASON_PREFIX))
}

/// The data directory's space: its `--min-free` and its reserve.
#[derive(Debug)]
pub struct Space {
    data: PathBuf,
    min_free: u64,
}

impl Space {
    /// The space of data directory `data` (absolute), which keeps `min_free` bytes free
    /// (0: no threshold).
    pub fn new(data: &Path, min_free: u64) -> Space {
        Space {
            data: data.to_path_buf(),
            min_free,
        }
    }

    /// The data directory.
    pub fn data(&self) -> &Path {
        &self.data
    }

    /// The free space the data directory keeps (`--min-free`; 0: no threshold).
    pub fn min_free(&self) -> u64 {
        self.min_free
    }

    /// The bytes free in the data directory now (`None`: it cannot be read).
    pub fn free(&self) -> Option<u64> {
        free(&self.data).ok()
    }

    /// The free space when it is under `--min-free` (never with `--min-free 0`, nor when
    /// the free space cannot be read).
    pub fn low(&self) -> Option<u64> {
        if self.min_free == 0 {
            return None;
        }
        self.free().filter(|f| *f < self.min_free)
    }

    /// Why a new run is refused now (507), or `None`.
    pub fn refusal(&self) -> Option<String> {
        self.low().map(|free| {
            format!(
                "disk nearly full: {} free in {}, under --min-free {}: new runs are refused \
                 until {} are free (remove files from {} or old runs' large files, or start \
                 the server with a smaller --min-free; 0 turns the check off)",
                show(free),
                self.data.display(),
                show(self.min_free),
                show(self.min_free),
                self.data.join("archive").display(),
            )
        })
    }

    /// The index's banner while the free space is under `--min-free`, or `None`.
    pub fn banner(&self) -> Option<String> {
        self.low().map(|free| {
            format!(
                "disk nearly full: {} free in {}, under --min-free {}: new runs are refused \
                 and queued runs wait until {} are free (runs that play go on). Remove files \
                 from {} or old runs' large files, or start the server with a smaller \
                 --min-free.",
                show(free),
                self.data.display(),
                show(self.min_free),
                show(self.min_free),
                self.data.join("archive").display(),
            )
        })
    }

    /// The free space the reserve is made again at: its own and `--min-free` (at least
    /// its own again) beside it.
    fn reserve_room(&self) -> u64 {
        RESERVE.saturating_add(self.min_free.max(RESERVE))
    }

    /// Makes the reserve when it is missing and there is room for it (see
    /// [`Space::reserve_room`]): true when it is in place now.
    pub fn keep_reserve(&self) -> bool {
        if reserve::present(&self.data) {
            return true;
        }
        if self.free().is_none_or(|f| f < self.reserve_room()) {
            return false;
        }
        match reserve::make(&self.data) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("spar serve: {e}");
                false
            }
        }
    }

    /// Runs the database write `f`; when it fails because the disk is full and the
    /// reserve is in place, releases the reserve and runs `f` again.
    pub fn retry<T>(&self, mut f: impl FnMut() -> Result<T, String>) -> Result<T, String> {
        match f() {
            Err(e) if says_full(&e) && reserve::release(&self.data) => {
                eprintln!(
                    "spar serve: the disk is full ({e}): {} ({}) released to record it; it is \
                     made again once {} are free",
                    reserve::path(&self.data).display(),
                    show(RESERVE),
                    show(self.reserve_room()),
                );
                f()
            }
            r => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_full_is_told_from_other_failures() {
        let tail = "8347 games, 137676 positions\n\
                    spar: error: /d/runs/1/positions.txt: No space left on device (os error 28)";
        let r = full_reason(tail, Some(8 << 10), Path::new("/d/runs/1")).unwrap();
        assert!(r.starts_with("disk full: spar: error: /d/runs/1/positions.txt: No space"));
        assert!(r.contains("; 8.0 KiB free on /d/runs/1: free space"), "{r}");
        for tail in [
            "Error: database or disk is full",
            "write: ENOSPC",
            "fwrite failed: Disk quota exceeded",
            "x: os error 122",
        ] {
            assert!(
                full_reason(tail, Some(1 << 30), Path::new("/d")).is_some(),
                "{tail}"
            );
        }
        // Another failure on a disk with room is not a disk full…
        let other = "spar: error: engine a: exited before uciok";
        assert_eq!(full_reason(other, Some(1 << 30), Path::new("/d")), None);
        assert_eq!(full_reason(other, None, Path::new("/d")), None);
        assert_eq!(full_reason("", Some(NEARLY_NOTHING), Path::new("/d")), None);
        // …but a failure on a disk with nearly nothing left is (its message may be lost).
        let r = full_reason("", Some(4096), Path::new("/d")).unwrap();
        assert!(r.contains("nearly full; 4.0 KiB free on /d"), "{r}");
        // A long line is cut.
        let long = format!("{} No space left on device", "x".repeat(5000));
        assert!(full_reason(&long, None, Path::new("/d")).unwrap().len() < 500);
    }

    #[test]
    fn a_reason_is_the_first_line_of_a_failed_runs_tail() {
        let mut run = Run {
            id: 1,
            kind: "datagen".into(),
            throughput: 100,
            state: State::Failed,
            exit_code: Some(1),
            stderr_tail: "disk full: x: No space left on device\nspar: error: x".into(),
            ..Run::default()
        };
        assert_eq!(reason(&run), Some("disk full: x: No space left on device"));
        run.state = State::Queued;
        assert_eq!(reason(&run), None);
        run.state = State::Failed;
        run.stderr_tail = "spar: error: disk full: no".into();
        assert_eq!(reason(&run), None);
    }

    #[test]
    fn min_free_zero_is_never_low_and_a_huge_one_always() {
        let dir = tempfile::tempdir().unwrap();
        let off = Space::new(dir.path(), 0);
        assert_eq!((off.low(), off.refusal(), off.banner()), (None, None, None));
        let huge = Space::new(dir.path(), u64::MAX);
        assert!(huge.low().is_some());
        let m = huge.refusal().unwrap();
        assert!(m.contains("--min-free") && m.contains("free in"), "{m}");
        assert!(huge.banner().unwrap().contains("queued runs wait"));
        // No room for the reserve under a huge threshold: none is made.
        assert!(!huge.keep_reserve());
        assert!(!reserve::present(dir.path()));
        assert!(off.keep_reserve() && reserve::present(dir.path()));
    }

    #[test]
    fn a_write_that_finds_the_disk_full_is_tried_again_once_with_the_reserve_released() {
        let dir = tempfile::tempdir().unwrap();
        let space = Space::new(dir.path(), 0);
        assert!(space.keep_reserve());
        let mut tries = 0;
        let r: Result<(), String> = space.retry(|| {
            tries += 1;
            match tries {
                1 => Err("database: database or disk is full".into()),
                _ => Ok(()),
            }
        });
        assert_eq!((r, tries), (Ok(()), 2));
        assert!(!reserve::present(dir.path()));
        // Without a reserve to release, the failure stands; another failure is not retried.
        let mut tries = 0;
        let r: Result<(), String> = space.retry(|| {
            tries += 1;
            Err("database: database or disk is full".into())
        });
        assert!(r.is_err() && tries == 1);
        assert!(space.keep_reserve());
        let mut tries = 0;
        let r: Result<(), String> = space.retry(|| {
            tries += 1;
            Err("database: locked".into())
        });
        assert!(r.is_err() && tries == 1 && reserve::present(dir.path()));
    }
}
