//! Accounts (issue 32, first phase): who a request comes from ([`Caller`]), passwords
//! (argon2id, random salt), session and API tokens (random, stored as SHA-256 hashes), the
//! names and roles an account may have, and `spar serve --add-admin`. [`guard`] is the one
//! middleware that every request passes: it finds the caller and refuses what they may not
//! do; [`run_access`] reads a run route's id and checks its owner; [`hashing`] bounds the
//! password hashes computed at once.

pub mod guard;
pub mod hashing;
pub mod page;
pub mod run_access;
pub mod same_origin;

use std::path::Path;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use sha2::{Digest, Sha256};

use super::db::users::User;
use super::db::Db;

/// The roles, from least to most allowed.
pub const ROLES: &[&str] = &["user", "approver", "admin"];

/// The shortest password accepted.
pub const MIN_PASSWORD: usize = 8;

/// How long a session lasts (seconds): 14 days.
pub const SESSION_SECONDS: i64 = 14 * 86_400;

/// The session cookie's name.
pub const COOKIE: &str = "spar_session";

/// Who sent a request: an account (by its session cookie or an API token), or nobody.
/// The guard puts one in every request's extensions.
#[derive(Clone, Debug, Default)]
pub struct Caller {
    /// The signed-in account.
    pub user: Option<User>,
    /// The session's CSRF token, when the account came by its session cookie.
    pub csrf: Option<String>,
    /// Whether the server has accounts (any account exists: it then never acts as the
    /// one-person mode, even when no admin is left).
    pub accounts: bool,
}

impl Caller {
    /// The name of the signed-in account.
    pub fn name(&self) -> Option<&str> {
        self.user.as_ref().map(|u| u.name.as_str())
    }

    /// Whether the caller is a signed-in admin.
    pub fn is_admin(&self) -> bool {
        self.user.as_ref().is_some_and(|u| u.role == "admin")
    }

    /// Whether the caller may act on any run (approver or admin), not only their own.
    pub fn acts_on_any_run(&self) -> bool {
        self.user
            .as_ref()
            .is_some_and(|u| u.role == "admin" || u.role == "approver")
    }
}

/// Checks an account name: 1 to 32 letters, digits, `_`, `-`, `.`, not starting with `-`
/// or `.`.
pub fn check_name(name: &str) -> Result<(), String> {
    crate::serve::names::is_plain(name, 32, &['-', '.'])
        .then_some(())
        .ok_or_else(|| {
            format!(
                "name '{name}': give 1 to 32 letters, digits, '_', '-' or '.', not starting \
                 with '-' or '.'"
            )
        })
}

/// Checks a new password: at least [`MIN_PASSWORD`] characters, at most 1000 bytes.
pub fn check_password(password: &str) -> Result<(), String> {
    if password.chars().count() < MIN_PASSWORD {
        return Err(format!(
            "the password is too short: give at least {MIN_PASSWORD} characters"
        ));
    }
    if password.len() > 1000 {
        return Err("the password is too long: give at most 1000 bytes".into());
    }
    Ok(())
}

/// The argon2id hash of a password with a random salt (a PHC string).
pub fn hash_password(password: &str) -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random bytes: {e}"))?;
    let salt = SaltString::encode_b64(&bytes).map_err(|e| format!("a salt: {e}"))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| format!("cannot hash the password: {e}"))
}

/// Whether `password` matches the stored hash.
pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| {
        Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

/// A new random token: 32 bytes from the operating system, in hex.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random bytes: {e}"))?;
    Ok(hex(&bytes))
}

/// The SHA-256 of a token, in hex: what the database keeps of it.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// The CSRF token of a session: derived from its (secret) token, so it needs no storage
/// and is not derivable from what the database keeps.
pub fn csrf_of(session_token: &str) -> String {
    hex(&Sha256::digest(
        format!("spar-csrf:{session_token}").as_bytes(),
    ))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `spar serve --data-dir D --add-admin NAME`: stores an active admin with this password
/// in the data directory's database; `Err` is the message (a bad name or password, a name
/// taken).
pub fn add_admin(data_dir: &Path, name: &str, password: &str) -> Result<(), String> {
    check_name(name).map_err(|e| format!("--add-admin {e}"))?;
    check_password(password).map_err(|e| format!("--add-admin {name}: {e}"))?;
    std::fs::create_dir_all(data_dir)
        .map_err(|e| format!("--data-dir {}: cannot create: {e}", data_dir.display()))?;
    let db = Db::open(&data_dir.join("spar.db"))?;
    if db.user(name)?.is_some() {
        return Err(format!(
            "--add-admin {name}: an account of that name exists: choose another name"
        ));
    }
    let hash = hash_password(password)?;
    match db.add_user(name, &hash, "admin", "active")? {
        Some(_) => Ok(()),
        None => Err(format!(
            "--add-admin {name}: an account of that name exists: choose another name"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_verifies_against_its_hash_only() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"), "{h}");
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("correct horsf", &h));
        assert!(!verify_password("correct horse", "not a hash"));
        // A random salt: the same password hashes differently.
        assert_ne!(h, hash_password("correct horse").unwrap());
    }

    #[test]
    fn tokens_are_random_and_their_hashes_and_csrf_differ() {
        let a = new_token().unwrap();
        assert_eq!(a.len(), 64);
        assert_ne!(a, new_token().unwrap());
        assert_ne!(token_hash(&a), csrf_of(&a));
        assert_eq!(token_hash(&a), token_hash(&a));
    }

    #[test]
    fn names_and_passwords_are_checked() {
        check_name("ann-1.b_c").unwrap();
        for bad in ["", "-x", ".x", "a b", "a;b", "<b>", &"x".repeat(33)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert!(check_password("short").is_err());
        check_password("long enough").unwrap();
    }

    #[test]
    fn add_admin_refuses_a_taken_name_and_a_short_password() {
        let dir = tempfile::tempdir().unwrap();
        add_admin(dir.path(), "root", "s3cret-pass").unwrap();
        let e = add_admin(dir.path(), "root", "s3cret-pass").unwrap_err();
        assert!(e.contains("exists"), "{e}");
        let e = add_admin(dir.path(), "other", "").unwrap_err();
        assert!(e.contains("too short"), "{e}");
        let db = Db::open(&dir.path().join("spar.db")).unwrap();
        assert!(db.has_admin().unwrap());
    }
}
