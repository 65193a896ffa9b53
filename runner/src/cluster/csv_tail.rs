//! A local run's results CSV read as it grows: the complete pairs of the rows read so far,
//! counted as `spar status` counts them ([`of_csv`] feeds the whole file
//! once; a server's live reader feeds the bytes appended since its last read), with the
//! totals kept as they come, so that nothing is counted twice or from the start again.
//!
//! A pair is a row of game 0 directly followed by the row of game 1 of the same pair (as
//! `records::pairs_of` reads a shard's rows); a row left waiting for its partner is kept
//! across reads.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use data::results::{each_row, RowRef, HEADER};
use engine::types::GameResult;

use super::status::Snapshot;
use crate::error::{CliError, CliResult};
use crate::plan::MatchPlan;
use crate::play::game::Termination;
use crate::play::tally::{GameSummary, Tally};

/// The snapshot of a local run's results CSV (its run record, when there is one, gives the
/// SPRT and the number of games).
pub fn of_csv(path: &Path) -> CliResult<Snapshot> {
    // One read and one parse of the file: its complete lines (a row being written is not
    // counted yet), counted as a server's live reader counts them as they come.
    let text = data::text::read_whole(path)
        .map_err(|e| CliError::usage(data::results::ResultsError::Text(Box::new(e)).to_string()))?;
    let keep = text.rfind('\n').map_or(0, |i| i + 1);
    let mut tail = CsvTail::new(path);
    tail.feed(&text[..keep], true)?;
    Ok(tail.into_snapshot(crate::files::lock::is_held(path)))
}

/// The counted rows of one results CSV.
pub struct CsvTail {
    path: PathBuf,
    plan: Option<MatchPlan>,
    /// The engines' names: the first row's white and black (before it, the plan's).
    first: Option<[String; 2]>,
    /// A row of game 0 waiting for its game 1: its pair and its game (or why it is not
    /// one), with its duration.
    waiting: Option<(u64, CliResult<GameSummary>, u64)>,
    /// The snapshot so far (its `pairs`, the run's plan; `elapsed` and `running` are set
    /// by [`CsvTail::snapshot`]).
    snap: Snapshot,
    /// The totals of `snap.pairs`.
    tally: Tally,
    /// Milliseconds of the counted games.
    ms: u64,
}

impl CsvTail {
    /// Nothing read yet of the results CSV `path` (its run record, when there is one, gives
    /// the SPRT and the number of games).
    pub fn new(path: &Path) -> CsvTail {
        let record = crate::files::run_record::read("--results", path)
            .ok()
            .flatten();
        let plan: Option<MatchPlan> = record
            .as_ref()
            .and_then(|r| r.get("plan"))
            .and_then(|p| serde_json::from_value(p.clone()).ok());
        let sprt = plan
            .as_ref()
            .and_then(|p| p.sprt.as_ref())
            .and_then(|s| s.sprt().ok());
        CsvTail {
            path: path.to_path_buf(),
            snap: Snapshot {
                title: String::new(),
                pairs: Vec::new(),
                uncounted: None,
                games_done: None,
                total: plan.as_ref().and_then(|p| p.pairs),
                sprt,
                elapsed: None,
                shards: Vec::new(),
                conflicts: 0,
                running: None,
            },
            plan,
            first: None,
            waiting: None,
            tally: Tally::default(),
            ms: 0,
        }
    }

    /// Counts the rows of `text`: complete lines of the file, the header first when
    /// `start` (the file's beginning), else the lines that follow those fed before.
    pub fn feed(&mut self, text: &str, start: bool) -> CliResult {
        let mut failed = None;
        let path = self.path.clone();
        let mut count = |r: RowRef<'_>| {
            if failed.is_none() {
                failed = self.row(r).err();
            }
        };
        let read = if start {
            each_row(text, &path, &mut count)
        } else {
            let mut t = String::with_capacity(text.len() + 128);
            t.push_str(&HEADER.join(","));
            t.push('\n');
            t.push_str(text);
            each_row(&t, &path, &mut count)
        };
        read.map_err(|e| CliError::usage(e.to_string()))?;
        failed.map_or(Ok(()), Err)
    }

    /// Counts one row.
    fn row(&mut self, b: RowRef<'_>) -> CliResult {
        if self.first.is_none() {
            self.first = Some([b.white.to_string(), b.black.to_string()]);
        }
        let game = self.game(&b);
        match self.waiting.take() {
            Some((pair, a, ms)) if b.game == 1 && b.pair == pair => {
                // A pair's games are read as the tally counts them, the first game first.
                let pair = [a?, game?];
                self.ms += ms + b.duration_ms;
                self.tally.add_pair(pair);
                self.snap.pairs.push(pair);
                Ok(())
            }
            _ => {
                if b.game == 0 {
                    self.waiting = Some((b.pair, game, b.duration_ms));
                }
                Ok(())
            }
        }
    }

    /// A row's game as the tally counts it (counted once its pair is complete; its
    /// duration with it), or why its result or termination is not one spar knows.
    fn game(&mut self, r: &RowRef<'_>) -> CliResult<GameSummary> {
        let first = &self.first.as_ref().expect("set by the first row")[0];
        let summary = GameSummary {
            first_is_white: r.white == first.as_str(),
            outcome: GameResult::from_pgn(r.result).ok_or_else(|| {
                CliError::usage(format!(
                    "{}: unknown result '{}'",
                    self.path.display(),
                    r.result
                ))
            })?,
            termination: Termination::from_key(r.termination).ok_or_else(|| {
                CliError::usage(format!(
                    "{}: unknown termination '{}'",
                    self.path.display(),
                    r.termination
                ))
            })?,
        };
        Ok(summary)
    }

    /// The snapshot now, with its totals (`running`: whether a spar holds the file's lock).
    pub fn snapshot(&mut self, running: bool) -> (&Snapshot, &Tally) {
        // Before the first row, the engines of the run's plan.
        let names = match (&self.first, &self.plan) {
            (Some(names), _) => names.clone(),
            (None, Some(p)) if p.engines.len() >= 2 => {
                [p.engines[0].name.clone(), p.engines[1].name.clone()]
            }
            (None, _) => [String::new(), String::new()],
        };
        let concurrency = self.plan.as_ref().map_or(1, |p| p.concurrency.max(1));
        self.snap.title = format!(
            "Results {}: {} vs {}",
            self.path.display(),
            names[0],
            names[1]
        );
        // Games are played `concurrency` at once: wall time ≈ game time / concurrency.
        self.snap.elapsed = Some(self.ms as f64 / 1000.0 / concurrency as f64);
        self.snap.running = Some(running);
        (&self.snap, &self.tally)
    }

    /// The snapshot, taken out (`spar status`'s single read).
    pub fn into_snapshot(mut self, running: bool) -> Snapshot {
        self.snapshot(running);
        self.snap
    }
}

/// How many bytes before the end of what was read a reader keeps to tell that the file is
/// still the one it read (an extension of it), not one rewritten.
const TAIL: u64 = 64;

/// A results CSV followed as it grows: the bytes appended since the last read are counted;
/// a file that is no extension of what was read (shorter, another inode, other bytes where
/// the read ended) is read again from its start.
pub struct Following {
    path: PathBuf,
    tail: Option<CsvTail>,
    /// Bytes counted (up to the last complete line read), and the last of them.
    off: u64,
    last_bytes: Vec<u8>,
    ino: u64,
    /// The file's rows could not be read (`spar status` says why): no numbers until the
    /// file changes.
    failed: bool,
    /// The file's length, time and inode when last looked at.
    failed_at: Option<(u64, Option<std::time::SystemTime>, u64)>,
}

/// What [`Following::update`] found.
pub enum Update {
    /// Nothing new (and nothing to show: the file is missing or not a results file when
    /// the last reading was of one).
    Same,
    /// New rows counted, or the file read again.
    Changed,
    /// The file cannot be read as a results file (or not yet): no numbers.
    Unreadable,
}

impl Following {
    /// Nothing read yet of `path`.
    pub fn new(path: &Path) -> Following {
        Following {
            path: path.to_path_buf(),
            tail: None,
            off: 0,
            last_bytes: Vec::new(),
            ino: 0,
            failed: false,
            failed_at: None,
        }
    }

    /// The counted rows (`None` before a successful read).
    pub fn tail(&mut self) -> Option<&mut CsvTail> {
        self.tail.as_mut().filter(|_| !self.failed)
    }

    /// Reads what was appended since the last call.
    pub fn update(&mut self) -> Update {
        let Ok(meta) = std::fs::metadata(&self.path) else {
            return self.restart_state(Update::Unreadable);
        };
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let ino = 0;
        let len = meta.len();
        let stamp = (len, meta.modified().ok(), ino);
        if self.failed && self.failed_at == Some(stamp) {
            return Update::Unreadable;
        }
        self.failed_at = Some(stamp);
        let extends = !self.failed && self.tail.is_some() && ino == self.ino && len >= self.off;
        if !extends {
            self.reset(ino);
        } else if len == self.off {
            return Update::Same;
        }
        match self.read_from(len) {
            Ok(Some(true)) => Update::Changed,
            Ok(Some(false)) => Update::Same,
            // Not what was read: once again from the start.
            Ok(None) => {
                self.reset(ino);
                match self.read_from(len) {
                    Ok(Some(_)) => Update::Changed,
                    _ => self.fail(),
                }
            }
            Err(()) => self.fail(),
        }
    }

    fn fail(&mut self) -> Update {
        self.failed = true;
        Update::Unreadable
    }

    fn restart_state(&mut self, u: Update) -> Update {
        self.tail = None;
        self.off = 0;
        u
    }

    /// Forgets what was read: the next read starts at the file's beginning.
    fn reset(&mut self, ino: u64) {
        self.tail = Some(CsvTail::new(&self.path));
        self.off = 0;
        self.last_bytes.clear();
        self.ino = ino;
        self.failed = false;
    }

    /// Reads from `off` (less the bytes kept to check) to `len`: `Ok(Some(changed))`,
    /// `Ok(None)` when the file is no extension of what was read, `Err` when it cannot be
    /// read as a results file.
    fn read_from(&mut self, len: u64) -> Result<Option<bool>, ()> {
        let back = self.last_bytes.len() as u64;
        let from = self.off - back;
        let mut file = data::text::open_regular(&self.path).map_err(|_| ())?;
        file.seek(SeekFrom::Start(from)).map_err(|_| ())?;
        let mut bytes = Vec::with_capacity((len - from) as usize);
        file.take(len - from)
            .read_to_end(&mut bytes)
            .map_err(|_| ())?;
        if bytes.len() < back as usize || bytes[..back as usize] != self.last_bytes[..] {
            return Ok(None);
        }
        let new = &bytes[back as usize..];
        let start = self.off == 0;
        let body = if start {
            data::text::strip_bom_bytes(new)
        } else {
            new
        };
        // As `spar status` reads the whole file: text, or nothing (a row still being
        // written that is not UTF-8 yet shows no numbers, as `spar status` shows none).
        let text = std::str::from_utf8(body).map_err(|_| ())?;
        let keep = text.rfind('\n').map_or(0, |i| i + 1);
        if keep == 0 {
            return Ok(Some(false));
        }
        let tail = self.tail.as_mut().ok_or(())?;
        let lines = &text[..keep];
        if start && lines.trim().is_empty() {
            // Blank lines before the header: not counted, read again with what follows.
            return Ok(Some(false));
        }
        tail.feed(lines, start).map_err(|_| ())?;
        self.off += (keep + (new.len() - body.len())) as u64;
        let end = (back as usize + (new.len() - body.len()) + keep).min(bytes.len());
        let keep_from = end.saturating_sub(TAIL as usize);
        self.last_bytes = bytes[keep_from..end].to_vec();
        Ok(Some(true))
    }
}
