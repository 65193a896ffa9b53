//! The live readers the kinds share ([`crate::live::LiveReader`]): one that reads a run's
//! files again only when one of them changed ([`Rereading`], for the small files of a tune
//! or a report and a datagen's training files), one that keeps a cluster run's records and
//! reads its shards incrementally ([`ClusterReader`]), and the match's arithmetic on a
//! snapshot (the numbers `spar status` prints).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use sprt::Decision;

use crate::cluster::manifest::Manifest;
use crate::cluster::records::Records;
use crate::cluster::status::Snapshot;
use crate::job::Job;
use crate::live::{finite, Live, LiveReader, Reading, Shard};
use crate::play::tally::Tally;

/// What tells that a file changed: its length, modification time and inode.
type Stamp = Option<(u64, Option<SystemTime>, u64)>;

/// The stamp of `path` now (`None`: no such file).
fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let ino = 0;
    Some((m.len(), m.modified().ok(), ino))
}

/// A reader that reads its run again, whole, when one of `files` changed (length, time or
/// inode), and else says nothing changed.
pub struct Rereading<F> {
    files: Vec<PathBuf>,
    last: Option<Vec<Stamp>>,
    read: F,
}

impl<F: FnMut() -> Reading + Send> Rereading<F> {
    /// Reads with `read` whenever one of `files` changed.
    pub fn new(files: Vec<PathBuf>, read: F) -> Rereading<F> {
        Rereading {
            files,
            last: None,
            read,
        }
    }
}

impl<F: FnMut() -> Reading + Send> LiveReader for Rereading<F> {
    fn update(&mut self) -> Option<Reading> {
        let now: Vec<Stamp> = self.files.iter().map(|f| stamp(f)).collect();
        if self.last.as_ref() == Some(&now) {
            return None;
        }
        self.last = Some(now);
        Some((self.read)())
    }
}

/// What a kind adds to a cluster run's reading from its snapshot (its numbers, its view).
pub type ClusterExtra = Box<dyn Fn(&Path, &Manifest, &Snapshot, &mut Reading) + Send>;

/// A cluster run's reader: its records, kept and refreshed incrementally; read at most
/// every [`CLUSTER_EVERY`] (its shards' ages and Slurm states change with time alone).
pub struct ClusterReader {
    rd: PathBuf,
    kind: &'static dyn Job,
    /// The manifest and the records, once the manifest could be read.
    records: Option<(Manifest, Records)>,
    last: Option<Instant>,
    extra: ClusterExtra,
    /// Whether a reading was given (the first call always gives one).
    given: bool,
}

/// How often a cluster run's reader reads its shards.
pub const CLUSTER_EVERY: Duration = Duration::from_secs(3);

impl ClusterReader {
    /// The reader of the cluster run in `rd` of `kind`, with `extra` the kind's part.
    pub fn new(rd: &Path, kind: &'static dyn Job, extra: ClusterExtra) -> ClusterReader {
        ClusterReader {
            rd: rd.to_path_buf(),
            kind,
            records: None,
            last: None,
            extra,
            given: false,
        }
    }
}

impl LiveReader for ClusterReader {
    fn update(&mut self) -> Option<Reading> {
        if self.last.is_some_and(|t| t.elapsed() < CLUSTER_EVERY) {
            return None;
        }
        self.last = Some(Instant::now());
        let first = !std::mem::replace(&mut self.given, true);
        if self.records.is_none() {
            self.records = Manifest::read(&self.rd).ok().and_then(|m| {
                self.kind.check_manifest(&m).ok()?;
                let shape = self.kind.records(&m).ok()?;
                let records = Records::new(&self.rd, &m, shape);
                Some((m, records))
            });
        }
        let Some((m, records)) = self.records.as_mut() else {
            return first.then(Reading::default);
        };
        let Ok(snap) = crate::cluster::status::of_records(&self.rd, m, self.kind, records) else {
            return Some(Reading::default());
        };
        let mut out = Reading {
            live: Live {
                lines: snap.lines(),
                shards: shard_lines(&snap),
                ..Live::default()
            },
            view: None,
        };
        (self.extra)(&self.rd, m, &snap, &mut out);
        Some(out)
    }
}

/// The server's lines of a cluster run's shards.
pub fn shard_lines(snap: &Snapshot) -> Vec<Shard> {
    snap.shards
        .iter()
        .map(|s| Shard {
            index: s.index,
            done: s.done,
            share: s.share,
            state: s.state.clone(),
            age: s.age,
            stalled: s.stalled,
            failed: s.failed.clone(),
        })
        .collect()
}

/// A match's or SPRT's numbers from a snapshot of its files, with its totals `tally`
/// ([`Snapshot::tally`]'s).
pub fn numbers(snap: &Snapshot, tally: &Tally, out: &mut Live) {
    let g = &tally.games;
    out.games = Some(g.games());
    (out.wins, out.losses, out.draws) = (Some(g.wins), Some(g.losses), Some(g.draws));
    let sample = match &snap.sprt {
        Some(s) => crate::summary::sample(tally, s),
        None => sprt::Sample::Pentanomial(tally.pairs),
    };
    if g.games() > 0 {
        let e = sample.estimate();
        out.elo = finite(e.elo);
        out.elo_error = finite(e.elo_error);
    }
    if let Some(st) = snap.sprt.as_ref().and_then(|s| s.status(&sample).ok()) {
        out.llr = finite(st.llr);
        out.lower = Some(st.lower_bound);
        out.upper = Some(st.upper_bound);
        out.verdict = match st.decision {
            Decision::H1 => Some("H1".into()),
            Decision::H0 => Some("H0".into()),
            Decision::Continue => None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rereading_reader_reads_again_only_when_its_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("stats.json");
        let mut reads = 0;
        let mut r = Rereading::new(vec![f.clone()], || {
            reads += 1;
            Reading::default()
        });
        assert!(r.update().is_some(), "the first call reads");
        assert!(r.update().is_none(), "nothing changed");
        std::fs::write(&f, "{}").unwrap();
        assert!(r.update().is_some(), "the file appeared");
        assert!(r.update().is_none());
        std::fs::write(&f, "{\"a\": 1}").unwrap();
        assert!(r.update().is_some(), "the file grew");
        drop(r);
        assert_eq!(reads, 3);
    }
}
