-- Machines you can trust (issue 32, point 4): each machine the server knows (the local
-- host, a Slurm node), whether an admin excluded it, and its bench speed; and the shards
-- and machines already flagged in a run, so that a flag is logged once.
CREATE TABLE machines (
    name      TEXT    PRIMARY KEY, -- host name or Slurm node name
    excluded  INTEGER NOT NULL DEFAULT 0,
    nps       INTEGER,             -- `spar bench` nodes per second, when measured
    nps_time  INTEGER              -- Unix seconds of that measure
);
CREATE TABLE machine_flags (
    run_id  INTEGER NOT NULL,
    what    TEXT    NOT NULL,      -- `machine NAME` or `shard I`
    time    INTEGER NOT NULL,
    PRIMARY KEY (run_id, what)
);
