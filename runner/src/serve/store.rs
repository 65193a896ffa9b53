//! The one handle on the server's database: the connection and its lock stay in here.
//! Handlers ask for database work with a closure, run on tokio's blocking threads (as
//! crates.io's `db_read`/`db_write` do): `st.store.read(move |db| db.get(id)).await`,
//! `st.store.write(move |db| …).await` (one unit: all its changes or none). Code on threads
//! of its own (the scheduler, the builder) and the actions already run off the async
//! threads use [`Store::blocking`].
//!
//! A closure that panics becomes an error (`Err`), never a poisoned lock: the panic is
//! caught while the lock is held, what it left of a transaction is rolled back, and the
//! next caller finds the database as the last finished work left it. (A release build
//! aborts on a panic, as every panic there does; the test builds unwind.)

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};

use super::db::Db;

/// The database behind its lock (cheap to clone: every clone is the same database).
#[derive(Clone)]
pub struct Store {
    db: Arc<Mutex<Db>>,
}

impl Store {
    /// The handle on an open database.
    pub fn new(db: Db) -> Store {
        Store {
            db: Arc::new(Mutex::new(db)),
        }
    }

    /// Runs `f` on the database off the async threads.
    pub async fn read<T, E>(
        &self,
        f: impl FnOnce(&Db) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<String> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.with(f))
            .await
            .map_err(|e| E::from(format!("the database work failed: {e}")))?
    }

    /// Runs `f` on the database off the async threads as one unit: all its changes, or
    /// none when it fails.
    pub async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Db) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        self.read(move |db| db.atomically(f)).await
    }

    /// Runs `f` on the database on this thread: for threads of their own and work already
    /// off the async threads. Called on an async worker thread by mistake, it hands that
    /// thread's other tasks to another one first (`block_in_place`) rather than stall them.
    pub fn blocking<T, E: From<String>>(
        &self,
        f: impl FnOnce(&Db) -> Result<T, E>,
    ) -> Result<T, E> {
        use tokio::runtime::{Handle, RuntimeFlavor};
        let pooled =
            Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
        if pooled {
            tokio::task::block_in_place(|| self.with(f))
        } else {
            self.with(f)
        }
    }

    /// Runs `f` under the lock; a panic is an `Err` and its half-done transaction undone.
    fn with<T, E: From<String>>(&self, f: impl FnOnce(&Db) -> Result<T, E>) -> Result<T, E> {
        let db = self.lock();
        match catch_unwind(AssertUnwindSafe(|| f(&db))) {
            Ok(done) => done,
            Err(panic) => {
                undo_open(&db);
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                Err(E::from(format!("the database work failed: {why}")))
            }
        }
    }

    /// The lock; one poisoned (which only a panic outside [`Store::with`]'s catch could
    /// do) is taken back, its half-done transaction undone.
    fn lock(&self) -> MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(|poisoned| {
            self.db.clear_poison();
            let db = poisoned.into_inner();
            undo_open(&db);
            db
        })
    }
}

/// Rolls back a transaction or savepoint a panic left open (else every later change
/// would join it, never committed).
fn undo_open(db: &Db) {
    if !db.conn.is_autocommit() {
        if let Err(e) = db.conn.execute_batch("ROLLBACK") {
            eprintln!("spar serve: the database: undoing a failed unit: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        (dir, Store::new(db))
    }

    fn events(s: &Store) -> usize {
        let all = s.blocking(|db| db.events(&Default::default()));
        all.unwrap().len()
    }

    #[test]
    fn a_panicking_closure_is_an_error_and_the_store_goes_on() {
        let (_dir, s) = store();
        let r: Result<(), String> = s.blocking(|_| panic!("boom"));
        assert_eq!(r.unwrap_err(), "the database work failed: boom");
        s.blocking(|db| db.event(None, "test", "after")).unwrap();
        assert_eq!(events(&s), 1);
    }

    #[test]
    fn a_panic_inside_a_unit_leaves_none_of_its_changes_and_no_open_transaction() {
        let (_dir, s) = store();
        let r: Result<(), String> = s.blocking(|db| {
            db.atomically(|db| {
                db.event(None, "test", "half")?;
                panic!("in the middle")
            })
        });
        assert!(r.unwrap_err().contains("in the middle"));
        assert_eq!(events(&s), 0);
        s.blocking(|db| db.event(None, "test", "kept")).unwrap();
        // A second handle (another connection) sees it: it was committed.
        let (dir, _) = (_dir, ());
        let other = Db::open(&dir.path().join("spar.db")).unwrap();
        assert_eq!(other.events(&Default::default()).unwrap().len(), 1);
    }

    #[test]
    fn a_poisoned_lock_is_taken_back() {
        let (_dir, s) = store();
        let db = s.db.clone();
        let _ = std::thread::spawn(move || {
            let _held = db.lock().unwrap();
            panic!("poisons the lock");
        })
        .join();
        assert!(s.db.is_poisoned());
        s.blocking(|db| db.event(None, "test", "after")).unwrap();
        assert_eq!(events(&s), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn async_work_runs_and_a_failed_write_changes_nothing() {
        let (_dir, s) = store();
        s.read(|db| db.event(None, "test", "one")).await.unwrap();
        let failed: Result<(), String> = s
            .write(|db| {
                db.event(None, "test", "undone")?;
                Err("refused".into())
            })
            .await;
        assert_eq!(failed.unwrap_err(), "refused");
        let panicked: Result<(), String> = s.read(|_| panic!("async boom")).await;
        assert!(panicked.unwrap_err().contains("async boom"));
        // The blocking form on a worker thread does not stall the runtime.
        assert_eq!(events(&s), 1);
    }
}
