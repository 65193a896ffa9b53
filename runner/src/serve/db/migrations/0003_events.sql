-- The event log (the machines page and `/events`): what the server and its users did,
-- when, to which run (none: the server itself).
CREATE TABLE events (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    time    INTEGER NOT NULL,   -- Unix seconds
    run     INTEGER,            -- the run, or NULL for the server's own events
    kind    TEXT    NOT NULL,   -- submit, start, stop, resume, finish, failure, rebalance,
                                -- priority, delete, server-start, server-stop, orphan
    message TEXT    NOT NULL
);
CREATE INDEX events_run ON events (run, id);
CREATE INDEX events_kind ON events (kind, id);
-- A run's numbers as its files said when its child last ended (JSON of the live view):
-- pages read them instead of the files of a run that is not playing.
ALTER TABLE runs ADD COLUMN last_live TEXT;
