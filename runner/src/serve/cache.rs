//! The run cache: each run's live numbers kept in memory, so that no request reads a run's
//! files (fishtest's `run_cache.py` is the anchor).
//!
//! One writer, the refresher thread ([`start`]), looks at every queued or running run each
//! [`EVERY`]: its kind's incremental reader (`Job::live_reader`) reads the bytes appended
//! since its last read (nothing when the files did not change) and the cache publishes the
//! new [`Reading`]. Requests only take the published reading (a read lock and an `Arc`).
//! A run the refresher has not read yet (a server just started, a run that left the queue)
//! is read once by the first request that shows it, then kept: a run that no longer plays
//! keeps the numbers stored in its row, its files are read once only when it has none
//! (or when its page needs the kind's view of them). An entry is good while the run's
//! state, kind, words and directory are those it was read for.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use super::db::runs::Run;
use super::store::Store;
use super::{slurm, words};
use crate::job::Job;
use crate::jobs;
use crate::live::{LiveReader, LiveRun, Reading};

/// How often the refresher looks at the runs that play.
pub const EVERY: Duration = Duration::from_millis(500);

/// What an entry was read for.
#[derive(Clone, Debug, PartialEq)]
struct Key {
    state: String,
    kind: String,
    words: Vec<String>,
    dir: String,
}

impl Key {
    fn of(run: &Run) -> Key {
        Key {
            state: run.state.as_str().to_string(),
            kind: run.kind.as_str().to_string(),
            words: run.words.clone(),
            dir: run.dir.clone(),
        }
    }

    fn plays(&self) -> bool {
        matches!(self.state.as_str(), "queued" | "running")
    }
}

/// A run's published reading.
struct Entry {
    key: Key,
    reading: Reading,
    /// Whether the reading is of the run's files (not only the numbers stored in its row).
    of_files: bool,
}

/// A run's reader, kept while the run plays.
struct Slot {
    key: Key,
    reader: Box<dyn LiveReader>,
}

/// The cache (see the module documentation).
#[derive(Default)]
pub struct RunCache {
    shown: RwLock<HashMap<i64, Arc<Entry>>>,
    /// One lock per run: its reader is used by one thread at a time (the refresher, or the
    /// first request that shows the run).
    readers: Mutex<HashMap<i64, Arc<Mutex<Option<Slot>>>>>,
}

impl RunCache {
    /// The numbers of `run` (those stored in its row when it no longer plays).
    pub fn live(&self, store: &Store, run: &Run) -> crate::live::Live {
        self.get(store, run, false).reading.live.clone()
    }

    /// The reading of `run` with its kind's view of its files (a tune's trajectories).
    pub fn reading(&self, store: &Store, run: &Run) -> Reading {
        self.get(store, run, true).reading.clone()
    }

    /// The published entry of `run`, read first when there is none for what it is now.
    fn get(&self, store: &Store, run: &Run, files: bool) -> Arc<Entry> {
        let key = Key::of(run);
        let fresh = |e: &Arc<Entry>| e.key == key && (e.of_files || !files);
        if let Some(e) = self.shown.read().expect("cache lock").get(&run.id) {
            if fresh(e) {
                return e.clone();
            }
        }
        let slot = self.slot(run.id);
        let mut slot = slot.lock().expect("reader lock");
        // Another thread may have read it while this one waited.
        if let Some(e) = self.shown.read().expect("cache lock").get(&run.id) {
            if fresh(e) {
                return e.clone();
            }
        }
        let entry = if key.plays() {
            self.update(run.id, &key, &mut slot, true)
        } else {
            *slot = None;
            let stored = store
                .blocking(|db| db.last_live(run.id))
                .ok()
                .flatten()
                .and_then(|t| serde_json::from_str(&t).ok());
            let mut reading = match (&stored, files) {
                (Some(_), false) => Reading::default(),
                _ => read_once(run),
            };
            let of_files = stored.is_none() || files;
            if let Some(live) = stored {
                reading.live = live;
            }
            self.publish(run.id, key, reading, of_files)
        };
        entry.expect("a first reading is always published")
    }

    /// Updates the reader in `slot` of run `id` (made anew when it was for another `key`)
    /// and publishes its reading when it changed (`force`: publishes it in any case).
    fn update(
        &self,
        id: i64,
        key: &Key,
        slot: &mut Option<Slot>,
        force: bool,
    ) -> Option<Arc<Entry>> {
        if slot.as_ref().is_none_or(|s| s.key != *key) {
            *slot = Some(Slot {
                key: key.clone(),
                reader: reader_of(key),
            });
        }
        let s = slot.as_mut().expect("just made");
        match s.reader.update() {
            Some(reading) => self.publish(id, key.clone(), reading, true),
            None if force => {
                let shown = self.shown.read().expect("cache lock").get(&id).cloned();
                match shown.filter(|e| e.key == *key) {
                    Some(e) => Some(e),
                    // A reader made anew always reads: a reader that has nothing new was
                    // published before (under this key, unless the run changed since).
                    None => {
                        s.reader = reader_of(key);
                        let reading = s.reader.update().unwrap_or_default();
                        self.publish(id, key.clone(), reading, true)
                    }
                }
            }
            None => None,
        }
    }

    fn publish(&self, id: i64, key: Key, reading: Reading, of_files: bool) -> Option<Arc<Entry>> {
        let e = Arc::new(Entry {
            key,
            reading,
            of_files,
        });
        self.shown
            .write()
            .expect("cache lock")
            .insert(id, e.clone());
        Some(e)
    }

    fn slot(&self, id: i64) -> Arc<Mutex<Option<Slot>>> {
        self.readers
            .lock()
            .expect("cache lock")
            .entry(id)
            .or_default()
            .clone()
    }

    /// One round of the refresher: every run that plays is read (the bytes appended since
    /// its last read) and published when its numbers changed; the readers of runs that no
    /// longer play are dropped.
    pub fn refresh(&self, store: &Store) {
        let Ok(active) = store.blocking(|db| db.active()) else {
            return;
        };
        let ids: std::collections::HashSet<i64> = active.iter().map(|r| r.id).collect();
        self.readers
            .lock()
            .expect("cache lock")
            .retain(|id, _| ids.contains(id));
        self.shown
            .write()
            .expect("cache lock")
            .retain(|id, e| !e.key.plays() || ids.contains(id));
        // The runs are read in parallel (after a restart, each file is read whole once).
        use rayon::prelude::*;
        active.par_iter().for_each(|run| {
            let key = Key::of(run);
            let slot = self.slot(run.id);
            let mut slot = slot.lock().expect("reader lock");
            let unread = !self
                .shown
                .read()
                .expect("cache lock")
                .get(&run.id)
                .is_some_and(|e| e.key == key);
            self.update(run.id, &key, &mut slot, unread);
        });
    }
}

/// A new reader of the run `key` describes.
fn reader_of(key: &Key) -> Box<dyn LiveReader> {
    reader(&key.kind, &key.words, Path::new(&key.dir))
}

/// The run's files read once (a run that no longer plays).
fn read_once(run: &Run) -> Reading {
    reader_of(&Key::of(run)).update().unwrap_or_default()
}

/// Starts the refresher thread of `cache` (it lives as long as the server).
pub fn start(cache: Arc<RunCache>, store: Store) -> Result<(), String> {
    std::thread::Builder::new()
        .name("run-cache".into())
        .spawn(move || loop {
            cache.refresh(&store);
            std::thread::sleep(EVERY);
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start the run cache: {e}"))
}

/// Where the files of a run of `kind` with `words` in `dir` are, for its kind's reader.
fn run_of(kind: &dyn Job, words: &[String], dir: &Path) -> LiveRun {
    LiveRun {
        file: words::primary(kind, dir, words),
        cluster: slurm::is_cluster_run(dir).then(|| slurm::run_dir(dir)),
        words: words.to_vec(),
    }
}

/// A new live reader of a run of `kind` with `words` whose files are in `dir` (a kind this
/// spar does not know has no numbers).
pub fn reader(kind: &str, words: &[String], dir: &Path) -> Box<dyn LiveReader> {
    match jobs::by_command(kind) {
        Some(job) => job.live_reader(&run_of(job, words, dir)),
        None => Box::new(crate::live_files::Rereading::new(
            Vec::new(),
            Reading::default,
        )),
    }
}
