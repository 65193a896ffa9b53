//! The `actions` table: who did what, when, to which run, engine or account (the actions
//! log of `/actions` and `/api/actions`); every query parameterised. What is recorded, and
//! its kinds, is `serve/action_log.rs`'s business.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::runs::now;
use super::Db;

/// One recorded action.
#[derive(Clone, Debug, Serialize)]
pub struct ActionRow {
    pub id: i64,
    /// Unix seconds.
    pub time: i64,
    /// The account's name, `-` on a server without accounts (or for nobody signed in).
    pub who: String,
    /// Its kind (`submit`, `approve`, …).
    pub action: String,
    /// What it concerns: `run 7`, `engine NAME`, `user NAME`.
    pub target: String,
    pub detail: String,
}

/// What `/actions` and `/api/actions` filter by (the URL's query); empty fields match all.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ActionFilter {
    /// Only this account's actions.
    #[serde(default)]
    pub user: String,
    /// Only this kind.
    #[serde(default)]
    pub action: String,
    /// Only those on this target (`run 7`, `engine dev`, `user ann`).
    #[serde(default)]
    pub target: String,
    /// From this day on (`YYYY-MM-DD`, UTC).
    #[serde(default)]
    pub from: String,
    /// Up to and including this day (`YYYY-MM-DD`, UTC).
    #[serde(default)]
    pub to: String,
    /// At most this many, newest first (default 200, at most 10 000).
    pub limit: Option<i64>,
}

fn db_err(e: rusqlite::Error) -> String {
    format!("database: {e}")
}

fn some(text: &str) -> Option<&str> {
    Some(text.trim()).filter(|t| !t.is_empty())
}

impl Db {
    /// Records an action now.
    pub fn add_action(
        &self,
        who: &str,
        action: &str,
        target: &str,
        detail: &str,
    ) -> Result<(), String> {
        self.conn
            .execute(
                "INSERT INTO actions (time, who, action, target, detail) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![now(), who, action, target, detail],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// The actions that match `f` between the Unix times `since` and `until` (inclusive,
    /// `None`: unbounded), newest first.
    pub fn actions(
        &self,
        f: &ActionFilter,
        since: Option<i64>,
        until: Option<i64>,
    ) -> Result<Vec<ActionRow>, String> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, time, who, action, target, detail FROM actions \
                 WHERE (?1 IS NULL OR who = ?1) AND (?2 IS NULL OR action = ?2) \
                 AND (?3 IS NULL OR target = ?3) AND (?4 IS NULL OR time >= ?4) \
                 AND (?5 IS NULL OR time <= ?5) ORDER BY id DESC LIMIT ?6",
            )
            .map_err(db_err)?;
        let rows = stmt
            .query_map(
                params![
                    some(&f.user),
                    some(&f.action),
                    some(&f.target),
                    since,
                    until,
                    f.limit.unwrap_or(200).clamp(1, 10_000)
                ],
                |r| {
                    Ok(ActionRow {
                        id: r.get(0)?,
                        time: r.get(1)?,
                        who: r.get(2)?,
                        action: r.get(3)?,
                        target: r.get(4)?,
                        detail: r.get(5)?,
                    })
                },
            )
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_are_filtered_by_user_kind_target_and_time() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        db.add_action("ann", "submit", "run 1", "spar match")
            .unwrap();
        db.add_action("bob", "approve", "run 1", "").unwrap();
        db.add_action("ann", "submit", "run 10", "").unwrap();
        let all = db.actions(&ActionFilter::default(), None, None).unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].target, "run 10", "newest first");
        let f = ActionFilter {
            user: "ann".into(),
            ..ActionFilter::default()
        };
        assert_eq!(db.actions(&f, None, None).unwrap().len(), 2);
        let f = ActionFilter {
            target: "run 1".into(),
            action: "approve".into(),
            ..ActionFilter::default()
        };
        let got = db.actions(&f, None, None).unwrap();
        assert_eq!((got.len(), got[0].who.as_str()), (1, "bob"));
        let f = ActionFilter::default();
        assert!(db.actions(&f, Some(now() + 100), None).unwrap().is_empty());
        assert!(db.actions(&f, None, Some(now() - 100)).unwrap().is_empty());
        assert_eq!(
            db.actions(&f, Some(now() - 100), Some(now() + 100))
                .unwrap()
                .len(),
            3
        );
    }
}
