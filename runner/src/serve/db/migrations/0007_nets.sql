-- Networks (issue 32, point 3): net files stored once by content under DATA/nets/SHA256,
-- each name a row; the default net of an engine (a registered engine's name, or
-- `embedded` for spar's own); and the net each side of a run used.
CREATE TABLE nets (
    name     TEXT    PRIMARY KEY,
    sha      TEXT    NOT NULL,   -- SHA-256 of the file, hex: its name under DATA/nets/
    size     INTEGER NOT NULL,   -- bytes
    engine   TEXT    NOT NULL,   -- the engine it is for: a registered engine or `embedded`
    uploader TEXT,               -- the account that uploaded it (NULL: no accounts then)
    created  INTEGER NOT NULL    -- Unix seconds
);
CREATE INDEX nets_sha ON nets (sha);
CREATE TABLE net_defaults (
    engine  TEXT    PRIMARY KEY, -- a registered engine's name, or `embedded`
    net     TEXT    NOT NULL REFERENCES nets (name),
    set_by  TEXT,
    time    INTEGER NOT NULL
);
CREATE TABLE run_nets (
    run_id   INTEGER NOT NULL REFERENCES runs (id),
    position INTEGER NOT NULL,   -- which --engine of the words, from 0
    variant  TEXT    NOT NULL,   -- its name= (or engine N)
    net      TEXT    NOT NULL,
    sha      TEXT    NOT NULL,
    how      TEXT    NOT NULL,   -- named (net=NAME) or default (the engine's default net)
    PRIMARY KEY (run_id, position)
);
CREATE INDEX run_nets_sha ON run_nets (sha);
