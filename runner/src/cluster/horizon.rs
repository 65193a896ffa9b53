//! The horizon of an SPRT without a fixed total: how far ahead of its count its shards may
//! play. Its shards would otherwise play until it decides, so a shard that pends until
//! others end would never start, and the count, in pair order, would wait at its first pair
//! for ever.
//!
//! The coordinator writes `RUN_DIR/horizon`, the first pair no shard may start yet: the
//! first pair not counted plus a window ([`window`]), and rewrites it as the count advances.
//! A shard does not start a pair at or past it: it finishes the pairs it plays, writes
//! `RUN_DIR/shards/I/paused` (the pair it stopped before) and exits 0, which frees its CPUs
//! for a pending shard. The coordinator resubmits a paused shard once the horizon has moved
//! past its pair (never counted as a failure). No horizon file: no limit (matches, datagen,
//! tunes, runs of earlier versions).

use std::path::{Path, PathBuf};

use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;

/// The smallest window: pairs past the first uncounted one that shards may start.
pub const WINDOW_MIN: u64 = 64;

/// Pairs of window per shard: each shard may play about this many pairs ahead of the count.
pub const WINDOW_PER_SHARD: u64 = 8;

/// A test knob: the window in pairs (at least 1), instead of [`window`]'s, so that a
/// test's short SPRT reaches its horizon. Read by the coordinator only.
pub const WINDOW_ENV: &str = "SPAR_SPRT_WINDOW";

/// The window of a run of `shards` shards: `max(WINDOW_MIN, WINDOW_PER_SHARD × shards)`,
/// or [`WINDOW_ENV`]'s value where `env` gives a positive number.
pub fn window(shards: u64, env: &dyn Fn(&str) -> Option<String>) -> u64 {
    env(WINDOW_ENV)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&w| w > 0)
        .unwrap_or_else(|| WINDOW_MIN.max(WINDOW_PER_SHARD.saturating_mul(shards)))
}

/// The horizon when pairs `0..counted` are counted: the first pair no shard may start.
pub fn horizon(counted: u64, window: u64) -> u64 {
    counted.saturating_add(window)
}

/// `RUN_DIR/horizon`.
pub fn horizon_file(dir: &Path) -> PathBuf {
    dir.join("horizon")
}

/// `RUN_DIR/shards/I/paused`: written by shard I when it stopped before the horizon.
pub fn paused_file(dir: &Path, index: u64) -> PathBuf {
    super::shard_dir(dir, index).join("paused")
}

/// A pair number as a horizon or paused file holds it (one line); `None` if it is not one.
pub fn parse_pair(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

fn read_pair(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| parse_pair(&t))
}

fn write_pair(path: &Path, pair: u64) -> CliResult {
    write_atomically(path, &format!("{pair}\n"))
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))
}

/// The run's horizon (`None`: no file, no limit).
pub fn read(dir: &Path) -> Option<u64> {
    read_pair(&horizon_file(dir))
}

/// The pair shard `index` paused before, if it did.
pub fn read_paused(dir: &Path, index: u64) -> Option<u64> {
    read_pair(&paused_file(dir, index))
}

/// Records that shard `index` stopped before pair `pair` (at the horizon).
pub fn write_paused(dir: &Path, index: u64, pair: u64) -> CliResult {
    write_pair(&paused_file(dir, index), pair)
}

/// Forgets shard `index`'s pause (it starts again).
pub fn clear_paused(dir: &Path, index: u64) {
    let _ = std::fs::remove_file(paused_file(dir, index));
}

/// The coordinator's side: writes the horizon, only when it changes.
#[derive(Debug)]
pub struct Writer {
    dir: PathBuf,
    window: u64,
    written: Option<u64>,
}

impl Writer {
    /// The horizon of the run in `dir` with this window (nothing written yet).
    pub fn new(dir: &Path, window: u64) -> Writer {
        Writer {
            dir: dir.to_path_buf(),
            window,
            written: None,
        }
    }

    /// The horizon last written.
    pub fn current(&self) -> Option<u64> {
        self.written
    }

    /// Writes the horizon of `counted` counted pairs, if it differs from the one written.
    pub fn update(&mut self, counted: u64) -> CliResult {
        let h = horizon(counted, self.window);
        if self.written != Some(h) {
            write_pair(&horizon_file(&self.dir), h)?;
            self.written = Some(h);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_grows_with_the_shards_and_the_knob_overrides_it() {
        let none = |_: &str| None;
        assert_eq!(window(1, &none), 64);
        assert_eq!(window(8, &none), 64);
        assert_eq!(window(9, &none), 72);
        assert_eq!(window(512, &none), 4096);
        let knob = |v: &'static str| move |n: &str| (n == WINDOW_ENV).then(|| v.to_string());
        assert_eq!(window(512, &knob("6")), 6);
        assert_eq!(window(512, &knob(" 6\n")), 6);
        assert_eq!(
            window(9, &knob("0")),
            72,
            "a window of 0 would stop every shard"
        );
        assert_eq!(window(9, &knob("x")), 72);
    }

    #[test]
    fn the_horizon_is_the_first_uncounted_pair_plus_the_window() {
        assert_eq!(horizon(0, 64), 64);
        assert_eq!(horizon(33, 6), 39);
        assert_eq!(horizon(u64::MAX - 1, 64), u64::MAX);
    }

    #[test]
    fn pair_files_read_one_number_or_nothing() {
        assert_eq!(parse_pair("17\n"), Some(17));
        assert_eq!(parse_pair(" 0 "), Some(0));
        assert_eq!(parse_pair(""), None);
        assert_eq!(parse_pair("-3\n"), None);
        assert_eq!(parse_pair("12 13"), None);
    }

    #[test]
    fn the_writer_writes_on_change_and_the_paused_marker_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(read(d), None, "no file: no limit");
        let mut w = Writer::new(d, 8);
        w.update(0).unwrap();
        assert_eq!((read(d), w.current()), (Some(8), Some(8)));
        // Unchanged: not written again (the file removed by hand stays removed).
        std::fs::remove_file(horizon_file(d)).unwrap();
        w.update(0).unwrap();
        assert_eq!(read(d), None);
        w.update(5).unwrap();
        assert_eq!(read(d), Some(13));

        assert_eq!(read_paused(d, 3), None);
        std::fs::create_dir_all(crate::cluster::shard_dir(d, 3)).unwrap();
        write_paused(d, 3, 21).unwrap();
        assert_eq!(read_paused(d, 3), Some(21));
        clear_paused(d, 3);
        assert_eq!(read_paused(d, 3), None);
    }
}
