//! The `events` table: the server's log of what happened to runs (submitted, started,
//! stopped, re-balanced, finished, failed, deleted…), to itself (started, stopped, an
//! orphan run directory, its disk nearly full and space back) and to the registered
//! engines (registered, changed, removed; each build started, built, taken from the cache,
//! failed). Written by the scheduler, the
//! actions, the engines and the server's start; read by `/events` and `/api/events`,
//! newest first.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::runs::now;
use super::Db;

/// The kinds of event.
pub const KINDS: &[&str] = &[
    "submit",
    "approve",
    "start",
    "stop",
    "resume",
    "finish",
    "failure",
    "rebalance",
    "priority",
    "delete",
    "server-start",
    "server-stop",
    "orphan",
    "engine",
    "build-start",
    "build",
    "build-cached",
    "build-failure",
    "net",
    "machine",
    "disk",
    "watch",
];

/// One event.
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    pub id: i64,
    pub time: i64,
    pub run: Option<i64>,
    pub kind: String,
    pub message: String,
}

/// What `/events` and `/api/events` filter by (the URL's query).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct EventFilter {
    /// Only this run's events (empty: any run, as the page's form sends it).
    #[serde(default, deserialize_with = "empty_as_none")]
    pub run: Option<i64>,
    /// Only this kind.
    pub kind: Option<String>,
    /// At most this many, newest first (default 200, at most 10 000).
    pub limit: Option<i64>,
}

/// A number, or none for an empty or missing value.
fn empty_as_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let text: Option<String> = Option::deserialize(d)?;
    match text.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(t) => t
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("run '{t}': not a run number"))),
    }
}

fn db_err(e: rusqlite::Error) -> String {
    format!("database: {e}")
}

impl Db {
    /// Records an event now.
    pub fn event(&self, run: Option<i64>, kind: &str, message: &str) -> Result<(), String> {
        self.conn
            .execute(
                "INSERT INTO events (time, run, kind, message) VALUES (?1, ?2, ?3, ?4)",
                params![now(), run, kind, message],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// The events that match `f`, newest first.
    pub fn events(&self, f: &EventFilter) -> Result<Vec<Event>, String> {
        let kind = f.kind.as_deref().filter(|k| !k.is_empty());
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, time, run, kind, message FROM events \
                 WHERE (?1 IS NULL OR run = ?1) AND (?2 IS NULL OR kind = ?2) \
                 ORDER BY id DESC LIMIT ?3",
            )
            .map_err(db_err)?;
        let rows = stmt
            .query_map(
                params![f.run, kind, f.limit.unwrap_or(200).clamp(1, 10_000)],
                |r| {
                    Ok(Event {
                        id: r.get(0)?,
                        time: r.get(1)?,
                        run: r.get(2)?,
                        kind: r.get(3)?,
                        message: r.get(4)?,
                    })
                },
            )
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// Stores what a run's files said when its child ended (JSON), for the pages.
    pub fn set_last_live(&self, id: i64, live: &str) -> Result<(), String> {
        self.conn
            .execute(
                "UPDATE runs SET last_live = ?1 WHERE id = ?2",
                params![live, id],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// Forgets run `id`'s stored numbers (a child started: its files change again).
    pub fn clear_last_live(&self, id: i64) -> Result<(), String> {
        self.conn
            .execute("UPDATE runs SET last_live = NULL WHERE id = ?1", [id])
            .map(|_| ())
            .map_err(db_err)
    }

    /// The numbers stored for run `id` when it is not playing (not queued or running).
    pub fn last_live(&self, id: i64) -> Result<Option<String>, String> {
        self.conn
            .query_row(
                "SELECT last_live FROM runs WHERE id = ?1 \
                 AND state NOT IN ('queued', 'running')",
                [id],
                |r| r.get(0),
            )
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(db_err(e)),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_listed_newest_first_and_filtered() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        db.event(None, "server-start", "up").unwrap();
        db.event(Some(1), "start", "run 1 starts").unwrap();
        db.event(Some(2), "start", "run 2 starts").unwrap();
        db.event(Some(1), "finish", "run 1 finished").unwrap();
        let all = db.events(&EventFilter::default()).unwrap();
        assert_eq!(
            all.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
            ["finish", "start", "start", "server-start"]
        );
        let one = EventFilter {
            run: Some(1),
            ..EventFilter::default()
        };
        assert_eq!(db.events(&one).unwrap().len(), 2);
        let starts = EventFilter {
            kind: Some("start".into()),
            limit: Some(1),
            ..EventFilter::default()
        };
        let got = db.events(&starts).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].run, Some(2));
    }
}
