//! The accounts' tables: `users`, `sessions`, `api_tokens`, and a run's `owner`; every
//! query parameterised. Tokens are stored as their SHA-256 hashes only.

use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

use super::runs::now;
use super::Db;

/// One account.
#[derive(Clone, Debug, Serialize)]
pub struct User {
    pub id: i64,
    pub name: String,
    /// The argon2id PHC string.
    #[serde(skip)]
    pub hash: String,
    /// `user`, `approver` or `admin`.
    pub role: String,
    /// `pending` (cannot sign in) or `active`.
    pub state: String,
    pub created: i64,
    /// Failed sign-ins in a row.
    pub failed_logins: i64,
    /// No sign-in is tried before this Unix time.
    pub locked_until: i64,
    /// Whether an admin trusts the account: its runs need no approval.
    pub trusted: bool,
}

/// One API token, as its owner's page lists it (never the token itself).
#[derive(Clone, Debug, Serialize)]
pub struct Token {
    pub id: i64,
    pub label: String,
    pub created: i64,
    pub last_used: Option<i64>,
}

type Result<T> = std::result::Result<T, String>;

fn db_err(e: rusqlite::Error) -> String {
    format!("database: {e}")
}

const COLUMNS: &str = "id, name, hash, role, state, created, failed_logins, locked_until, trusted";

fn from_row(r: &Row) -> rusqlite::Result<User> {
    Ok(User {
        id: r.get(0)?,
        name: r.get(1)?,
        hash: r.get(2)?,
        role: r.get(3)?,
        state: r.get(4)?,
        created: r.get(5)?,
        failed_logins: r.get(6)?,
        locked_until: r.get(7)?,
        trusted: r.get(8)?,
    })
}

impl Db {
    /// Whether an active admin exists: the server then has accounts.
    pub fn has_admin(&self) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM users WHERE role = 'admin' AND state = 'active')",
                [],
                |r| r.get(0),
            )
            .map_err(db_err)
    }

    /// Stores a new account; `Ok(None)` when the name is taken.
    pub fn add_user(
        &self,
        name: &str,
        hash: &str,
        role: &str,
        state: &str,
    ) -> Result<Option<User>> {
        let added = self
            .conn
            .execute(
                "INSERT OR IGNORE INTO users (name, hash, role, state, created) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![name, hash, role, state, now()],
            )
            .map_err(db_err)?;
        if added == 0 {
            return Ok(None);
        }
        self.user(name)
    }

    /// The account `name`.
    pub fn user(&self, name: &str) -> Result<Option<User>> {
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM users WHERE name = ?1"),
                [name],
                from_row,
            )
            .optional()
            .map_err(db_err)
    }

    /// Every account, pending ones first, then by name.
    pub fn users(&self) -> Result<Vec<User>> {
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM users ORDER BY state = 'active', name"
            ))
            .map_err(db_err)?;
        let rows = st.query_map([], from_row).map_err(db_err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(db_err)
    }

    /// Sets an account's state and role; false when there is no such account.
    pub fn set_user(&self, name: &str, role: &str, state: &str) -> Result<bool> {
        self.conn
            .execute(
                "UPDATE users SET role = ?2, state = ?3 WHERE name = ?1",
                params![name, role, state],
            )
            .map(|n| n > 0)
            .map_err(db_err)
    }

    /// Marks an account trusted or not; false when there is no such account.
    pub fn set_trusted(&self, name: &str, trusted: bool) -> Result<bool> {
        self.conn
            .execute(
                "UPDATE users SET trusted = ?2 WHERE name = ?1",
                params![name, trusted],
            )
            .map(|n| n > 0)
            .map_err(db_err)
    }

    /// Removes a pending account (a rejected sign-up); false when there is none.
    pub fn remove_pending(&self, name: &str) -> Result<bool> {
        self.conn
            .execute(
                "DELETE FROM users WHERE name = ?1 AND state = 'pending'",
                [name],
            )
            .map(|n| n > 0)
            .map_err(db_err)
    }

    /// Records a sign-in's outcome: a success clears the failures; a failure counts, and
    /// from the fifth in a row on locks the account for 30 s, doubled at each further one
    /// (at most 15 minutes). `Some(seconds)`: this failure locked the account that long.
    pub fn login_outcome(&self, id: i64, ok: bool) -> Result<Option<i64>> {
        if ok {
            self.conn
                .execute(
                    "UPDATE users SET failed_logins = 0, locked_until = 0 WHERE id = ?1",
                    [id],
                )
                .map_err(db_err)?;
            return Ok(None);
        }
        let failed: i64 = self
            .conn
            .query_row(
                "UPDATE users SET failed_logins = failed_logins + 1 WHERE id = ?1 \
                 RETURNING failed_logins",
                [id],
                |r| r.get(0),
            )
            .map_err(db_err)?;
        if failed >= FREE_FAILURES {
            let wait = (30i64 << (failed - FREE_FAILURES).min(5)).min(900);
            self.conn
                .execute(
                    "UPDATE users SET locked_until = ?2 WHERE id = ?1",
                    params![id, now() + wait],
                )
                .map_err(db_err)?;
            return Ok(Some(wait));
        }
        Ok(None)
    }

    /// Stores a session (the hash of its token) of `user_id` until `expires`.
    pub fn add_session(&self, hash: &str, user_id: i64, expires: i64) -> Result<()> {
        self.conn
            .execute("DELETE FROM sessions WHERE expires < ?1", [now()])
            .map_err(db_err)?;
        self.conn
            .execute(
                "INSERT INTO sessions (hash, user_id, created, expires) VALUES (?1, ?2, ?3, ?4)",
                params![hash, user_id, now(), expires],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// The active account of an unexpired session.
    pub fn session_user(&self, hash: &str) -> Result<Option<User>> {
        self.conn
            .query_row(
                &format!(
                    "SELECT {} FROM users u JOIN sessions s ON s.user_id = u.id \
                     WHERE s.hash = ?1 AND s.expires >= ?2 AND u.state = 'active'",
                    prefixed("u")
                ),
                params![hash, now()],
                from_row,
            )
            .optional()
            .map_err(db_err)
    }

    /// Deletes a session (sign-out): its cookie is dead from now on.
    pub fn remove_session(&self, hash: &str) -> Result<()> {
        self.conn
            .execute("DELETE FROM sessions WHERE hash = ?1", [hash])
            .map(|_| ())
            .map_err(db_err)
    }

    /// Stores an API token (its hash) of `user_id`.
    pub fn add_token(&self, hash: &str, user_id: i64, label: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO api_tokens (hash, user_id, label, created) VALUES (?1, ?2, ?3, ?4)",
                params![hash, user_id, label, now()],
            )
            .map(|_| ())
            .map_err(db_err)
    }

    /// The active account of an API token (its use is recorded).
    pub fn token_user(&self, hash: &str) -> Result<Option<User>> {
        let user = self
            .conn
            .query_row(
                &format!(
                    "SELECT {} FROM users u JOIN api_tokens t ON t.user_id = u.id \
                     WHERE t.hash = ?1 AND u.state = 'active'",
                    prefixed("u")
                ),
                [hash],
                from_row,
            )
            .optional()
            .map_err(db_err)?;
        if user.is_some() {
            self.conn
                .execute(
                    "UPDATE api_tokens SET last_used = ?2 WHERE hash = ?1",
                    params![hash, now()],
                )
                .map_err(db_err)?;
        }
        Ok(user)
    }

    /// The tokens of `user_id`, newest first.
    pub fn tokens(&self, user_id: i64) -> Result<Vec<Token>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT id, label, created, last_used FROM api_tokens WHERE user_id = ?1 \
                 ORDER BY id DESC",
            )
            .map_err(db_err)?;
        let rows = st
            .query_map([user_id], |r| {
                Ok(Token {
                    id: r.get(0)?,
                    label: r.get(1)?,
                    created: r.get(2)?,
                    last_used: r.get(3)?,
                })
            })
            .map_err(db_err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(db_err)
    }

    /// Revokes token `id` of `user_id`; false when it has no such token.
    pub fn revoke_token(&self, user_id: i64, id: i64) -> Result<bool> {
        self.conn
            .execute(
                "DELETE FROM api_tokens WHERE id = ?1 AND user_id = ?2",
                params![id, user_id],
            )
            .map(|n| n > 0)
            .map_err(db_err)
    }

    /// Who submitted run `id`: `None` when there is no such run, `Some(None)` when it was
    /// submitted without accounts.
    pub fn run_owner(&self, id: i64) -> Result<Option<Option<String>>> {
        self.conn
            .query_row("SELECT owner FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(db_err)
    }
}

/// Failed sign-ins in a row before each further one waits.
pub const FREE_FAILURES: i64 = 5;

fn prefixed(table: &str) -> String {
    COLUMNS
        .split(", ")
        .map(|c| format!("{table}.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_sessions_and_tokens_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        assert!(!db.has_admin().unwrap());
        let u = db.add_user("ann", "h", "admin", "active").unwrap().unwrap();
        assert!(db
            .add_user("ann", "h2", "user", "pending")
            .unwrap()
            .is_none());
        assert!(db.has_admin().unwrap());
        db.add_session("s1", u.id, now() + 60).unwrap();
        db.add_session("old", u.id, now() - 1).unwrap();
        assert_eq!(db.session_user("s1").unwrap().unwrap().name, "ann");
        assert!(db.session_user("old").unwrap().is_none());
        db.remove_session("s1").unwrap();
        assert!(db.session_user("s1").unwrap().is_none());
        db.add_token("t1", u.id, "laptop").unwrap();
        assert_eq!(db.token_user("t1").unwrap().unwrap().name, "ann");
        let t = db.tokens(u.id).unwrap();
        assert_eq!(t.len(), 1);
        assert!(t[0].last_used.is_some());
        assert!(db.revoke_token(u.id, t[0].id).unwrap());
        assert!(db.token_user("t1").unwrap().is_none());
    }

    #[test]
    fn failures_lock_an_account_for_longer_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        let u = db.add_user("bob", "h", "user", "active").unwrap().unwrap();
        for _ in 0..FREE_FAILURES - 1 {
            db.login_outcome(u.id, false).unwrap();
        }
        assert_eq!(db.user("bob").unwrap().unwrap().locked_until, 0);
        db.login_outcome(u.id, false).unwrap();
        let locked = db.user("bob").unwrap().unwrap().locked_until;
        assert!(locked >= now() + 29, "{locked}");
        db.login_outcome(u.id, true).unwrap();
        let u = db.user("bob").unwrap().unwrap();
        assert_eq!((u.failed_logins, u.locked_until), (0, 0));
    }
}
