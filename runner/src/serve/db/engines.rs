//! The `engines` and `run_engines` tables: every query the server makes of them, each
//! parameterised.

use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

use super::runs::now;
use super::Db;

/// A registered engine.
#[derive(Clone, Debug, Serialize)]
pub struct Engine {
    pub name: String,
    /// As registered: an absolute path or a URL.
    pub repo: String,
    /// The git directory the server reads (the path, or its mirror of the URL).
    pub source: String,
    /// `make` or `spar`.
    pub build: String,
    pub created: i64,
    /// When it was removed (Unix seconds); `None` while it is registered.
    pub removed: Option<i64>,
    /// Who registered it (`None`: registered before engines had owners, or on a server
    /// without accounts: only an admin changes or removes it).
    pub owner: Option<String>,
    /// A change of its repository or build that waits for an approver.
    pub pending: Option<PendingChange>,
}

/// A change of an engine asked by a plain (untrusted) user: it waits for an approver or an
/// admin; until then the engine keeps its repository and build.
#[derive(Clone, Debug, Serialize)]
pub struct PendingChange {
    /// The new repository as it will be registered (an absolute path, or the URL).
    pub repo: String,
    pub build: String,
    /// Who asked for it, and when (Unix seconds).
    pub by: String,
    pub at: i64,
}

/// A registered engine as one run names it: the revision resolved and the build's bench.
#[derive(Clone, Debug, Serialize)]
pub struct RunEngine {
    /// Which `--engine` of the words, from 0.
    pub position: i64,
    /// Its `name=` (or `engine N`).
    pub variant: String,
    pub engine: String,
    pub rev: String,
    pub sha: String,
    pub bench: u64,
    pub binary: String,
    /// That `--engine`'s words as given.
    pub words: Vec<String>,
}

type Result<T> = std::result::Result<T, String>;

fn db_err(e: rusqlite::Error) -> String {
    format!("database: {e}")
}

const ENGINE_COLUMNS: &str = "name, repo, source, build, created, removed, owner, \
                              pending_repo, pending_build, pending_by, pending_at";

fn engine_from(r: &Row) -> rusqlite::Result<Engine> {
    let pending = match (r.get(7)?, r.get(8)?, r.get(9)?, r.get(10)?) {
        (Some(repo), Some(build), Some(by), Some(at)) => Some(PendingChange {
            repo,
            build,
            by,
            at,
        }),
        _ => None,
    };
    Ok(Engine {
        name: r.get(0)?,
        repo: r.get(1)?,
        source: r.get(2)?,
        build: r.get(3)?,
        created: r.get(4)?,
        removed: r.get(5)?,
        owner: r.get(6)?,
        pending,
    })
}

impl Db {
    /// Stores a new engine registered by `owner` (or registers a removed one's name again,
    /// for its new owner); `Ok(false)` when the name is taken.
    pub fn insert_engine(
        &self,
        name: &str,
        repo: &str,
        source: &str,
        build: &str,
        owner: Option<&str>,
    ) -> Result<bool> {
        let n = self
            .conn
            .execute(
                "INSERT INTO engines (name, repo, source, build, created, owner) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
                 ON CONFLICT (name) DO UPDATE SET repo = ?2, source = ?3, build = ?4, \
                 created = ?5, removed = NULL, owner = ?6, pending_repo = NULL, \
                 pending_build = NULL, pending_by = NULL, pending_at = NULL \
                 WHERE removed IS NOT NULL",
                params![name, repo, source, build, now(), owner],
            )
            .map_err(db_err)?;
        Ok(n == 1)
    }

    /// Changes a registered engine's repository (as registered and as read) and build; a
    /// change that waited is dropped.
    pub fn update_engine(&self, name: &str, repo: &str, source: &str, build: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE engines SET repo = ?2, source = ?3, build = ?4, pending_repo = NULL, \
                 pending_build = NULL, pending_by = NULL, pending_at = NULL \
                 WHERE name = ?1 AND removed IS NULL",
                params![name, repo, source, build],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// Stores a change of engine `name` that waits for an approver (replacing one that
    /// waited); the engine keeps its repository and build.
    pub fn set_pending_change(&self, name: &str, repo: &str, build: &str, by: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE engines SET pending_repo = ?2, pending_build = ?3, pending_by = ?4, \
                 pending_at = ?5 WHERE name = ?1 AND removed IS NULL",
                params![name, repo, build, by, now()],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// Marks engine `name` removed (its row stays: runs name it); a change that waited is
    /// dropped.
    pub fn remove_engine(&self, name: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE engines SET removed = ?2, pending_repo = NULL, pending_build = NULL, \
                 pending_by = NULL, pending_at = NULL WHERE name = ?1 AND removed IS NULL",
                params![name, now()],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// The queued and running runs (not deleted) that use engine `name`, by id; with
    /// `resumable`, the stopped and failed ones too.
    pub fn runs_using(&self, name: &str, resumable: bool) -> Result<Vec<i64>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT DISTINCT r.id FROM run_engines e JOIN runs r ON r.id = e.run_id \
                 WHERE e.engine = ?1 AND r.deleted = 0 AND (r.state IN ('queued', 'running') \
                 OR (?2 AND r.state IN ('stopped', 'failed'))) ORDER BY r.id",
            )
            .map_err(db_err)?;
        let rows = st
            .query_map(params![name, resumable], |r| r.get(0))
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// The engine `name`.
    pub fn engine(&self, name: &str) -> Result<Option<Engine>> {
        self.conn
            .query_row(
                &format!("SELECT {ENGINE_COLUMNS} FROM engines WHERE name = ?1"),
                params![name],
                engine_from,
            )
            .optional()
            .map_err(db_err)
    }

    /// Every engine, by name.
    pub fn engines(&self) -> Result<Vec<Engine>> {
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {ENGINE_COLUMNS} FROM engines ORDER BY removed IS NOT NULL, name"
            ))
            .map_err(db_err)?;
        let rows = st.query_map([], engine_from).map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// Stores the registered engines run `run_id` names (in place of those stored: a run's
    /// engines are stored as named when it is submitted, as built when they are built).
    pub fn insert_run_engines(&self, run_id: i64, rows: &[RunEngine]) -> Result<()> {
        self.atomically(|db| store_run_engines(&db.conn, run_id, rows))
    }

    /// The registered engines run `run_id` names, in the order of its words.
    pub fn run_engines(&self, run_id: i64) -> Result<Vec<RunEngine>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT position, variant, engine, rev, sha, bench, binary, words \
                 FROM run_engines WHERE run_id = ?1 ORDER BY position",
            )
            .map_err(db_err)?;
        let rows = st
            .query_map(params![run_id], |r| {
                let words: String = r.get(7)?;
                Ok(RunEngine {
                    position: r.get(0)?,
                    variant: r.get(1)?,
                    engine: r.get(2)?,
                    rev: r.get(3)?,
                    sha: r.get(4)?,
                    bench: r.get::<_, i64>(5)? as u64,
                    binary: r.get(6)?,
                    words: serde_json::from_str(&words).unwrap_or_default(),
                })
            })
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }
}

/// Replaces run `run_id`'s rows of `run_engines` by `rows`, in the caller's transaction.
pub(super) fn store_run_engines(
    conn: &rusqlite::Connection,
    run_id: i64,
    rows: &[RunEngine],
) -> Result<()> {
    conn.execute("DELETE FROM run_engines WHERE run_id = ?1", params![run_id])
        .map_err(db_err)?;
    for e in rows {
        let words = serde_json::to_string(&e.words).map_err(|e| e.to_string())?;
        conn.execute(
            "INSERT INTO run_engines (run_id, position, variant, engine, rev, sha, bench, \
             binary, words) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                run_id,
                e.position,
                e.variant,
                e.engine,
                e.rev,
                e.sha,
                e.bench as i64,
                e.binary,
                words
            ],
        )
        .map_err(db_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::runs::NewRun;
    use super::*;

    #[test]
    fn engines_and_the_engines_of_a_run_are_stored() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        assert!(db
            .insert_engine("e", "/r", "/r", "make", Some("ann"))
            .unwrap());
        assert!(!db
            .insert_engine("e", "/s", "/s", "make", Some("bob"))
            .unwrap());
        let e = db.engine("e").unwrap().unwrap();
        assert_eq!((e.repo.as_str(), e.owner.as_deref()), ("/r", Some("ann")));
        assert!(e.pending.is_none());
        assert!(db.engine("f").unwrap().is_none());
        assert_eq!(db.engines().unwrap().len(), 1);
        let words = vec!["--games".to_string(), "2".into()];
        let new = NewRun::of("match", &words);
        let id = db
            .insert(&new, |id| Ok(Some(format!("/d/{id}"))))
            .unwrap()
            .id;
        let row = RunEngine {
            position: 1,
            variant: "base".into(),
            engine: "e".into(),
            rev: "main".into(),
            sha: "a".repeat(40),
            bench: 123,
            binary: "/b".into(),
            words: vec!["name=base".into()],
        };
        db.insert_run_engines(id, std::slice::from_ref(&row))
            .unwrap();
        let got = db.run_engines(id).unwrap();
        assert_eq!((got[0].bench, got[0].words.clone()), (123, row.words));
        assert!(db.run_engines(id + 1).unwrap().is_empty());
        // The queued run uses the engine; a removed engine keeps its row, and its name may
        // be registered again.
        assert_eq!(db.runs_using("e", false).unwrap(), vec![id]);
        db.set_state(id, "stopped".into()).unwrap();
        assert!(db.runs_using("e", false).unwrap().is_empty());
        assert_eq!(db.runs_using("e", true).unwrap(), vec![id]);
        // A change that waits leaves the engine as it is; a change made drops it.
        db.set_pending_change("e", "/p", "spar", "ann").unwrap();
        let e = db.engine("e").unwrap().unwrap();
        let p = e.pending.unwrap();
        assert_eq!(
            (e.repo.as_str(), p.repo.as_str(), p.by.as_str()),
            ("/r", "/p", "ann")
        );
        db.update_engine("e", "/t", "/t", "spar").unwrap();
        let e = db.engine("e").unwrap().unwrap();
        assert_eq!((e.build.as_str(), e.pending.is_none()), ("spar", true));
        db.set_pending_change("e", "/p", "spar", "ann").unwrap();
        db.remove_engine("e").unwrap();
        assert!(db.engine("e").unwrap().unwrap().removed.is_some());
        assert!(db
            .insert_engine("e", "/u", "/u", "make", Some("bob"))
            .unwrap());
        let again = db.engine("e").unwrap().unwrap();
        assert_eq!((again.repo.as_str(), again.removed), ("/u", None));
        assert_eq!(again.owner.as_deref(), Some("bob"));
        assert!(again.pending.is_none());
    }
}
