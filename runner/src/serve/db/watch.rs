//! The tables of watched branches (`watches`, `watch_tips`, `watch_commits`,
//! `watch_runs`): every query the server makes of them, each parameterised.

use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

use super::runs::now;
use super::Db;

type Result<T> = std::result::Result<T, String>;

fn db_err(e: rusqlite::Error) -> String {
    format!("database: {e}")
}

/// An engine's watch settings (its push token is stored hashed, never shown again).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Watch {
    pub engine: String,
    /// The branch it follows.
    pub branch: String,
    /// The test words for both sides (after `--each`).
    pub each: Vec<String>,
    /// The other words of every run (`--book NAME`).
    pub extra: Vec<String>,
    /// The commit tests' bounds.
    pub elo0: f64,
    pub elo1: f64,
    /// The anchor revision (a tag or a commit; empty: no anchor test), its games and every
    /// how many commits it is played.
    pub anchor: String,
    pub anchor_games: u64,
    pub anchor_every: u64,
    /// Seconds between two looks at the branch.
    pub poll_secs: i64,
    /// Who set it.
    pub set_by: Option<String>,
    /// `false` once unwatched (the history stays).
    pub active: bool,
    /// Whether a look is asked (by the push hook, or a change of the settings) and not done
    /// yet.
    pub poked: bool,
    /// When the branch was last looked at (Unix seconds).
    pub last_poll: i64,
    pub updated: i64,
}

/// A commit of a watched branch and its test.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WatchCommit {
    pub sha: String,
    /// Its first parent.
    pub parent: String,
    pub subject: String,
    pub author: String,
    /// Its commit time (Unix seconds).
    pub time: i64,
    /// Its place along the branch's first-parent line (from 1).
    pub position: i64,
    /// How many commits its push brought.
    pub batch: i64,
    /// Its commit test (`None`: the submission was refused; the event log says why).
    pub run_id: Option<i64>,
}

/// A run a watch submitted besides the commit tests.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WatchRun {
    pub id: i64,
    pub engine: String,
    pub branch: String,
    /// `batch`, `bisection` or `anchor`.
    pub role: String,
    pub run_id: Option<i64>,
    pub base: String,
    pub tip: String,
    /// The tip's position.
    pub position: i64,
    /// Whether its end was acted on.
    pub handled: bool,
    /// A bisect's first bad commit.
    pub found: Option<String>,
    pub created: i64,
}

fn words(text: String) -> Vec<String> {
    serde_json::from_str(&text).unwrap_or_default()
}

const WATCH_COLUMNS: &str = "engine, branch, each_words, extra_words, elo0, elo1, anchor, \
                             anchor_games, anchor_every, poll_secs, set_by, active, last_poll, \
                             updated, token_hash, poked";

fn watch_from(r: &Row) -> rusqlite::Result<(Watch, String)> {
    Ok((
        Watch {
            engine: r.get(0)?,
            branch: r.get(1)?,
            each: words(r.get(2)?),
            extra: words(r.get(3)?),
            elo0: r.get(4)?,
            elo1: r.get(5)?,
            anchor: r.get(6)?,
            anchor_games: r.get::<_, i64>(7)?.max(0) as u64,
            anchor_every: r.get::<_, i64>(8)?.max(0) as u64,
            poll_secs: r.get(9)?,
            set_by: r.get(10)?,
            active: r.get(11)?,
            last_poll: r.get(12)?,
            updated: r.get(13)?,
            poked: r.get(15)?,
        },
        r.get(14)?,
    ))
}

const COMMIT_COLUMNS: &str = "sha, parent, subject, author, time, position, batch, run_id";

fn commit_from(r: &Row) -> rusqlite::Result<WatchCommit> {
    Ok(WatchCommit {
        sha: r.get(0)?,
        parent: r.get(1)?,
        subject: r.get(2)?,
        author: r.get(3)?,
        time: r.get(4)?,
        position: r.get(5)?,
        batch: r.get(6)?,
        run_id: r.get(7)?,
    })
}

const RUN_COLUMNS: &str =
    "id, engine, branch, role, run_id, base, tip, position, handled, found, created";

fn run_from(r: &Row) -> rusqlite::Result<WatchRun> {
    Ok(WatchRun {
        id: r.get(0)?,
        engine: r.get(1)?,
        branch: r.get(2)?,
        role: r.get(3)?,
        run_id: r.get(4)?,
        base: r.get(5)?,
        tip: r.get(6)?,
        position: r.get(7)?,
        handled: r.get(8)?,
        found: r.get(9)?,
        created: r.get(10)?,
    })
}

impl Db {
    /// Stores engine `w.engine`'s watch settings (active); `token_hash`: a new push token's
    /// hash (`None`: the one stored stays; a new watch needs one).
    pub fn set_watch(&self, w: &Watch, token_hash: Option<&str>) -> Result<()> {
        let each = serde_json::to_string(&w.each).map_err(|e| e.to_string())?;
        let extra = serde_json::to_string(&w.extra).map_err(|e| e.to_string())?;
        self.conn
            .execute(
                "INSERT INTO watches (engine, branch, each_words, extra_words, elo0, elo1, \
                 anchor, anchor_games, anchor_every, poll_secs, token_hash, set_by, active, \
                 poked, last_poll, updated) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, coalesce(?11, ''), ?12, 1, 1, \
                 0, ?13) \
                 ON CONFLICT (engine) DO UPDATE SET branch = ?2, each_words = ?3, \
                 extra_words = ?4, elo0 = ?5, elo1 = ?6, anchor = ?7, anchor_games = ?8, \
                 anchor_every = ?9, poll_secs = ?10, \
                 token_hash = coalesce(?11, token_hash), set_by = ?12, active = 1, poked = 1, \
                 updated = ?13",
                params![
                    w.engine,
                    w.branch,
                    each,
                    extra,
                    w.elo0,
                    w.elo1,
                    w.anchor,
                    w.anchor_games as i64,
                    w.anchor_every as i64,
                    w.poll_secs,
                    token_hash,
                    w.set_by,
                    now()
                ],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// Engine `engine`'s watch settings (active or not) and its push token's hash.
    pub fn watch(&self, engine: &str) -> Result<Option<(Watch, String)>> {
        self.conn
            .query_row(
                &format!("SELECT {WATCH_COLUMNS} FROM watches WHERE engine = ?1"),
                [engine],
                watch_from,
            )
            .optional()
            .map_err(db_err)
    }

    /// The active watches whose look is due: poked by the push hook, or not looked at for
    /// their poll interval.
    pub fn due_watches(&self) -> Result<Vec<Watch>> {
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {WATCH_COLUMNS} FROM watches WHERE active = 1 \
                 AND (poked = 1 OR last_poll + poll_secs <= ?1) ORDER BY engine"
            ))
            .map_err(db_err)?;
        let rows = st
            .query_map([now()], |r| watch_from(r).map(|(w, _)| w))
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(db_err)
    }

    /// Stops watching engine `engine` (its history stays); `false` when it was not watched.
    pub fn unwatch(&self, engine: &str) -> Result<bool> {
        let n = self
            .conn
            .execute(
                "UPDATE watches SET active = 0, updated = ?2 WHERE engine = ?1 AND active = 1",
                params![engine, now()],
            )
            .map_err(db_err)?;
        Ok(n == 1)
    }

    /// Asks for a look at engine `engine`'s branch now (the push hook).
    pub fn poke_watch(&self, engine: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE watches SET poked = 1 WHERE engine = ?1 AND active = 1",
                [engine],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// Records a look at engine `engine`'s branch (now; the poke is answered).
    pub fn watch_polled(&self, engine: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE watches SET poked = 0, last_poll = ?2 WHERE engine = ?1",
                params![engine, now()],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// The tip last seen of `engine`'s `branch`, and the commits since its last anchor test.
    pub fn watch_tip(&self, engine: &str, branch: &str) -> Result<Option<(String, i64)>> {
        self.conn
            .query_row(
                "SELECT tip, since_anchor FROM watch_tips WHERE engine = ?1 AND branch = ?2",
                [engine, branch],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(db_err)
    }

    /// Remembers the tip of `engine`'s `branch` and the commits since its last anchor test.
    pub fn set_watch_tip(&self, engine: &str, branch: &str, tip: &str, since: i64) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO watch_tips (engine, branch, tip, since_anchor) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT (engine, branch) \
                 DO UPDATE SET tip = ?3, since_anchor = ?4",
                params![engine, branch, tip, since],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// The position the next commit of `engine`'s `branch` gets.
    pub fn next_watch_position(&self, engine: &str, branch: &str) -> Result<i64> {
        self.conn
            .query_row(
                "SELECT coalesce(max(position), 0) + 1 FROM watch_commits \
                 WHERE engine = ?1 AND branch = ?2",
                [engine, branch],
                |r| r.get(0),
            )
            .map_err(db_err)
    }

    /// Records a commit of `engine`'s `branch` (a commit seen again keeps its first row).
    pub fn insert_watch_commit(&self, engine: &str, branch: &str, c: &WatchCommit) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO watch_commits (engine, branch, sha, parent, subject, \
                 author, time, position, batch, run_id) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    engine, branch, c.sha, c.parent, c.subject, c.author, c.time, c.position,
                    c.batch, c.run_id
                ],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// The commits of `engine`'s `branch` along the line, those whose short or full sha,
    /// subject or author holds `q` when given.
    pub fn watch_commits(
        &self,
        engine: &str,
        branch: &str,
        q: Option<&str>,
    ) -> Result<Vec<WatchCommit>> {
        let like = q.map(str::trim).filter(|q| !q.is_empty()).map(|q| {
            format!(
                "%{}%",
                q.replace('\\', "\\\\")
                    .replace('%', "\\%")
                    .replace('_', "\\_")
            )
        });
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {COMMIT_COLUMNS} FROM watch_commits WHERE engine = ?1 AND branch = ?2 \
                 AND (?3 IS NULL OR sha LIKE ?3 ESCAPE '\\' OR subject LIKE ?3 ESCAPE '\\' \
                 OR author LIKE ?3 ESCAPE '\\') ORDER BY position"
            ))
            .map_err(db_err)?;
        let rows = st
            .query_map(params![engine, branch, like], commit_from)
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(db_err)
    }

    /// Records a run a watch submitted (`run_id` `None`: refused): its row id.
    #[allow(clippy::too_many_arguments)]
    pub fn insert_watch_run(
        &self,
        engine: &str,
        branch: &str,
        role: &str,
        run_id: Option<i64>,
        base: &str,
        tip: &str,
        position: i64,
    ) -> Result<i64> {
        self.conn
            .execute(
                "INSERT INTO watch_runs (engine, branch, role, run_id, base, tip, position, \
                 handled, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    engine,
                    branch,
                    role,
                    run_id,
                    base,
                    tip,
                    position,
                    run_id.is_none(),
                    now()
                ],
            )
            .map_err(db_err)?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The runs of `engine`'s `branch` a watch submitted besides the commit tests (every
    /// engine's and branch's when `engine` is `None`), oldest first; only those whose end
    /// was not acted on yet with `open`.
    pub fn watch_runs(&self, engine: Option<(&str, &str)>, open: bool) -> Result<Vec<WatchRun>> {
        let (e, b) = engine.unzip();
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {RUN_COLUMNS} FROM watch_runs WHERE (?1 IS NULL OR engine = ?1) \
                 AND (?2 IS NULL OR branch = ?2) AND (?3 = 0 OR handled = 0) ORDER BY id"
            ))
            .map_err(db_err)?;
        let rows = st
            .query_map(params![e, b, open], run_from)
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(db_err)
    }

    /// Marks watch run `id`'s end acted on, with the commit it found when it found one.
    pub fn watch_run_handled(&self, id: i64, found: Option<&str>) -> Result<()> {
        self.conn
            .execute(
                "UPDATE watch_runs SET handled = 1, found = ?2 WHERE id = ?1",
                params![id, found],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// The branches of `engine` that have a history (commits or a tip), the newest first.
    pub fn watched_branches(&self, engine: &str) -> Result<Vec<String>> {
        let mut st = self
            .conn
            .prepare("SELECT branch FROM watch_tips WHERE engine = ?1 ORDER BY rowid DESC")
            .map_err(db_err)?;
        let rows = st.query_map([engine], |r| r.get(0)).map_err(db_err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(db_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        (dir, db)
    }

    #[test]
    fn a_watch_is_stored_keeps_its_token_and_unwatching_keeps_the_history() {
        let (_d, db) = db();
        let mut w = Watch {
            engine: "e".into(),
            branch: "main".into(),
            each: vec!["nodes=500".into()],
            elo0: -3.0,
            elo1: 1.0,
            poll_secs: 60,
            ..Watch::default()
        };
        db.set_watch(&w, Some("h1")).unwrap();
        w.branch = "dev".into();
        db.set_watch(&w, None).unwrap();
        let (got, hash) = db.watch("e").unwrap().unwrap();
        assert_eq!((got.branch.as_str(), hash.as_str()), ("dev", "h1"));
        assert_eq!(got.each, w.each);
        assert!(got.active);
        // A new or changed watch is due at once; a look answers it.
        assert_eq!(db.due_watches().unwrap().len(), 1);
        db.watch_polled("e").unwrap();
        assert!(db.due_watches().unwrap().is_empty());
        db.poke_watch("e").unwrap();
        assert_eq!(db.due_watches().unwrap().len(), 1);
        db.set_watch_tip("e", "dev", "abc", 0).unwrap();
        let c = WatchCommit {
            sha: "abc".into(),
            subject: "a 50% faster search".into(),
            author: "ann".into(),
            position: 1,
            batch: 1,
            run_id: Some(7),
            ..WatchCommit::default()
        };
        db.insert_watch_commit("e", "dev", &c).unwrap();
        assert!(db.unwatch("e").unwrap());
        assert!(!db.unwatch("e").unwrap());
        assert!(db.due_watches().unwrap().is_empty());
        assert_eq!(db.watch_commits("e", "dev", None).unwrap(), vec![c]);
        assert_eq!(db.watch_commits("e", "dev", Some("50%")).unwrap().len(), 1);
        assert_eq!(db.watch_commits("e", "dev", Some("5_")).unwrap().len(), 0);
        assert_eq!(db.watch_commits("e", "dev", Some("ANN")).unwrap().len(), 1);
        assert_eq!(db.next_watch_position("e", "dev").unwrap(), 2);
        assert_eq!(db.watched_branches("e").unwrap(), vec!["dev".to_string()]);
    }

    #[test]
    fn watch_runs_are_open_until_handled() {
        let (_d, db) = db();
        let id = db
            .insert_watch_run("e", "main", "batch", Some(3), "a", "b", 4)
            .unwrap();
        db.insert_watch_run("e", "main", "bisection", None, "a", "b", 4)
            .unwrap();
        assert_eq!(db.watch_runs(None, true).unwrap().len(), 1);
        db.watch_run_handled(id, Some("c")).unwrap();
        assert!(db.watch_runs(None, true).unwrap().is_empty());
        let all = db.watch_runs(Some(("e", "main")), false).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].found.as_deref(), Some("c"));
    }
}
