-- Approvals and the actions log (issue 32, second phase): who approved a run and when,
-- which accounts are trusted (their runs need no approval), and every action taken.
ALTER TABLE runs ADD COLUMN approved_by TEXT;      -- the approver's name (NULL: not approved)
ALTER TABLE runs ADD COLUMN approved_at INTEGER;   -- Unix seconds
ALTER TABLE users ADD COLUMN trusted INTEGER NOT NULL DEFAULT 0;
CREATE TABLE actions (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    time   INTEGER NOT NULL,              -- Unix seconds
    who    TEXT    NOT NULL,              -- the account's name, '-' without accounts
    action TEXT    NOT NULL,              -- submit, approve, stop, … (serve/action_log.rs)
    target TEXT    NOT NULL DEFAULT '',   -- 'run 7', 'engine NAME', 'user NAME'
    detail TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX actions_who ON actions (who);
CREATE INDEX actions_target ON actions (target);
