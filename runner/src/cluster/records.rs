//! Reading the shards' records: each shard's results CSV (a match's complete pairs) or
//! training file (datagen's complete games), at any time, also while shards append to
//! them. A torn last line or a pair with one row is not counted yet.
//!
//! [`Records`] keeps what it read and rereads a shard only when its record file changed
//! (size or modification time), so the coordinator's poll costs one `stat` per shard.
//! Pairs are deduplicated by pair index: the same pair recorded twice with the same games
//! counts once; with different games it is a [`Conflict`], counted once (the lower shard's
//! record) and reported.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use data::results::{parse_results, ResultRow, HEADER};
use data::training::files::{game_ends, Format};
use engine::types::GameResult;

use super::manifest::Manifest;
use crate::error::{CliError, CliResult};
use crate::play::game::Termination;
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

/// Counts a pair once: a second record with the same games is ignored, with other games
/// it is a conflict.
fn count(
    all: &mut BTreeMap<u64, PairRecord>,
    conflicts: &mut Vec<Conflict>,
    tally: &mut Tally,
    p: &PairRecord,
) {
    match all.get(&p.pair) {
        None => {
            all.insert(p.pair, *p);
            tally.add_pair(p.games);
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
    tally: Tally,
}

/// The GameSummary of a CSV row, seen from the engine named `first`.
fn summary_of(row: &ResultRow, first: &str, path: &Path) -> CliResult<GameSummary> {
    let bad = |what: &str, v: &str| {
        CliError::failure(format!(
            "{}: pair {}: unknown {what} '{v}'",
            path.display(),
            row.pair
        ))
    };
    Ok(GameSummary {
        first_is_white: row.white == first,
        outcome: GameResult::from_pgn(&row.result).ok_or_else(|| bad("result", &row.result))?,
        termination: Termination::from_key(&row.termination)
            .ok_or_else(|| bad("termination", &row.termination))?,
    })
}

fn fingerprint(a: &ResultRow, b: &ResultRow) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for r in [a, b] {
        (r.pair, r.game, r.opening, r.seed, &r.white, &r.black).hash(&mut h);
        (
            &r.result,
            &r.termination,
            r.plies,
            r.white_nodes,
            r.black_nodes,
        )
            .hash(&mut h);
    }
    h.finish()
}

/// A pair's two rows and their bytes (start, end) in the text they were read from.
pub type RowPair = ([ResultRow; 2], (u64, u64));

/// The complete pairs of a results file's text (up to its last newline), in file order,
/// each with the bytes of its two rows.
pub fn complete_rows(text: &str, path: &Path) -> CliResult<Vec<RowPair>> {
    let keep = text.rfind('\n').map_or(0, |i| i + 1);
    let rows = parse_results(&text[..keep], path)
        .map_err(|e| CliError::failure(format!("shard record: {e}")))?;
    // Where each line starts: row r is line r + 1 (after the header).
    let mut starts = Vec::with_capacity(rows.len() + 2);
    starts.push(0u64);
    starts.extend(
        text.as_bytes()[..keep]
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i as u64 + 1),
    );
    let mut pairs = Vec::with_capacity(rows.len() / 2);
    let mut it = rows.into_iter().enumerate().peekable();
    while let Some((r, a)) = it.next() {
        if a.game != 0 {
            continue;
        }
        match it.peek() {
            Some((_, b)) if b.game == 1 && b.pair == a.pair => {
                let b = it.next().expect("peeked").1;
                let span = match (starts.get(r + 1), starts.get(r + 3)) {
                    (Some(&x), Some(&y)) => (x, y),
                    _ => (0, 0),
                };
                pairs.push(([a, b], span));
            }
            _ => {}
        }
    }
    Ok(pairs)
}

/// Checks a recorded pair against the run: shard `shard` of `shards` records only its own
/// pairs (k ≡ shard mod shards), below the run's total, between the run's two engines.
fn check_pair(
    row: &ResultRow,
    other: &ResultRow,
    (shard, shards): (u64, u64),
    total: Option<u64>,
    names: &[String; 2],
    path: &Path,
) -> CliResult {
    let foreign = |why: String| {
        CliError::failure(format!(
            "{}: {why}: this is not a record of this run (a file copied in from another run?); \
             move it away and play shard {shard} again (`spar shard RUN_DIR --index {shard}`)",
            path.display()
        ))
    };
    if row.pair % shards != shard {
        return Err(foreign(format!(
            "pair {} is not one of shard {shard}'s pairs ({shard}, {}, … of {shards} shards)",
            row.pair,
            shard + shards
        )));
    }
    if let Some(t) = total.filter(|&t| row.pair >= t) {
        return Err(foreign(format!(
            "pair {} is beyond the run's {t} pairs",
            row.pair
        )));
    }
    if !names[0].is_empty() {
        for r in [row, other] {
            let ok = (r.white == names[0] && r.black == names[1])
                || (r.white == names[1] && r.black == names[0]);
            if !ok {
                return Err(foreign(format!(
                    "pair {} is {} vs {}, not a game between the run's engines {} and {}",
                    r.pair, r.white, r.black, names[0], names[1]
                )));
            }
        }
    }
    Ok(())
}

/// Reads a shard's failure record.
fn read_failed(path: &Path) -> Option<(i32, String)> {
    let text =
        crate::files::input::read_optional(path, "a shard's failure record", 1 << 20).ok()??;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some((
        v.get("code")?.as_i64()? as i32,
        v.get("message")?.as_str()?.to_string(),
    ))
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
            tally: Tally::default(),
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
                    count(&mut self.all, &mut self.conflicts, &mut self.tally, p);
                }
            }
            let shard = &mut self.shards[i];
            shard.pairs.extend(d.pairs);
            shard.done = shard.pairs.len() as u64;
        }
        if rebuild {
            self.all.clear();
            self.conflicts.clear();
            self.tally = Tally::default();
            for s in &self.shards {
                for p in &s.pairs {
                    count(&mut self.all, &mut self.conflicts, &mut self.tally, p);
                }
            }
        }
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

    /// The totals of every pair counted once.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// Games recorded in all (datagen).
    pub fn games(&self) -> u64 {
        self.shards.iter().map(|s| s.done).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "pair,game,opening,seed,white,black,result,termination,plies,white_nodes,black_nodes,duration_ms\n";

    fn row(pair: u64, game: u8, result: &str) -> String {
        let (w, b) = if game == 0 { ("a", "b") } else { ("b", "a") };
        format!("{pair},{game},{pair},9,{w},{b},{result},checkmate,40,100,100,5\n")
    }

    #[test]
    fn only_complete_pairs_count() {
        let text = format!(
            "{HEAD}{}{}{}{}",
            row(3, 0, "1-0"),
            row(3, 1, "1-0"),
            row(7, 0, "1/2-1/2"),
            "7,1,7,9,b,a,1-"
        );
        let pairs = complete_rows(&text, Path::new("r.csv")).unwrap();
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].0[1].pair, 3);
        let (a, b) = pairs[0].1;
        assert_eq!(
            &text[a as usize..b as usize],
            row(3, 0, "1-0") + &row(3, 1, "1-0")
        );
    }

    /// Records of `shards` shards in `dir` (nothing read yet), for engines a and b.
    fn records(dir: &Path, shards: usize, total: Option<u64>) -> Records {
        Records {
            dir: dir.to_path_buf(),
            keep_text: false,
            games: None,
            names: ["a".into(), "b".into()],
            total,
            shards: vec![ShardRecord::default(); shards],
            all: BTreeMap::new(),
            conflicts: Vec::new(),
            tally: Tally::default(),
        }
    }

    fn write_shard(dir: &Path, i: u64, body: String) {
        let p = super::super::shard_results(dir, i);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{HEAD}{body}")).unwrap();
    }

    #[test]
    fn a_pair_recorded_twice_counts_once_and_differences_are_conflicts() {
        let dir = tempfile::tempdir().unwrap();
        // Shard 0 has pair 0 again (same games, another duration) and a different pair 2.
        write_shard(
            dir.path(),
            0,
            row(0, 0, "1-0")
                + &row(0, 1, "1-0")
                + &row(2, 0, "1-0")
                + &row(2, 1, "0-1")
                + &row(0, 0, "1-0").replace(",5\n", ",7\n")
                + &row(0, 1, "1-0")
                + &row(2, 0, "0-1")
                + &row(2, 1, "0-1"),
        );
        write_shard(dir.path(), 1, row(1, 0, "1-0") + &row(1, 1, "0-1"));
        let mut records = records(dir.path(), 2, None);
        assert!(records.refresh().unwrap());
        assert!(!records.refresh().unwrap(), "nothing new");
        let (pairs, conflicts) = records.pairs();
        assert_eq!(pairs.len(), 3);
        assert_eq!(
            conflicts,
            [Conflict {
                pair: 2,
                kept: 0,
                other: 0
            }]
        );
        let t = records.tally();
        assert_eq!(t.pairs.pairs(), 3);
        assert_eq!(t.games.wins + t.games.losses + t.games.draws, 6);
    }

    #[test]
    fn records_that_are_not_the_runs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (body, total, why) in [
            // Pair 1 belongs to shard 1 of 2.
            (
                row(1, 0, "1-0") + &row(1, 1, "1-0"),
                None,
                "not one of shard 0's pairs",
            ),
            // The run has 4 pairs.
            (
                row(4, 0, "1-0") + &row(4, 1, "1-0"),
                Some(4),
                "beyond the run's 4 pairs",
            ),
            (
                row(0, 0, "1-0") + &row(0, 1, "1-0").replace(",b,a,", ",b,x,"),
                None,
                "b vs x, not a game between the run's engines a and b",
            ),
        ] {
            write_shard(dir.path(), 0, body);
            let mut records = records(dir.path(), 2, total);
            let err = records.refresh().unwrap_err();
            assert_eq!(err.code, 1);
            assert!(
                err.message.contains(why) && err.message.contains("not a record of this run"),
                "{}",
                err.message
            );
        }
        let p = super::super::shard_results(dir.path(), 0);
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        let err = records(dir.path(), 2, None).refresh().unwrap_err();
        assert!(
            err.message.contains("not a regular file"),
            "{}",
            err.message
        );
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            /// A shard record cut anywhere, with bytes flipped or garbage appended, read
            /// fresh and incrementally: an error or a count, never a panic; only the run's
            /// own pairs are counted.
            #[test]
            fn damaged_shard_records_are_errors_not_panics(
                cut in 0usize..2000,
                flips in proptest::collection::vec((0usize..2000, any::<u8>()), 0..4),
                tail in proptest::collection::vec(any::<u8>(), 0..64),
            ) {
                let dir = tempfile::tempdir().unwrap();
                let mut text = String::from(HEAD);
                for k in [0u64, 2, 4, 6] {
                    text += &(row(k, 0, "1-0") + &row(k, 1, "1/2-1/2"));
                }
                let mut bytes = text.into_bytes();
                write_shard(dir.path(), 0, String::new());
                let p = super::super::super::shard_results(dir.path(), 0);
                let mut r = records(dir.path(), 2, Some(8));
                for (i, b) in &flips {
                    let n = bytes.len();
                    bytes[i % n] ^= b;
                }
                bytes.truncate(cut.min(bytes.len()));
                std::fs::write(&p, &bytes).unwrap();
                let _ = r.refresh();
                bytes.extend_from_slice(&tail);
                std::fs::write(&p, &bytes).unwrap();
                if r.refresh().is_ok() {
                    let (pairs, _) = r.pairs();
                    prop_assert!(pairs.keys().all(|k| k % 2 == 0 && *k < 8));
                }
            }
        }
    }

    #[test]
    fn appended_rows_are_read_incrementally_and_a_cut_file_again() {
        let dir = tempfile::tempdir().unwrap();
        let p = super::super::shard_results(dir.path(), 0);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut records = records(dir.path(), 1, None);
        let mut text = format!("{HEAD}{}", row(0, 0, "1-0"));
        std::fs::write(&p, &text).unwrap();
        records.refresh().unwrap();
        assert_eq!(records.shards[0].done, 0, "half a pair");
        text += &(row(0, 1, "1-0") + &row(1, 0, "0-1") + "1,1,1,9,b,a,0");
        std::fs::write(&p, &text).unwrap();
        records.refresh().unwrap();
        assert_eq!(records.shards[0].done, 1);
        text += "-1,checkmate,40,100,100,5\n";
        std::fs::write(&p, &text).unwrap();
        records.refresh().unwrap();
        assert_eq!(records.shards[0].done, 2);
        assert_eq!(records.tally().pairs.pairs(), 2);
        let (a, b) = records.shards[0].pairs[1].rows;
        assert_eq!(
            &text[a as usize..b as usize],
            row(1, 0, "0-1") + &row(1, 1, "0-1")
        );
        // Cut back (a resume repaired it) and rewritten: read from the start.
        std::fs::write(
            &p,
            format!("{HEAD}{}{}", row(0, 0, "1/2-1/2"), row(0, 1, "1/2-1/2")),
        )
        .unwrap();
        records.refresh().unwrap();
        assert_eq!(records.shards[0].done, 1);
        assert_eq!(records.tally().games.draws, 2);
    }
}
