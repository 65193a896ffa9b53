-- Registered engines: a name, the git repository the server reads (a path, or a URL the
-- server mirrors under DATA/repos/NAME.git), and how it is built and benched.
CREATE TABLE engines (
    name     TEXT    PRIMARY KEY,
    repo     TEXT    NOT NULL,   -- as registered: an absolute path or a URL
    source   TEXT    NOT NULL,   -- the git directory read: the path, or the mirror
    build    TEXT    NOT NULL,   -- make (OpenBench's convention) or spar (the git= builder)
    created  INTEGER NOT NULL    -- Unix seconds
);
-- The registered engines a run names, one row per `--engine` that names one: the words as
-- given, the revision resolved to its commit, the bench its build printed, the binary.
CREATE TABLE run_engines (
    run_id    INTEGER NOT NULL REFERENCES runs (id),
    position  INTEGER NOT NULL,  -- which --engine of the words, from 0
    variant   TEXT    NOT NULL,  -- its name= (or engine N)
    engine    TEXT    NOT NULL,
    rev       TEXT    NOT NULL,
    sha       TEXT    NOT NULL,
    bench     INTEGER NOT NULL,
    binary    TEXT    NOT NULL,
    words     TEXT    NOT NULL,  -- JSON array: that --engine's words as given
    PRIMARY KEY (run_id, position)
);
