-- Issue 53 (security): account names unique without regard to case (`Bob` beside `bob` is
-- refused; a database holding both is refused before this runs, naming them), and failed
-- sign-ins counted per name whether or not an account has it, so that a name that exists
-- and one that does not answer alike, lock included.
CREATE UNIQUE INDEX users_name_nocase ON users (name COLLATE NOCASE);
CREATE TABLE login_failures (
    name         TEXT    PRIMARY KEY COLLATE NOCASE,
    failed       INTEGER NOT NULL,    -- failed sign-ins in a row
    locked_until INTEGER NOT NULL,    -- Unix seconds: no sign-in is tried before
    last         INTEGER NOT NULL     -- Unix seconds of the last failure
);
ALTER TABLE users DROP COLUMN failed_logins;
ALTER TABLE users DROP COLUMN locked_until;
