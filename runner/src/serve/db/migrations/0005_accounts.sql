-- Accounts (issue 32, first phase): users with argon2id password hashes, their sessions
-- and API tokens (only SHA-256 hashes of the tokens are stored), and who submitted a run.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL UNIQUE,
    hash          TEXT    NOT NULL,   -- argon2id PHC string (random salt)
    role          TEXT    NOT NULL,   -- user, approver, admin
    state         TEXT    NOT NULL,   -- pending, active
    created       INTEGER NOT NULL,   -- Unix seconds
    failed_logins INTEGER NOT NULL DEFAULT 0,
    locked_until  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE sessions (
    hash    TEXT    PRIMARY KEY,      -- SHA-256 of the cookie's token, hex
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created INTEGER NOT NULL,
    expires INTEGER NOT NULL
);
CREATE TABLE api_tokens (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    hash      TEXT    NOT NULL UNIQUE, -- SHA-256 of the token, hex
    user_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    label     TEXT    NOT NULL DEFAULT '',
    created   INTEGER NOT NULL,
    last_used INTEGER
);
ALTER TABLE runs ADD COLUMN owner TEXT;   -- the name of who submitted it (NULL: no accounts then)
