-- Engines have owners (issue 53): who registered an engine (NULL: registered before owners,
-- or on a server without accounts; only an admin changes or removes such an engine), and a
-- change of its repository or build asked by a plain (untrusted) user, which waits for an
-- approver: until then the engine keeps its repository and build.
ALTER TABLE engines ADD COLUMN owner TEXT;
ALTER TABLE engines ADD COLUMN pending_repo TEXT;    -- the change that waits: its repository
ALTER TABLE engines ADD COLUMN pending_build TEXT;   -- and its build
ALTER TABLE engines ADD COLUMN pending_by TEXT;      -- who asked for it
ALTER TABLE engines ADD COLUMN pending_at INTEGER;   -- when (Unix seconds)
-- Nothing of a run is built in the request that submits it: a run that names registered
-- engines is stored with their words (`engine=NAME rev=REV`) and `built = 0`; once it is
-- queued (approved), the scheduler's builder builds them, replaces the words by the builds'
-- `cmd=` and sets `built`. Only built runs play.
ALTER TABLE runs ADD COLUMN built INTEGER NOT NULL DEFAULT 1;
