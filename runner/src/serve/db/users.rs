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

const COLUMNS: &str = "id, name, hash, role, state, created, trusted";

fn from_row(r: &Row) -> rusqlite::Result<User> {
    Ok(User {
        id: r.get(0)?,
        name: r.get(1)?,
        hash: r.get(2)?,
        role: r.get(3)?,
        state: r.get(4)?,
        created: r.get(5)?,
        trusted: r.get(6)?,
    })
}

impl Db {
    /// Whether any account exists (the server has accounts, admin or not) and whether an
    /// active admin does.
    pub fn accounts(&self) -> Result<(bool, bool)> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM users), \
                 EXISTS (SELECT 1 FROM users WHERE role = 'admin' AND state = 'active')",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(db_err)
    }

    /// Whether an active admin exists.
    pub fn has_admin(&self) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM users WHERE role = 'admin' AND state = 'active')",
                [],
                |r| r.get(0),
            )
            .map_err(db_err)
    }

    /// Stores a new account; `Ok(None)` when the name is taken (in any case: `Bob` is taken
    /// by `bob`).
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

    /// The account `name`, in any case (names are unique without regard to it).
    pub fn user(&self, name: &str) -> Result<Option<User>> {
        self.conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM users WHERE name = ?1 COLLATE NOCASE"),
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

    /// Sets account `name`'s role and makes it active, as admin `by` asks, in one
    /// transaction that keeps an admin: refused when `by` is no longer an active admin, or
    /// when the change would leave no active admin (two admins demoting each other at once
    /// leave exactly one).
    pub fn set_role(&self, by: &str, name: &str, role: &str) -> Result<RoleChange> {
        let tx = self.conn.unchecked_transaction().map_err(db_err)?;
        let admins = "SELECT count(*) FROM users WHERE role = 'admin' AND state = 'active'";
        let by_admin: bool = tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM users WHERE name = ?1 COLLATE NOCASE \
                 AND role = 'admin' AND state = 'active')",
                [by],
                |r| r.get(0),
            )
            .map_err(db_err)?;
        if !by_admin {
            return Ok(RoleChange::NotAdmin);
        }
        let Some(before) = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM users WHERE name = ?1 COLLATE NOCASE"),
                [name],
                from_row,
            )
            .optional()
            .map_err(db_err)?
        else {
            return Ok(RoleChange::NoAccount);
        };
        let was_admin = before.role == "admin" && before.state == "active";
        let count: i64 = tx.query_row(admins, [], |r| r.get(0)).map_err(db_err)?;
        if was_admin && role != "admin" && count <= 1 {
            return Ok(RoleChange::LastAdmin);
        }
        tx.execute(
            "UPDATE users SET role = ?2, state = 'active' WHERE id = ?1",
            params![before.id, role],
        )
        .map_err(db_err)?;
        let left: i64 = tx.query_row(admins, [], |r| r.get(0)).map_err(db_err)?;
        if left < 1 {
            // Dropping the transaction rolls the change back.
            return Ok(RoleChange::LastAdmin);
        }
        tx.commit().map_err(db_err)?;
        Ok(RoleChange::Done(before))
    }

    /// Marks an account trusted or not; false when there is no such account.
    pub fn set_trusted(&self, name: &str, trusted: bool) -> Result<bool> {
        self.conn
            .execute(
                "UPDATE users SET trusted = ?2 WHERE name = ?1 COLLATE NOCASE",
                params![name, trusted],
            )
            .map(|n| n > 0)
            .map_err(db_err)
    }

    /// Removes a pending account (a rejected sign-up); false when there is none.
    pub fn remove_pending(&self, name: &str) -> Result<bool> {
        self.conn
            .execute(
                "DELETE FROM users WHERE name = ?1 COLLATE NOCASE AND state = 'pending'",
                [name],
            )
            .map(|n| n > 0)
            .map_err(db_err)
    }

    /// How many seconds sign-ins as `name` wait still (0: none), whether or not an account
    /// has that name.
    pub fn login_wait(&self, name: &str) -> Result<i64> {
        let until: Option<i64> = self
            .conn
            .query_row(
                "SELECT locked_until FROM login_failures WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()
            .map_err(db_err)?;
        Ok((until.unwrap_or(0) - now()).max(0))
    }

    /// Records a failed sign-in as `name`, whether or not an account has that name (so a
    /// name that exists and one that does not answer alike): from the fifth failure in a
    /// row on the name waits 30 s, doubled at each further one (at most 15 minutes).
    /// `Some(seconds)`: this failure made the name wait that long.
    pub fn login_failed(&self, name: &str) -> Result<Option<i64>> {
        let t = now();
        // Old entries go (a day after their last failure, once no longer locked), and the
        // table stays bounded whatever names are tried.
        self.conn
            .execute(
                "DELETE FROM login_failures WHERE last < ?1 AND locked_until < ?2",
                params![t - 86_400, t],
            )
            .map_err(db_err)?;
        self.conn
            .execute(
                "DELETE FROM login_failures WHERE name IN (SELECT name FROM login_failures \
                 ORDER BY last DESC LIMIT -1 OFFSET ?1)",
                [MAX_FAILURE_NAMES],
            )
            .map_err(db_err)?;
        let failed: i64 = self
            .conn
            .query_row(
                "INSERT INTO login_failures (name, failed, locked_until, last) \
                 VALUES (?1, 1, 0, ?2) \
                 ON CONFLICT (name) DO UPDATE SET failed = failed + 1, last = ?2 \
                 RETURNING failed",
                params![name, t],
                |r| r.get(0),
            )
            .map_err(db_err)?;
        if failed < FREE_FAILURES {
            return Ok(None);
        }
        let wait = (30i64 << (failed - FREE_FAILURES).min(5)).min(900);
        self.conn
            .execute(
                "UPDATE login_failures SET locked_until = ?2 WHERE name = ?1",
                params![name, t + wait],
            )
            .map_err(db_err)?;
        Ok(Some(wait))
    }

    /// Forgets the failed sign-ins of `name` (it signed in).
    pub fn login_succeeded(&self, name: &str) -> Result<()> {
        self.conn
            .execute("DELETE FROM login_failures WHERE name = ?1", [name])
            .map(|_| ())
            .map_err(db_err)
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

/// The most names whose failed sign-ins are remembered (the oldest are forgotten first).
const MAX_FAILURE_NAMES: i64 = 100_000;

/// What [`Db::set_role`] did.
#[derive(Debug)]
pub enum RoleChange {
    /// Changed; the account as it was before.
    Done(User),
    /// No account of that name.
    NoAccount,
    /// The admin who asked is not an active admin (any more).
    NotAdmin,
    /// The change would leave no active admin.
    LastAdmin,
}

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
        assert_eq!(db.accounts().unwrap(), (false, false));
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
    fn failures_lock_a_name_for_longer_each_time_whether_it_exists_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        db.add_user("bob", "h", "user", "active").unwrap().unwrap();
        for name in ["bob", "nobody"] {
            for _ in 0..FREE_FAILURES - 1 {
                assert_eq!(db.login_failed(name).unwrap(), None);
            }
            assert_eq!(db.login_wait(name).unwrap(), 0);
            assert_eq!(db.login_failed(name).unwrap(), Some(30));
            assert!(db.login_wait(name).unwrap() >= 29, "{name}");
            // The case of the name does not matter.
            assert!(db.login_wait(&name.to_uppercase()).unwrap() >= 29, "{name}");
            assert_eq!(db.login_failed(name).unwrap(), Some(60));
            db.login_succeeded(name).unwrap();
            assert_eq!(db.login_wait(name).unwrap(), 0);
        }
    }

    #[test]
    fn names_are_unique_without_regard_to_case() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        db.add_user("bob", "h", "user", "active").unwrap().unwrap();
        assert!(db
            .add_user("Bob", "h", "user", "pending")
            .unwrap()
            .is_none());
        assert!(db
            .add_user("BOB", "h", "admin", "active")
            .unwrap()
            .is_none());
        assert_eq!(db.user("BoB").unwrap().unwrap().name, "bob");
    }

    #[test]
    fn the_last_admin_is_never_demoted() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        db.add_user("root", "h", "admin", "active")
            .unwrap()
            .unwrap();
        db.add_user("ann", "h", "admin", "active").unwrap().unwrap();
        db.add_user("bob", "h", "user", "pending").unwrap().unwrap();
        assert!(matches!(
            db.set_role("bob", "root", "user").unwrap(),
            RoleChange::NotAdmin
        ));
        assert!(matches!(
            db.set_role("root", "eve", "user").unwrap(),
            RoleChange::NoAccount
        ));
        assert!(matches!(
            db.set_role("root", "ann", "user").unwrap(),
            RoleChange::Done(_)
        ));
        // Ann is no admin now: her demotion of root, sent at the same moment, is refused.
        assert!(matches!(
            db.set_role("ann", "root", "user").unwrap(),
            RoleChange::NotAdmin
        ));
        assert!(matches!(
            db.set_role("root", "root", "user").unwrap(),
            RoleChange::LastAdmin
        ));
        assert_eq!(db.accounts().unwrap(), (true, true));
        assert!(matches!(
            db.set_role("root", "bob", "approver").unwrap(),
            RoleChange::Done(_)
        ));
        assert_eq!(db.user("bob").unwrap().unwrap().state, "active");
    }
}
