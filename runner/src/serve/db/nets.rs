//! The `nets`, `net_defaults` and `run_nets` tables: every query the server makes of
//! them, each parameterised.

use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

use super::runs::now;
use super::Db;

/// A stored net: a name for a file kept once by its SHA-256.
#[derive(Clone, Debug, Serialize)]
pub struct Net {
    pub name: String,
    /// SHA-256 of the file, hex (its name under `DATA/nets/`).
    pub sha: String,
    /// Its size in bytes.
    pub size: i64,
    /// The engine it is for: a registered engine's name, or `embedded` (spar's own).
    pub engine: String,
    /// Who uploaded it (`None`: a server without accounts then).
    pub uploader: Option<String>,
    /// When (Unix seconds).
    pub created: i64,
}

/// The net one side of a run used.
#[derive(Clone, Debug, Serialize)]
pub struct RunNet {
    /// Which `--engine` of the words, from 0.
    pub position: i64,
    /// Its `name=` (or `engine N`).
    pub variant: String,
    pub net: String,
    pub sha: String,
    /// `named` (`net=NAME` in its words) or `default` (its engine's default net).
    pub how: String,
}

type Result<T> = std::result::Result<T, String>;

fn db_err(e: rusqlite::Error) -> String {
    format!("database: {e}")
}

fn net_from(r: &Row) -> rusqlite::Result<Net> {
    Ok(Net {
        name: r.get(0)?,
        sha: r.get(1)?,
        size: r.get(2)?,
        engine: r.get(3)?,
        uploader: r.get(4)?,
        created: r.get(5)?,
    })
}

const NET_COLUMNS: &str = "name, sha, size, engine, uploader, created";

impl Db {
    /// Stores a net's name; `Ok(false)` when the name is taken.
    pub fn insert_net(
        &self,
        name: &str,
        sha: &str,
        size: i64,
        engine: &str,
        uploader: Option<&str>,
    ) -> Result<bool> {
        let n = self
            .conn
            .execute(
                "INSERT INTO nets (name, sha, size, engine, uploader, created) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (name) DO NOTHING",
                params![name, sha, size, engine, uploader, now()],
            )
            .map_err(db_err)?;
        Ok(n == 1)
    }

    /// The net `name`.
    pub fn net(&self, name: &str) -> Result<Option<Net>> {
        self.conn
            .query_row(
                &format!("SELECT {NET_COLUMNS} FROM nets WHERE name = ?1"),
                params![name],
                net_from,
            )
            .optional()
            .map_err(db_err)
    }

    /// Every net, by name.
    pub fn nets(&self) -> Result<Vec<Net>> {
        let mut st = self
            .conn
            .prepare(&format!("SELECT {NET_COLUMNS} FROM nets ORDER BY name"))
            .map_err(db_err)?;
        let rows = st.query_map([], net_from).map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// Removes the name `name` (its file is the caller's); how many names still have its
    /// sha after.
    pub fn delete_net(&self, name: &str, sha: &str) -> Result<i64> {
        self.conn
            .execute("DELETE FROM nets WHERE name = ?1", params![name])
            .map_err(db_err)?;
        self.conn
            .query_row(
                "SELECT count(*) FROM nets WHERE sha = ?1",
                params![sha],
                |r| r.get(0),
            )
            .map_err(db_err)
    }

    /// Every run (any state, deleted ones too: their files are archived) that used the
    /// net `name`, by id. (A name a run used is never removed, so its file stays.)
    pub fn runs_using_net(&self, name: &str) -> Result<Vec<i64>> {
        let mut st = self
            .conn
            .prepare("SELECT DISTINCT run_id FROM run_nets WHERE net = ?1 ORDER BY run_id")
            .map_err(db_err)?;
        let rows = st.query_map(params![name], |r| r.get(0)).map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// Sets the default net of `engine` (a registered engine's name or `embedded`).
    pub fn set_default_net(&self, engine: &str, net: &str, by: Option<&str>) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO net_defaults (engine, net, set_by, time) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (engine) DO UPDATE SET net = ?2, set_by = ?3, time = ?4",
                params![engine, net, by, now()],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// Clears the default net of `engine`.
    pub fn clear_default_net(&self, engine: &str) -> Result<()> {
        self.conn
            .execute(
                "DELETE FROM net_defaults WHERE engine = ?1",
                params![engine],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// The default net of `engine`, when it has one.
    pub fn default_net(&self, engine: &str) -> Result<Option<Net>> {
        self.conn
            .query_row(
                "SELECT n.name, n.sha, n.size, n.engine, n.uploader, n.created \
                 FROM net_defaults d JOIN nets n ON n.name = d.net WHERE d.engine = ?1",
                params![engine],
                net_from,
            )
            .optional()
            .map_err(db_err)
    }

    /// Every engine's default net: (engine, net name), by engine.
    pub fn default_nets(&self) -> Result<Vec<(String, String)>> {
        let mut st = self
            .conn
            .prepare("SELECT engine, net FROM net_defaults ORDER BY engine")
            .map_err(db_err)?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// Stores the nets run `run_id` used.
    pub fn insert_run_nets(&self, run_id: i64, rows: &[RunNet]) -> Result<()> {
        for r in rows {
            self.conn
                .execute(
                    "INSERT INTO run_nets (run_id, position, variant, net, sha, how) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![run_id, r.position, r.variant, r.net, r.sha, r.how],
                )
                .map_err(db_err)?;
        }
        Ok(())
    }

    /// The nets run `id` used, by position.
    pub fn run_nets(&self, id: i64) -> Result<Vec<RunNet>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT position, variant, net, sha, how FROM run_nets WHERE run_id = ?1 \
                 ORDER BY position",
            )
            .map_err(db_err)?;
        let rows = st
            .query_map(params![id], |r| {
                Ok(RunNet {
                    position: r.get(0)?,
                    variant: r.get(1)?,
                    net: r.get(2)?,
                    sha: r.get(3)?,
                    how: r.get(4)?,
                })
            })
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }
}
