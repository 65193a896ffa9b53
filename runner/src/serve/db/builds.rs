//! The runs whose registered engines wait for their build (`runs.built = 0`): every query
//! the server's builder and scheduler make of that flag, each parameterised. A run that
//! names registered engines is stored unbuilt; the builder builds it once it is queued and
//! stores its words as built; only built runs play.

use rusqlite::params;

use super::engines::RunEngine;
use super::runs::now;
use super::Db;

type Result<T> = std::result::Result<T, String>;

fn db_err(e: rusqlite::Error) -> String {
    format!("database: {e}")
}

impl Db {
    /// Marks run `id` unbuilt: it plays only once the builder has built its engines.
    pub fn mark_unbuilt(&self, id: i64) -> Result<()> {
        self.conn
            .execute("UPDATE runs SET built = 0 WHERE id = ?1", params![id])
            .map(|_| ())
            .map_err(db_err)
    }

    /// The queued runs (not deleted) whose engines wait for their build, highest priority
    /// first, then oldest first. A run that waits for approval is not among them.
    pub fn unbuilt(&self) -> Result<Vec<i64>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT id FROM runs WHERE built = 0 AND deleted = 0 AND state = 'queued' \
                 ORDER BY priority DESC, id",
            )
            .map_err(db_err)?;
        let rows = st.query_map([], |r| r.get(0)).map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// Run `id`'s engines are built: its words become the built ones (`cmd=` of the
    /// builds), its engines the rows with their commits and benches, all at once.
    pub fn set_built(&self, id: i64, words: &[String], rows: &[RunEngine]) -> Result<()> {
        let words = serde_json::to_string(words).map_err(|e| e.to_string())?;
        self.atomically(|db| {
            db.conn
                .execute(
                    "UPDATE runs SET words = ?2, built = 1 WHERE id = ?1",
                    params![id, words],
                )
                .map_err(db_err)?;
            super::engines::store_run_engines(&db.conn, id, rows)
        })
    }

    /// Run `id`'s build failed: when it is still queued and unbuilt, it fails with
    /// `message` as its last lines (true); a run stopped or deleted meanwhile is left as it
    /// is (false).
    pub fn build_failed(&self, id: i64, message: &str) -> Result<bool> {
        self.conn
            .execute(
                "UPDATE runs SET state = 'failed', exit_code = NULL, stderr_tail = ?2, \
                 finished = ?3 WHERE id = ?1 AND state = 'queued' AND built = 0",
                params![id, message, now()],
            )
            .map(|n| n > 0)
            .map_err(db_err)
    }
}

#[cfg(test)]
mod tests {
    use super::super::runs::NewRun;
    use super::*;

    #[test]
    fn an_unbuilt_run_is_listed_once_queued_until_built_or_failed() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        let words = vec!["--engine".to_string(), "engine=e".into(), "rev=main".into()];
        let new = |waits| NewRun {
            waits,
            ..NewRun::of("match", &words)
        };
        let waits = db
            .insert(&new(true), |id| Ok(Some(format!("/d/{id}"))))
            .unwrap()
            .id;
        let queued = db
            .insert(&new(false), |id| Ok(Some(format!("/d/{id}"))))
            .unwrap()
            .id;
        // A run that names no registered engine is built from the start.
        db.insert(&new(false), |id| Ok(Some(format!("/d/{id}"))))
            .unwrap();
        db.mark_unbuilt(waits).unwrap();
        db.mark_unbuilt(queued).unwrap();
        // The run that waits for approval is not built.
        assert_eq!(db.unbuilt().unwrap(), vec![queued]);
        db.approve(waits, "vic").unwrap();
        assert_eq!(db.unbuilt().unwrap(), vec![waits, queued]);
        let built = vec!["--engine".to_string(), "cmd=/b/e".into()];
        db.set_built(waits, &built, &[]).unwrap();
        assert_eq!(db.get(waits).unwrap().unwrap().words, built);
        assert_eq!(db.unbuilt().unwrap(), vec![queued]);
        // A failed build fails a queued run, not a stopped one.
        assert!(db.build_failed(queued, "make failed").unwrap());
        let failed = db.get(queued).unwrap().unwrap();
        assert_eq!(
            (failed.state.as_str(), failed.stderr_tail.as_str()),
            ("failed", "make failed")
        );
        assert!(db.unbuilt().unwrap().is_empty());
        db.set_state(queued, "stopped".into()).unwrap();
        assert!(!db.build_failed(queued, "again").unwrap());
    }
}
