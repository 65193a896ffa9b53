//! The `runs` table: every query the server makes of it, each parameterised.

use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

use super::Db;
use crate::job::Job;
use crate::jobs;

/// The states of a run, as stored and shown.
pub const STATES: &[&str] = &[
    "pending-approval",
    "queued",
    "running",
    "stopped",
    "finished",
    "failed",
];

/// The state of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum State {
    /// It waits for an approver (the scheduler never starts it).
    Pending,
    /// It waits for cores.
    #[default]
    Queued,
    /// Its child plays it.
    Running,
    /// Stopped by a user (it can be resumed).
    Stopped,
    /// Its child ended with exit 0.
    Finished,
    /// Its child failed, or could not start or be built.
    Failed,
}

impl State {
    const ALL: [State; 6] = [
        State::Pending,
        State::Queued,
        State::Running,
        State::Stopped,
        State::Finished,
        State::Failed,
    ];

    /// The state as stored and shown (one of [`STATES`]).
    pub fn as_str(self) -> &'static str {
        STATES[self as usize]
    }

    /// The state stored as `name`; `Err` names it.
    pub fn parse(name: &str) -> std::result::Result<State, String> {
        State::ALL
            .into_iter()
            .find(|s| s.as_str() == name)
            .ok_or_else(|| format!("unknown run state '{name}': one of {}", STATES.join(", ")))
    }

    /// Whether a child plays it or will: queued or running.
    pub fn plays(self) -> bool {
        matches!(self, State::Queued | State::Running)
    }

    /// Whether it can be resumed: stopped or failed.
    pub fn resumable(self) -> bool {
        matches!(self, State::Stopped | State::Failed)
    }
}

/// The state of a run that waits for an approver (the scheduler never starts it).
pub const PENDING: State = State::Pending;

/// The kind of a run: one of the kinds a server runs (`jobs::served`), as its row stores
/// its command.
#[derive(Clone, Copy)]
pub struct Kind(&'static dyn Job);

impl Kind {
    /// The command that names it (`spar COMMAND`), as stored and shown.
    pub fn as_str(self) -> &'static str {
        self.0.command()
    }

    /// The served kind whose command is `name`; `Err` names it.
    pub fn parse(name: &str) -> std::result::Result<Kind, String> {
        jobs::served()
            .into_iter()
            .find(|k| k.command() == name)
            .map(Kind)
            .ok_or_else(|| format!("unknown run kind '{name}'"))
    }
}

impl std::ops::Deref for Kind {
    type Target = dyn Job;

    fn deref(&self) -> &(dyn Job + 'static) {
        self.0
    }
}

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Kind {}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kind({})", self.as_str())
    }
}

/// Both print as stored (`{}` in messages, as the strings did).
macro_rules! shown_as_stored {
    ($($t:ty),*) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl rusqlite::types::FromSql for $t {
            fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                let name = v.as_str()?;
                Self::parse(name).map_err(|e| rusqlite::types::FromSqlError::Other(e.into()))
            }
        }

        impl rusqlite::ToSql for $t {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }
    )*};
}

shown_as_stored!(Kind, State);

/// A test's kind by its command.
#[cfg(test)]
impl From<&str> for Kind {
    fn from(name: &str) -> Kind {
        Kind::parse(name).unwrap()
    }
}

/// A test's state by its name.
#[cfg(test)]
impl From<&str> for State {
    fn from(name: &str) -> State {
        State::parse(name).unwrap()
    }
}

/// A test's runs are of the first served kind unless they say.
#[cfg(test)]
impl Default for Kind {
    fn default() -> Kind {
        Kind(jobs::served()[0])
    }
}

/// One run, as stored.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(Default))]
pub struct Run {
    pub id: i64,
    pub kind: Kind,
    pub words: Vec<String>,
    pub priority: i64,
    pub throughput: i64,
    pub note: String,
    pub state: State,
    pub created: i64,
    pub started: Option<i64>,
    pub finished: Option<i64>,
    pub exit_code: Option<i64>,
    pub stderr_tail: String,
    pub dir: String,
    pub cwd: String,
    pub deleted: bool,
    pub archived: Option<String>,
    /// Who approved it (`None`: it needed no approval, or still waits).
    pub approved_by: Option<String>,
    /// When it was approved (Unix seconds).
    pub approved_at: Option<i64>,
    /// Who submitted it (`None`: a server without accounts then).
    pub owner: Option<String>,
    /// A `--scale-nps` run's clock factor (reference nps / host nps) when its child last
    /// started (`None`: never scaled).
    pub nps_factor: Option<f64>,
    /// The command line with the scaled clocks its child last started with.
    pub scaled_command: Option<String>,
}

/// A new run's fields.
pub struct NewRun<'a> {
    pub kind: &'a str,
    pub words: &'a [String],
    pub priority: i64,
    pub throughput: i64,
    pub note: &'a str,
    pub cwd: &'a str,
    /// Who submitted it (`None`: a server without accounts).
    pub owner: Option<&'a str>,
    /// Whether it waits for an approver ([`PENDING`]) rather than being queued.
    pub waits: bool,
}

#[cfg(test)]
impl<'a> NewRun<'a> {
    /// A run of `kind` with `words` for the tests: priority 0, throughput 100, no note, cwd
    /// `/`, no owner, queued at once.
    pub fn of(kind: &'a str, words: &'a [String]) -> NewRun<'a> {
        NewRun {
            kind,
            words,
            priority: 0,
            throughput: 100,
            note: "",
            cwd: "/",
            owner: None,
            waits: false,
        }
    }
}

/// What `GET /api/runs` and the search page filter by.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct Filter {
    pub kind: Option<String>,
    pub state: Option<String>,
    /// Text in the words (as shown: separated by spaces) or the note.
    pub q: Option<String>,
    /// A registered engine the run names.
    pub engine: Option<String>,
    /// A revision of a registered engine the run names: the branch, tag or sha as given, or
    /// the start of the commit it resolved to.
    pub branch: Option<String>,
    /// Who submitted it.
    pub author: Option<String>,
    /// `H1`, `H0` or `none` (no verdict): of a run that ended (its stored numbers).
    pub verdict: Option<String>,
    /// Created on or after this UTC day (`YYYY-MM-DD`).
    pub from: Option<String>,
    /// Created on or before this UTC day (`YYYY-MM-DD`).
    pub to: Option<String>,
    /// At most this many, newest first (default 200).
    pub limit: Option<i64>,
}

/// The verdicts a search can ask for.
pub const VERDICTS: &[&str] = &["H1", "H0", "none"];

impl Filter {
    /// A field's value, `None` when it is missing or blank.
    fn given(v: &Option<String>) -> Option<&str> {
        v.as_deref().map(str::trim).filter(|s| !s.is_empty())
    }

    /// The filter checked: its created-time window (`since`, `until`), or the bad field
    /// and what to give.
    pub fn check(&self) -> std::result::Result<(Option<i64>, Option<i64>), String> {
        if let Some(v) = Self::given(&self.verdict) {
            if !VERDICTS.contains(&v) {
                return Err(format!("verdict '{v}': one of {}", VERDICTS.join(", ")));
            }
        }
        if let Some(s) = Self::given(&self.state) {
            if !STATES.contains(&s) {
                return Err(format!("state '{s}': one of {}", STATES.join(", ")));
            }
        }
        crate::serve::days::window(
            self.from.as_deref().unwrap_or(""),
            self.to.as_deref().unwrap_or(""),
        )
    }
}

const COLUMNS: &str = "id, kind, words, priority, throughput, note, state, created, started, \
                       finished, exit_code, stderr_tail, dir, cwd, deleted, archived, approved_by, \
                       approved_at, owner, nps_factor, scaled_command";

fn from_row(r: &Row) -> rusqlite::Result<Run> {
    let words: String = r.get(2)?;
    Ok(Run {
        id: r.get(0)?,
        kind: r.get(1)?,
        words: serde_json::from_str(&words).unwrap_or_default(),
        priority: r.get(3)?,
        throughput: r.get(4)?,
        note: r.get(5)?,
        state: r.get(6)?,
        created: r.get(7)?,
        started: r.get(8)?,
        finished: r.get(9)?,
        exit_code: r.get(10)?,
        stderr_tail: r.get(11)?,
        dir: r.get(12)?,
        cwd: r.get(13)?,
        deleted: r.get(14)?,
        archived: r.get(15)?,
        approved_by: r.get(16)?,
        approved_at: r.get(17)?,
        owner: r.get(18)?,
        nps_factor: r.get(19)?,
        scaled_command: r.get(20)?,
    })
}

/// Seconds since the Unix epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

type Result<T> = std::result::Result<T, String>;

fn db_err(e: rusqlite::Error) -> String {
    format!("database: {e}")
}

impl Db {
    /// Stores a new run (queued, or waiting for an approver); returns it. Its directory is
    /// what `claim_dir(id)` made for the id given: `None` when that id's directory exists
    /// already, and the next id is tried — run ids never reuse a directory.
    pub fn insert(
        &self,
        new: &NewRun,
        claim_dir: impl Fn(i64) -> std::result::Result<Option<String>, String>,
    ) -> Result<Run> {
        let words = serde_json::to_string(new.words).map_err(|e| e.to_string())?;
        self.atomically(|db| {
            let id = loop {
                db.conn
                    .execute(
                        "INSERT INTO runs (kind, words, priority, throughput, note, state, \
                         created, dir, cwd, owner) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?9, ?6, '', ?7, ?8)",
                        params![
                            new.kind,
                            words,
                            new.priority,
                            new.throughput,
                            new.note,
                            now(),
                            new.cwd,
                            new.owner,
                            if new.waits { PENDING } else { State::Queued }
                        ],
                    )
                    .map_err(db_err)?;
                let id = db.conn.last_insert_rowid();
                if let Some(dir) = claim_dir(id)? {
                    db.conn
                        .execute("UPDATE runs SET dir = ?1 WHERE id = ?2", params![dir, id])
                        .map_err(db_err)?;
                    break id;
                }
                // The id's directory exists already (an orphan, a restored backup): the
                // id is left behind (AUTOINCREMENT never gives it again), the next taken.
                db.conn
                    .execute("DELETE FROM runs WHERE id = ?1", [id])
                    .map_err(db_err)?;
            };
            db.get(id)?
                .ok_or_else(|| "the new run vanished".to_string())
        })
    }

    /// The run `id` (deleted ones too).
    pub fn get(&self, id: i64) -> Result<Option<Run>> {
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM runs WHERE id = ?1"),
                [id],
                from_row,
            )
            .optional()
            .map_err(db_err)
    }

    /// The runs that are not deleted and match `f`, newest first.
    pub fn list(&self, f: &Filter) -> Result<Vec<Run>> {
        let (since, until) = f.check()?;
        let like = Filter::given(&f.q).map(|q| {
            let escaped = q
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            format!("%{escaped}%")
        });
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM runs WHERE deleted = 0 \
                 AND (?1 IS NULL OR kind = ?1) AND (?2 IS NULL OR state = ?2) \
                 AND (?3 IS NULL OR replace(words, '\",\"', ' ') LIKE ?3 ESCAPE '\\' \
                      OR note LIKE ?3 ESCAPE '\\') \
                 AND (?5 IS NULL OR EXISTS (SELECT 1 FROM run_engines e \
                      WHERE e.run_id = runs.id AND e.engine = ?5)) \
                 AND (?6 IS NULL OR EXISTS (SELECT 1 FROM run_engines e \
                      WHERE e.run_id = runs.id AND (e.rev = ?6 \
                      OR (length(?6) >= 4 AND substr(e.sha, 1, length(?6)) = lower(?6))))) \
                 AND (?7 IS NULL OR owner = ?7) \
                 AND (?8 IS NULL OR (?8 = 'none' AND state IN ('finished', 'failed', 'stopped') \
                      AND COALESCE(json_extract(last_live, '$.verdict'), '') = '') \
                      OR json_extract(last_live, '$.verdict') = ?8) \
                 AND (?9 IS NULL OR created >= ?9) AND (?10 IS NULL OR created <= ?10) \
                 ORDER BY id DESC LIMIT ?4"
            ))
            .map_err(db_err)?;
        let rows = stmt
            .query_map(
                params![
                    Filter::given(&f.kind),
                    Filter::given(&f.state),
                    like,
                    f.limit.unwrap_or(200).clamp(1, 10_000),
                    Filter::given(&f.engine),
                    Filter::given(&f.branch),
                    Filter::given(&f.author),
                    Filter::given(&f.verdict),
                    since,
                    until,
                ],
                from_row,
            )
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// The runs the scheduler looks after: queued or running, not deleted, oldest first.
    pub fn active(&self) -> Result<Vec<Run>> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM runs WHERE deleted = 0 \
                 AND state IN ('queued', 'running') ORDER BY id"
            ))
            .map_err(db_err)?;
        let rows = stmt.query_map([], from_row).map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// Every run directory the database knows (deleted runs' too).
    pub fn dirs(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare("SELECT dir FROM runs").map_err(db_err)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(db_err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db_err)
    }

    /// Sets the state of run `id`.
    pub fn set_state(&self, id: i64, state: State) -> Result<()> {
        self.exec(
            "UPDATE runs SET state = ?1 WHERE id = ?2",
            params![state, id],
        )
    }

    /// A child started for run `id`.
    pub fn started(&self, id: i64) -> Result<()> {
        self.exec(
            "UPDATE runs SET state = 'running', started = ?1, finished = NULL, exit_code = NULL \
             WHERE id = ?2",
            params![now(), id],
        )
    }

    /// Records the clock factor and the scaled command line run `id`'s child starts with.
    pub fn set_scaled(&self, id: i64, factor: f64, command: &str) -> Result<()> {
        self.exec(
            "UPDATE runs SET nps_factor = ?1, scaled_command = ?2 WHERE id = ?3",
            params![factor, command, id],
        )
    }

    /// Run `id`'s child ended: its new state, exit code and last stderr lines.
    pub fn ended(&self, id: i64, state: State, code: Option<i64>, tail: &str) -> Result<()> {
        let finished = matches!(state, State::Finished | State::Failed).then(now);
        self.exec(
            "UPDATE runs SET state = ?1, exit_code = ?2, stderr_tail = ?3, finished = ?4 \
             WHERE id = ?5",
            params![state, code, tail, finished, id],
        )
    }

    /// Approves run `id` if it waits: it is queued, with who approved it and when; false
    /// when it does not wait (nothing changes).
    pub fn approve(&self, id: i64, by: &str) -> Result<bool> {
        self.conn
            .execute(
                "UPDATE runs SET state = 'queued', approved_by = ?2, approved_at = ?3 \
                 WHERE id = ?1 AND state = ?4",
                params![id, by, now(), PENDING],
            )
            .map(|n| n > 0)
            .map_err(db_err)
    }

    /// Sets run `id`'s priority and throughput.
    pub fn set_priority(&self, id: i64, priority: i64, throughput: i64) -> Result<()> {
        self.exec(
            "UPDATE runs SET priority = ?1, throughput = ?2 WHERE id = ?3",
            params![priority, throughput, id],
        )
    }

    /// Sets run `id`'s note.
    pub fn set_note(&self, id: i64, note: &str) -> Result<()> {
        self.exec("UPDATE runs SET note = ?1 WHERE id = ?2", params![note, id])
    }

    /// Marks run `id` deleted, its directory moved to `archived`.
    pub fn set_deleted(&self, id: i64, archived: &str) -> Result<()> {
        self.exec(
            "UPDATE runs SET deleted = 1, archived = ?1 WHERE id = ?2",
            params![archived, id],
        )
    }

    fn exec(&self, sql: &str, p: impl rusqlite::Params) -> Result<()> {
        self.conn.execute(sql, p).map(|_| ()).map_err(db_err)
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
    fn kinds_and_states_are_stored_as_their_names_and_an_unknown_one_is_named() {
        let (_d, db) = db();
        let words = vec!["--games".to_string(), "2".to_string()];
        let new = NewRun::of("sprt", &words);
        let r = db.insert(&new, |id| Ok(Some(format!("/d/{id}")))).unwrap();
        assert_eq!((r.kind.as_str(), r.state), ("sprt", State::Queued));
        db.set_state(r.id, State::Stopped).unwrap();
        let stored: (String, String) = db
            .conn
            .query_row("SELECT kind, state FROM runs WHERE id = ?1", [r.id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(stored, ("sprt".to_string(), "stopped".to_string()));
        let json = serde_json::to_value(db.get(r.id).unwrap().unwrap()).unwrap();
        assert_eq!(
            (&json["kind"], &json["state"]),
            (&"sprt".into(), &"stopped".into())
        );
        for name in STATES {
            assert_eq!(State::parse(name).unwrap().as_str(), *name);
        }
        // A row written by another spar, of a kind or state this one does not know.
        for (column, value) in [("kind", "texel"), ("state", "paused")] {
            db.conn
                .execute(&format!("UPDATE runs SET {column} = ?1"), [value])
                .unwrap();
            let e = db.get(r.id).unwrap_err();
            assert!(
                e.contains(&format!("unknown run {column} '{value}'")),
                "{e}"
            );
            assert!(db.list(&Filter::default()).is_err());
            db.conn
                .execute("UPDATE runs SET kind = 'sprt', state = 'queued'", [])
                .unwrap();
        }
    }

    #[test]
    fn an_id_whose_directory_exists_is_skipped_and_never_given_again() {
        let (_d, db) = db();
        let words = vec!["--games".to_string(), "2".to_string()];
        let new = NewRun::of("match", &words);
        // Ids 1 and 2 have directories already (orphans): the run gets 3.
        let r = db
            .insert(&new, |id| Ok((id > 2).then(|| format!("/d/{id}"))))
            .unwrap();
        assert_eq!((r.id, r.dir.as_str()), (3, "/d/3"));
        assert!(db.get(1).unwrap().is_none() && db.get(2).unwrap().is_none());
        let r = db.insert(&new, |id| Ok(Some(format!("/d/{id}")))).unwrap();
        assert_eq!(r.id, 4);
        // A failure to make the directory stores nothing: the id is still free.
        let e = db.insert(&new, |_| Err("disk full".into())).unwrap_err();
        assert_eq!(e, "disk full");
        assert!(db.get(5).unwrap().is_none());
        let r = db.insert(&new, |id| Ok(Some(id.to_string()))).unwrap();
        assert_eq!(r.id, 5);
    }

    #[test]
    fn runs_are_stored_listed_and_filtered() {
        let (_d, db) = db();
        let words = vec!["--engine".to_string(), "name=dev".to_string()];
        let new = NewRun {
            priority: 1,
            note: "rfp 50%",
            ..NewRun::of("sprt", &words)
        };
        let a = db
            .insert(&new, |id| Ok(Some(format!("/d/runs/{id}"))))
            .unwrap();
        assert_eq!(a.dir, format!("/d/runs/{}", a.id));
        assert_eq!(a.words, words);
        let b = db
            .insert(
                &NewRun {
                    kind: "match",
                    note: "",
                    ..new
                },
                |id| Ok(Some(id.to_string())),
            )
            .unwrap();
        let all = db.list(&Filter::default()).unwrap();
        assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), [b.id, a.id]);
        let f = Filter {
            kind: Some("sprt".into()),
            ..Filter::default()
        };
        assert_eq!(db.list(&f).unwrap().len(), 1);
        // `%` in the text is a character, not a wildcard.
        let f = Filter {
            q: Some("50%".into()),
            ..Filter::default()
        };
        assert_eq!(db.list(&f).unwrap()[0].id, a.id);
        let f = Filter {
            q: Some("5_%".into()),
            ..Filter::default()
        };
        assert!(db.list(&f).unwrap().is_empty());
        db.set_deleted(a.id, "/d/archive/1").unwrap();
        assert_eq!(db.list(&Filter::default()).unwrap().len(), 1);
        assert!(db.get(a.id).unwrap().unwrap().deleted);
    }

    #[test]
    fn a_waiting_run_is_not_active_until_approved_once() {
        let (_d, db) = db();
        let words = vec!["nodes=300".to_string()];
        let new = NewRun {
            owner: Some("ann"),
            waits: true,
            ..NewRun::of("match", &words)
        };
        let r = db.insert(&new, |id| Ok(Some(id.to_string()))).unwrap();
        assert_eq!(r.state, PENDING);
        assert!(db.active().unwrap().is_empty());
        assert!(db.approve(r.id, "bob").unwrap());
        let r = db.get(r.id).unwrap().unwrap();
        assert_eq!(
            (r.state.as_str(), r.approved_by.as_deref()),
            ("queued", Some("bob"))
        );
        assert!(r.approved_at.is_some());
        assert_eq!(db.active().unwrap().len(), 1);
        // A second approval changes nothing.
        assert!(!db.approve(r.id, "carl").unwrap());
        assert_eq!(
            db.get(r.id).unwrap().unwrap().approved_by.as_deref(),
            Some("bob")
        );
    }
}
