-- Watched branches (issue 55): an engine's watch settings (one per engine: the branch it
-- follows, the test words, bounds and anchor, the poll interval, the push token's SHA-256
-- hash), the tip last seen of each branch it has followed, every commit tested with its
-- run, and the other runs a watch submitted (batch tests, bisects, anchor tests).
-- Unwatching keeps all of it (`active = 0`).
CREATE TABLE watches (
    engine       TEXT    PRIMARY KEY,
    branch       TEXT    NOT NULL,
    each_words   TEXT    NOT NULL,   -- JSON array: the words after `--each`
    extra_words  TEXT    NOT NULL,   -- JSON array: the other words of every run
    elo0         REAL    NOT NULL,
    elo1         REAL    NOT NULL,
    anchor       TEXT    NOT NULL DEFAULT '',   -- a tag or commit ('' = no anchor test)
    anchor_games INTEGER NOT NULL DEFAULT 0,
    anchor_every INTEGER NOT NULL DEFAULT 0,    -- commits between anchor tests
    poll_secs    INTEGER NOT NULL,
    token_hash   TEXT    NOT NULL,
    set_by       TEXT,                          -- who set it (the runs' owner when the engine has none)
    active       INTEGER NOT NULL DEFAULT 1,
    poked        INTEGER NOT NULL DEFAULT 0,    -- the push hook asked for a look
    last_poll    INTEGER NOT NULL DEFAULT 0,    -- Unix seconds
    updated      INTEGER NOT NULL
);
CREATE TABLE watch_tips (
    engine TEXT NOT NULL,
    branch TEXT NOT NULL,
    tip    TEXT NOT NULL,
    since_anchor INTEGER NOT NULL DEFAULT 0,    -- commits since the last anchor test
    PRIMARY KEY (engine, branch)
);
CREATE TABLE watch_commits (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    engine   TEXT    NOT NULL,
    branch   TEXT    NOT NULL,
    sha      TEXT    NOT NULL,
    parent   TEXT    NOT NULL,
    subject  TEXT    NOT NULL,
    author   TEXT    NOT NULL,
    time     INTEGER NOT NULL,                  -- the commit's time (Unix seconds)
    position INTEGER NOT NULL,                  -- along the branch's first-parent line
    batch    INTEGER NOT NULL,                  -- how many commits its push brought
    run_id   INTEGER,                           -- its commit test (NULL: refused)
    UNIQUE (engine, branch, sha)
);
CREATE TABLE watch_runs (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    engine   TEXT    NOT NULL,
    branch   TEXT    NOT NULL,
    role     TEXT    NOT NULL,                  -- batch, bisection, anchor
    run_id   INTEGER,                           -- NULL: refused (the event log says why)
    base     TEXT    NOT NULL,
    tip      TEXT    NOT NULL,
    position INTEGER NOT NULL,                  -- the tip's position
    handled  INTEGER NOT NULL DEFAULT 0,        -- its end was acted on (a bisect, a find)
    found    TEXT,                              -- a bisect's first bad commit
    created  INTEGER NOT NULL
);
CREATE INDEX watch_commits_engine ON watch_commits (engine, branch, position);
CREATE INDEX watch_runs_engine ON watch_runs (engine, branch, role);
