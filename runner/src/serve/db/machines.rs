//! The `machines` table (each machine's exclusion and bench speed) and `machine_flags`
//! (the shards and machines of a run already flagged, so a flag is logged once).

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use super::runs::now;
use super::Db;

/// A machine the server knows.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Machine {
    pub name: String,
    /// An admin excluded it: no run plays on it.
    pub excluded: bool,
    /// Its `spar bench` nodes per second, and when that was measured (Unix seconds).
    pub nps: Option<u64>,
    pub nps_time: Option<i64>,
}

fn db_err(e: rusqlite::Error) -> String {
    format!("database: {e}")
}

impl Db {
    /// Every machine known, by name.
    pub fn machines(&self) -> Result<Vec<Machine>, String> {
        let mut stmt = self
            .conn
            .prepare("SELECT name, excluded, nps, nps_time FROM machines ORDER BY name")
            .map_err(db_err)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Machine {
                    name: r.get(0)?,
                    excluded: r.get::<_, i64>(1)? != 0,
                    nps: r.get::<_, Option<i64>>(2)?.map(|n| n.max(0) as u64),
                    nps_time: r.get(3)?,
                })
            })
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// The names of the excluded machines.
    pub fn excluded_machines(&self) -> Result<Vec<String>, String> {
        Ok(self
            .machines()?
            .into_iter()
            .filter(|m| m.excluded)
            .map(|m| m.name)
            .collect())
    }

    /// Whether machine `name` is excluded.
    pub fn is_excluded(&self, name: &str) -> Result<bool, String> {
        self.conn
            .query_row(
                "SELECT excluded FROM machines WHERE name = ?1",
                params![name],
                |r| r.get::<_, i64>(0),
            )
            .optional()
            .map(|e| e.unwrap_or(0) != 0)
            .map_err(db_err)
    }

    /// Excludes machine `name` (or lets it play again); `true`: that changed something.
    pub fn set_excluded(&self, name: &str, excluded: bool) -> Result<bool, String> {
        let before = self.is_excluded(name)?;
        self.conn
            .execute(
                "INSERT INTO machines (name, excluded) VALUES (?1, ?2) \
                 ON CONFLICT (name) DO UPDATE SET excluded = ?2",
                params![name, excluded as i64],
            )
            .map_err(db_err)?;
        Ok(before != excluded)
    }

    /// Records machine `name`'s bench speed, now.
    pub fn set_nps(&self, name: &str, nps: u64) -> Result<(), String> {
        self.conn
            .execute(
                "INSERT INTO machines (name, nps, nps_time) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (name) DO UPDATE SET nps = ?2, nps_time = ?3",
                params![name, nps as i64, now()],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// Marks `what` (`machine NAME`, `shard I`) of run `run` flagged; `true`: the first
    /// time.
    pub fn flag_once(&self, run: i64, what: &str) -> Result<bool, String> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO machine_flags (run_id, what, time) VALUES (?1, ?2, ?3)",
                params![run, what, now()],
            )
            .map(|n| n == 1)
            .map_err(db_err)
    }

    /// The flags recorded: run, what, when; newest first, at most `limit`.
    pub fn machine_flags(&self, limit: i64) -> Result<Vec<(i64, String, i64)>, String> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT run_id, what, time FROM machine_flags ORDER BY time DESC, run_id DESC \
                 LIMIT ?1",
            )
            .map_err(db_err)?;
        let rows = stmt
            .query_map(params![limit], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machines_are_excluded_measured_and_flagged_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        assert!(!db.is_excluded("n1").unwrap());
        assert!(db.set_excluded("n1", true).unwrap());
        assert!(!db.set_excluded("n1", true).unwrap());
        db.set_nps("n1", 1234).unwrap();
        db.set_nps("host", 99).unwrap();
        let all = db.machines().unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(
            (all[1].name.as_str(), all[1].excluded, all[1].nps),
            ("n1", true, Some(1234))
        );
        assert_eq!(db.excluded_machines().unwrap(), ["n1"]);
        assert!(db.set_excluded("n1", false).unwrap());
        assert!(db.excluded_machines().unwrap().is_empty());
        assert!(db.flag_once(3, "shard 1").unwrap());
        assert!(!db.flag_once(3, "shard 1").unwrap());
        assert!(db.flag_once(4, "shard 1").unwrap());
    }
}
