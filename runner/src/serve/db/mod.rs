//! The server's database: one SQLite file (`DATA/spar.db`) holding the runs — the index
//! and the history; the run directories hold the truth. The schema is the numbered SQL
//! files of `migrations/`, applied in order; the version applied is SQLite's
//! `PRAGMA user_version`. A database newer than this binary, or one that is not a
//! database, is refused with a message that says so.

pub mod action_log;
pub mod builds;
pub mod engines;
pub mod events;
pub mod machines;
pub mod nets;
pub mod runs;
pub mod users;

use std::path::Path;

use rusqlite::Connection;

/// The migrations, in order: migration `i` brings the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_runs.sql"),
    include_str!("migrations/0002_engines.sql"),
    include_str!("migrations/0003_events.sql"),
    include_str!("migrations/0004_forms.sql"),
    include_str!("migrations/0005_accounts.sql"),
    include_str!("migrations/0006_approvals.sql"),
    include_str!("migrations/0007_nets.sql"),
    include_str!("migrations/0008_machines.sql"),
    include_str!("migrations/0009_nps.sql"),
    include_str!("migrations/0010_engine_owners.sql"),
];

/// The schema version this binary writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// The open database.
pub struct Db {
    pub(crate) conn: Connection,
}

impl Db {
    /// Opens (creating if missing) and migrates the database at `path`.
    pub fn open(path: &Path) -> Result<Db, String> {
        let shown = path.display();
        let conn = Connection::open(path).map_err(|e| format!("{shown}: cannot open: {e}"))?;
        let damaged = |e: rusqlite::Error| {
            format!(
                "{shown}: not a readable spar serve database ({e}): restore it from a backup \
                 or move it away to start an empty one"
            )
        };
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(damaged)?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(damaged)?;
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(damaged)?;
        if check != "ok" {
            return Err(format!(
                "{shown}: the database is damaged ({check}): restore it from a backup or move \
                 it away to start an empty one"
            ));
        }
        if version > VERSION {
            return Err(format!(
                "{shown}: the database has schema version {version}, this spar knows up to \
                 {VERSION}: run the newer spar that wrote it"
            ));
        }
        let mut db = Db { conn };
        db.migrate(version).map_err(damaged)?;
        Ok(db)
    }

    /// Applies the migrations after `from`, each in a transaction with its version.
    fn migrate(&mut self, from: i64) -> rusqlite::Result<()> {
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", i as i64 + 1)?;
            tx.commit()?;
        }
        Ok(())
    }

    /// The schema version of the open database.
    #[cfg(test)]
    fn version(&self) -> i64 {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_database_gets_every_migration_and_reopens_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spar.db");
        let db = Db::open(&path).unwrap();
        assert_eq!(db.version(), VERSION);
        drop(db);
        let db = Db::open(&path).unwrap();
        assert_eq!(db.version(), VERSION);
        let n: i64 = db
            .conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }

    #[test]
    fn a_newer_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spar.db");
        drop(Db::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", VERSION + 1)
            .unwrap();
        drop(conn);
        let err = Db::open(&path).err().unwrap();
        assert!(err.contains("schema version"), "{err}");
    }

    #[test]
    fn a_damaged_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spar.db");
        std::fs::write(&path, vec![b'x'; 8192]).unwrap();
        let err = Db::open(&path).err().unwrap();
        assert!(err.contains("not a readable spar serve database"), "{err}");
    }

    #[test]
    fn a_database_at_an_older_version_is_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spar.db");
        // Version 0: an empty SQLite file.
        drop(Connection::open(&path).unwrap());
        assert_eq!(Db::open(&path).unwrap().version(), VERSION);
    }
}
