-- The runs: what was asked (kind and words), how it is scheduled, where its files are,
-- and what became of it. The files in `dir` are the truth; this is the index.
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT    NOT NULL,
    words       TEXT    NOT NULL,   -- JSON array: the words after `spar KIND`
    priority    INTEGER NOT NULL DEFAULT 0,
    throughput  INTEGER NOT NULL DEFAULT 100,
    note        TEXT    NOT NULL DEFAULT '',
    state       TEXT    NOT NULL,   -- queued, running, stopped, finished, failed
    created     INTEGER NOT NULL,   -- Unix seconds
    started     INTEGER,
    finished    INTEGER,
    exit_code   INTEGER,
    stderr_tail TEXT    NOT NULL DEFAULT '',
    dir         TEXT    NOT NULL,   -- the run directory
    cwd         TEXT    NOT NULL,   -- where the child runs (relative paths in the words)
    deleted     INTEGER NOT NULL DEFAULT 0,
    archived    TEXT                -- where DELETE moved the directory
);
CREATE INDEX runs_state ON runs (state, deleted);
