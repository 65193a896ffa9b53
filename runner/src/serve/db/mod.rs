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
pub mod watch;

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
    include_str!("migrations/0011_accounts_security.sql"),
    include_str!("migrations/0012_watch.sql"),
];

/// The index in [`MIGRATIONS`] of the migration that makes account names unique without
/// regard to case.
const NOCASE_NAMES: usize = 10;

/// The schema version this binary writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// The open database.
pub struct Db {
    pub(crate) conn: Connection,
}

/// spar's SQLite application id (`SPAR` in ASCII), set on every database it opens: what
/// tells its own database from another program's.
pub const APPLICATION_ID: i32 = 0x5350_4152;

fn damaged(shown: &std::path::Display, e: rusqlite::Error) -> String {
    format!(
        "{shown}: not a readable spar serve database ({e}): restore it from a backup or move \
         it away to start an empty one"
    )
}

/// Every table any version of spar's schema has had.
fn spar_tables() -> Result<std::collections::BTreeSet<String>, String> {
    let conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
    let mut all = std::collections::BTreeSet::new();
    for sql in MIGRATIONS {
        conn.execute_batch(sql).map_err(|e| e.to_string())?;
        all.extend(tables(&conn).map_err(|e| e.to_string())?);
    }
    Ok(all)
}

/// The tables of a database (not SQLite's own).
fn tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         ORDER BY name",
    )?;
    let rows = st.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// Before names become unique without regard to case: refused, naming them, when
/// accounts differ only in case (which one to keep is the admin's choice, not ours).
fn check_case_collisions(conn: &Connection) -> Result<(), String> {
    let has_users: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' \
             AND name = 'users')",
            [],
            |r| r.get(0),
        )
        .map_err(|e| e.to_string())?;
    if !has_users {
        return Ok(());
    }
    let mut st = conn
        .prepare(
            "SELECT group_concat(name, ', ') FROM users GROUP BY lower(name) \
             HAVING count(*) > 1 ORDER BY lower(name)",
        )
        .map_err(|e| e.to_string())?;
    let groups: Vec<String> = st
        .query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| e.to_string())?;
    if groups.is_empty() {
        return Ok(());
    }
    Err(format!(
        "account names must now be unique without regard to case, and these differ only \
         in case: {}. Keep one of each with this spar's previous version (or remove the \
         others with `sqlite3 spar.db \"DELETE FROM users WHERE name = 'NAME'\"` while \
         the server is stopped), then start this one",
        groups.join("; ")
    ))
}

impl Db {
    /// Checks, reading only, that the file at `path` is a database spar may adopt: none
    /// yet, an empty one, or spar's own (its application id, or spar's tables and a schema
    /// version this spar knows), intact, not newer than this spar, without accounts that
    /// differ only in case. Nothing is created or changed, whatever the answer: a refusal
    /// leaves the directory as it was.
    pub fn inspect(path: &Path) -> Result<(), String> {
        let shown = path.display();
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("{shown}: {e}")),
        };
        if !meta.is_file() {
            return Err(format!(
                "{shown}: not a file (a directory, a link or a device): spar serve keeps its \
                 database in a file of that name; move it away or choose another --data-dir"
            ));
        }
        let flags =
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| damaged(&shown, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| damaged(&shown, e))?;
        let pragma = |name: &str| -> Result<i64, String> {
            conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
                .map_err(|e| damaged(&shown, e))
        };
        let app = pragma("application_id")?;
        let version = pragma("user_version")?;
        let found = tables(&conn).map_err(|e| damaged(&shown, e))?;
        let empty = app == 0 && version == 0 && found.is_empty();
        let known = spar_tables()?;
        let looks_ours = app == 0
            && version >= 1
            && found.iter().any(|t| t == "runs")
            && found.iter().all(|t| known.contains(t));
        if !(empty || app == i64::from(APPLICATION_ID) || looks_ours) {
            let list = if found.is_empty() {
                "none".to_string()
            } else {
                found.join(", ")
            };
            return Err(format!(
                "{shown}: another program's SQLite database (application id {app}, schema \
                 version {version}, tables: {list}): spar serve adopts only an empty database \
                 or its own; choose another --data-dir"
            ));
        }
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| damaged(&shown, e))?;
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
        if version <= NOCASE_NAMES as i64 {
            check_case_collisions(&conn).map_err(|e| format!("{shown}: {e}"))?;
        }
        Ok(())
    }

    /// Opens (creating if missing) and migrates the database at `path`, after
    /// [`Db::inspect`] found it one spar may adopt.
    pub fn open(path: &Path) -> Result<Db, String> {
        Db::inspect(path)?;
        let shown = path.display();
        let conn = Connection::open(path).map_err(|e| format!("{shown}: cannot open: {e}"))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| damaged(&shown, e))?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| damaged(&shown, e))?;
        let mut db = Db { conn };
        db.migrate(version).map_err(|e| damaged(&shown, e))?;
        Ok(db)
    }

    /// Runs `f` as one unit of the database: all its changes or none (a savepoint, so it
    /// nests inside another one and in a transaction).
    pub fn atomically<T>(&self, f: impl FnOnce(&Db) -> Result<T, String>) -> Result<T, String> {
        let err = |e: rusqlite::Error| format!("database: {e}");
        self.conn.execute_batch("SAVEPOINT unit").map_err(err)?;
        match f(self) {
            Ok(v) => {
                self.conn.execute_batch("RELEASE unit").map_err(err)?;
                Ok(v)
            }
            Err(e) => {
                // After some errors (a full disk) SQLite has rolled the whole transaction
                // back itself: there is nothing left to undo.
                if self.conn.is_autocommit() {
                    return Err(e);
                }
                let undone = self.conn.execute_batch("ROLLBACK TO unit; RELEASE unit");
                Err(match undone {
                    Ok(()) => e,
                    Err(u) => format!("{e} (and undoing it failed: {u})"),
                })
            }
        }
    }

    /// Applies the migrations after `from`, each in a transaction with its version.
    fn migrate(&mut self, from: i64) -> rusqlite::Result<()> {
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", i as i64 + 1)?;
            tx.commit()?;
        }
        let app: i32 = self
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))?;
        if app != APPLICATION_ID {
            self.conn
                .pragma_update(None, "application_id", APPLICATION_ID)?;
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
    fn accounts_that_differ_only_in_case_stop_the_migration_and_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spar.db");
        let conn = Connection::open(&path).unwrap();
        for sql in &MIGRATIONS[..NOCASE_NAMES] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", NOCASE_NAMES as i64)
            .unwrap();
        for name in ["root", "ROOT", "bob", "Bob", "ann"] {
            conn.execute(
                "INSERT INTO users (name, hash, role, state, created) VALUES (?1, 'h', 'user', 'active', 0)",
                [name],
            )
            .unwrap();
        }
        drop(conn);
        let err = Db::open(&path).err().unwrap();
        assert!(
            err.contains("Bob, bob") || err.contains("bob, Bob"),
            "{err}"
        );
        assert!(err.contains("ROOT") && err.contains("root"), "{err}");
        assert!(!err.contains("ann"), "{err}");
        // Nothing was changed: the version is the old one.
        let conn = Connection::open(&path).unwrap();
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, NOCASE_NAMES as i64);
        conn.execute("DELETE FROM users WHERE name IN ('ROOT', 'Bob')", [])
            .unwrap();
        drop(conn);
        assert_eq!(Db::open(&path).unwrap().version(), VERSION);
    }

    #[test]
    fn only_an_empty_database_or_spars_own_is_adopted() {
        let dir = tempfile::tempdir().unwrap();
        // Another program's database: refused, and left byte for byte as it was.
        let path = dir.path().join("spar.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE notes (id INTEGER, body TEXT); INSERT INTO notes VALUES (1, 'x');",
        )
        .unwrap();
        drop(conn);
        let before = std::fs::read(&path).unwrap();
        let err = Db::open(&path).err().unwrap();
        assert!(err.contains("another program's SQLite database"), "{err}");
        assert!(err.contains("tables: notes"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        // One with spar's tables and one of its own beside: refused too.
        let path = dir.path().join("mixed.db");
        drop(Db::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "application_id", 0).unwrap();
        conn.execute_batch("CREATE TABLE notes (id INTEGER);")
            .unwrap();
        drop(conn);
        assert!(Db::open(&path).is_err());
        // An empty file, and spar's own without its id (an older spar's): adopted, and
        // marked as spar's.
        let path = dir.path().join("empty.db");
        std::fs::write(&path, b"").unwrap();
        drop(Db::open(&path).unwrap());
        let path = dir.path().join("old.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        drop(conn);
        let db = Db::open(&path).unwrap();
        let app: i32 = db
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(app, APPLICATION_ID);
        // A directory of that name.
        let path = dir.path().join("dir.db");
        std::fs::create_dir(&path).unwrap();
        assert!(Db::open(&path).err().unwrap().contains("not a file"));
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
