//! Reading the shards' records: each shard's results CSV (a match's complete pairs) or
//! training file (datagen's complete games), at any time, also while shards append to
//! them. A torn last line or a pair with one row is not counted yet.
//!
//! [`Records`] keeps what it read and rereads a shard only when its record file changed
//! (size or modification time), so the coordinator's poll costs one `stat` per shard.
//! Pairs are deduplicated by pair index: the same pair recorded twice with the same games
//! counts once; with different games it is a [`Conflict`], counted once (the lower shard's
//! record) and reported. Which of the recorded pairs the run counts — every one (a match),
//! or, for an SPRT, those in pair order up to its first crossing — is [`counted`]'s.

mod counted;
mod rows;
#[cfg(test)]
mod tests;

pub use counted::{Counted, NotCounted, Uncounted};
pub use rows::complete_rows;

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use data::results::HEADER;
use data::training::files::{game_ends, Format};
use sprt::Decision;

use rows::{check_pair, fingerprint, read_failed, summary_of};

use super::manifest::Manifest;
use crate::error::{CliError, CliResult};
use crate::play::ordered::Stride;
use crate::play::tally::{GameSummary, Tally};

/// One complete pair as a shard recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairRecord {
    /// The run's pair index.
    pub pair: u64,
    /// The shard that recorded it.
    pub shard: u32,
    /// Its place among the shard's recorded pairs (its games are games 2p and 2p+1 of the
    /// shard's PGN and dump).
    pub position: u32,
    /// The two games as the tally counts them.
    pub games: [GameSummary; 2],
    /// A hash of both rows without their durations: equal games, equal fingerprints.
    pub fingerprint: u64,
    /// The bytes of its two rows in the shard's results file (start, end).
    pub rows: (u64, u64),
}

/// The same pair recorded twice with different games.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The pair index.
    pub pair: u64,
    /// The shard whose record is counted.
    pub kept: u32,
    /// The shard whose different record is not.
    pub other: u32,
}

/// What one shard has recorded.
#[derive(Clone, Debug, Default)]
pub struct ShardRecord {
    /// Complete pairs (match) or games (datagen), in the shard's order.
    pub done: u64,
    /// The pairs (match only).
    pub pairs: Vec<PairRecord>,
    /// When its record file last changed (`None`: no record yet).
    pub modified: Option<SystemTime>,
    /// Its failure record: exit code and message.
    pub failed: Option<(i32, String)>,
    /// The results file's text as read (kept only by [`Records::keep_text`]).
    pub text: Option<String>,
    /// Size, time and inode of the record file when last read.
    seen: Option<Stamp>,
    /// Bytes of the results file up to the end of its last complete pair.
    consumed: u64,
}

/// A file's size, modification time and inode (a rewrite by rename is a new inode).
type Stamp = (u64, SystemTime, u64);

/// What a shard added since it was last read.
struct Delta {
    stamp: Stamp,
    /// The file was read from its start: its earlier pairs are void.
    reset: bool,
    pairs: Vec<PairRecord>,
    consumed: u64,
    done: u64,
    text: Option<String>,
}

/// Records a pair once (and tells `counted`): a second record with the same games is
/// ignored, with other games it is a conflict.
fn count(
    all: &mut BTreeMap<u64, PairRecord>,
    conflicts: &mut Vec<Conflict>,
    counted: &mut Counted,
    p: &PairRecord,
) {
    match all.get(&p.pair) {
        None => {
            all.insert(p.pair, *p);
            counted.recorded(p);
        }
        Some(k) if k.fingerprint != p.fingerprint => conflicts.push(Conflict {
            pair: p.pair,
            kept: k.shard,
            other: p.shard,
        }),
        Some(_) => {}
    }
}

/// How a kind of job's shards record what they play (the job contract's
/// [`Job::records`](crate::job::Job::records)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordShape {
    /// Results rows, two per pair (`RUN_DIR/shards/I/results.csv`).
    Pairs,
    /// Complete games of a training file in this format (`RUN_DIR/shards/I/positions…`).
    Games(Format),
}

/// The records of every shard of a run.
pub struct Records {
    dir: PathBuf,
    keep_text: bool,
    /// The training format of a run that records games (datagen).
    games: Option<Format>,
    names: [String; 2],
    /// Pairs (datagen: games) of the run, when fixed: a record beyond it is not the run's.
    total: Option<u64>,
    /// Per shard.
    pub shards: Vec<ShardRecord>,
    all: BTreeMap<u64, PairRecord>,
    conflicts: Vec<Conflict>,
    /// The pairs the run counts of `all`.
    counted: Counted,
}

impl Records {
    /// The records of the run in `dir`, recorded in `shape` (nothing read yet: call
    /// [`Records::refresh`]).
    pub fn new(dir: &Path, manifest: &Manifest, shape: RecordShape) -> Records {
        let games = match shape {
            RecordShape::Pairs => None,
            RecordShape::Games(format) => Some(format),
        };
        let names = match &manifest.plan {
            Some(p) if p.engines.len() == 2 => {
                [p.engines[0].name.clone(), p.engines[1].name.clone()]
            }
            _ => [String::new(), String::new()],
        };
        Records {
            dir: dir.to_path_buf(),
            keep_text: false,
            games,
            names,
            total: manifest.total,
            shards: vec![ShardRecord::default(); manifest.shards as usize],
            all: BTreeMap::new(),
            conflicts: Vec::new(),
            // An SPRT that does not read is refused by the run's own checks; its records
            // are then counted as a match's.
            counted: Counted::new(
                manifest
                    .plan
                    .as_ref()
                    .and_then(|p| p.sprt.as_ref())
                    .and_then(|s| s.sprt().ok()),
            ),
        }
    }

    /// Keeps the text of each results file read (for a merge that copies the rows).
    pub fn keep_text(mut self) -> Records {
        self.keep_text = true;
        self
    }

    /// The file whose size and time say whether shard `i` wrote something new.
    fn record_file(&self, i: u64) -> PathBuf {
        match &self.games {
            None => super::shard_results(&self.dir, i),
            Some(format) => {
                let paths = format.paths(&super::shard_positions(&self.dir, i));
                paths.index.or(paths.viriformat).expect("a file")
            }
        }
    }

    /// Reads what the shards whose record changed have added; returns whether any did.
    pub fn refresh(&mut self) -> CliResult<bool> {
        use rayon::prelude::*;
        let this = &*self;
        // Shards are read in parallel: a run may have thousands.
        type Fresh = (usize, Option<(i32, String)>, Option<Delta>);
        let fresh: Vec<Fresh> = (0..self.shards.len())
            .into_par_iter()
            .map(|i| -> CliResult<_> {
                let failed = read_failed(&super::shard_failed(&this.dir, i as u64));
                let file = this.record_file(i as u64);
                let Ok(meta) = std::fs::metadata(&file) else {
                    return Ok((i, failed, None));
                };
                if !meta.is_file() {
                    return Err(CliError::failure(format!(
                        "{} is not a regular file (a device, pipe or directory): a shard's record \
                         must be the file the shard wrote; move it away and play shard {i} again",
                        file.display()
                    )));
                }
                let stamp = (
                    meta.len(),
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    std::os::unix::fs::MetadataExt::ino(&meta),
                );
                if this.shards[i].seen == Some(stamp) {
                    return Ok((i, failed, None));
                }
                Ok((i, failed, Some(this.read_shard(i, stamp)?)))
            })
            .collect::<CliResult<_>>()?;
        let mut changed = false;
        let mut rebuild = false;
        for (i, failed, delta) in fresh {
            self.shards[i].failed = failed;
            let Some(d) = delta else { continue };
            changed = true;
            let shard = &mut self.shards[i];
            shard.seen = Some(d.stamp);
            shard.modified = Some(d.stamp.1);
            if d.reset {
                shard.pairs.clear();
                rebuild = true;
            }
            shard.consumed = d.consumed;
            if d.text.is_some() {
                shard.text = d.text;
            }
            if self.games.is_some() {
                shard.done = d.done;
                continue;
            }
            if !rebuild {
                for p in &d.pairs {
                    count(&mut self.all, &mut self.conflicts, &mut self.counted, p);
                }
            }
            let shard = &mut self.shards[i];
            shard.pairs.extend(d.pairs);
            shard.done = shard.pairs.len() as u64;
        }
        if rebuild {
            self.all.clear();
            self.conflicts.clear();
            self.counted.reset();
            for s in &self.shards {
                for p in &s.pairs {
                    count(&mut self.all, &mut self.conflicts, &mut self.counted, p);
                }
            }
        }
        self.counted.advance(&self.all);
        Ok(changed)
    }

    /// What shard `i` added since it was last read (everything, when its file shrank or
    /// the text is kept).
    fn read_shard(&self, i: usize, stamp: Stamp) -> CliResult<Delta> {
        let prev = &self.shards[i];
        let mut d = Delta {
            stamp,
            reset: false,
            pairs: Vec::new(),
            consumed: 0,
            done: 0,
            text: None,
        };
        if let Some(format) = &self.games {
            let path = super::shard_positions(&self.dir, i as u64);
            for p in [format.paths(&path).viriformat, format.paths(&path).text]
                .into_iter()
                .flatten()
            {
                if std::fs::metadata(&p).is_ok_and(|m| !m.is_file()) {
                    return Err(CliError::failure(format!(
                        "{} is not a regular file (a device, pipe or directory): a shard's record \
                         must be the file the shard wrote; move it away and play shard {i} again",
                        p.display()
                    )));
                }
            }
            let ends = game_ends(&path, *format).map_err(CliError::failure)?;
            d.done = match format {
                Format::Text => ends.text.len(),
                Format::Viriformat => ends.viriformat.len(),
                Format::Both => ends.text.len().min(ends.viriformat.len()),
            } as u64;
            let n = self.shards.len() as u64;
            if let Some(share) = self
                .total
                .map(|t| Stride::shard(i as u64, n).count_below(t))
            {
                if d.done > share {
                    return Err(CliError::failure(format!(
                        "{}: {} games, but shard {i} of the run plays {share}: this is not a record \
                         of this run; move it away and play shard {i} again",
                        path.display(),
                        d.done
                    )));
                }
            }
            return Ok(d);
        }
        let path = super::shard_results(&self.dir, i as u64);
        let cannot =
            |e: std::io::Error| CliError::failure(format!("cannot read {}: {e}", path.display()));
        // Append-only: read from the end of the last complete pair, unless the file was
        // cut or rewritten (a resume), or the whole text is wanted.
        let replaced = prev.seen.is_none_or(|s| s.2 != stamp.2);
        let from = if self.keep_text || replaced || stamp.0 < prev.consumed {
            d.reset = true;
            0
        } else {
            prev.consumed
        };
        let mut f = std::fs::File::open(&path).map_err(cannot)?;
        f.seek(SeekFrom::Start(from)).map_err(cannot)?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).map_err(cannot)?;
        let body = String::from_utf8_lossy(&bytes);
        let header = format!("{}\n", HEADER.join(","));
        let (text, shift) = if from == 0 {
            (body.into_owned(), 0i64)
        } else {
            (format!("{header}{body}"), from as i64 - header.len() as i64)
        };
        let rows = complete_rows(&text, &path)?;
        let first = if d.reset { 0 } else { prev.pairs.len() };
        d.consumed = from;
        let n = self.shards.len() as u64;
        for (p, ([a, b], span)) in rows.iter().enumerate() {
            check_pair(a, b, (i as u64, n), self.total, &self.names, &path)?;
            let span = (
                (span.0 as i64 + shift) as u64,
                (span.1 as i64 + shift) as u64,
            );
            d.consumed = span.1;
            d.pairs.push(PairRecord {
                pair: a.pair,
                shard: i as u32,
                position: (first + p) as u32,
                games: [
                    summary_of(a, &self.names[0], &path)?,
                    summary_of(b, &self.names[0], &path)?,
                ],
                fingerprint: fingerprint(a, b),
                rows: span,
            });
        }
        if self.keep_text {
            d.text = Some(text);
        }
        Ok(d)
    }

    /// Every recorded pair once, by pair index, and the conflicts.
    pub fn pairs(&self) -> (&BTreeMap<u64, PairRecord>, &[Conflict]) {
        (&self.all, &self.conflicts)
    }

    /// The pairs the run counts, in pair order: every recorded pair (a match), or an
    /// SPRT's pairs 0, 1, … up to the first not recorded or the one that decided it.
    pub fn counted(&self) -> impl DoubleEndedIterator<Item = &PairRecord> {
        self.all.range(self.counted.range()).map(|(_, p)| p)
    }

    /// How many pairs the run counts.
    pub fn counted_pairs(&self) -> u64 {
        self.counted.pairs()
    }

    /// The totals of the pairs counted (see [`Records::counted`]).
    pub fn tally(&self) -> &Tally {
        self.counted.tally()
    }

    /// An SPRT's decision and the pair that made it, once it decided.
    pub fn decided(&self) -> Option<(u64, Decision)> {
        self.counted.decided()
    }

    /// The recorded pairs that are not counted (an SPRT's after a gap or after its
    /// decision), and why.
    pub fn uncounted(&self) -> Option<Uncounted> {
        self.counted
            .uncounted(self.all.len() as u64, self.shards.len() as u64)
    }

    /// Games recorded in all (datagen).
    pub fn games(&self) -> u64 {
        self.shards.iter().map(|s| s.done).sum()
    }
}
