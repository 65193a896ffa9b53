-- Clocks scaled by bench speed (issue 32, point 4): a `--scale-nps` run's factor
-- (reference nps / host nps) and the scaled command line its child last started with.
ALTER TABLE runs ADD COLUMN nps_factor REAL;
ALTER TABLE runs ADD COLUMN scaled_command TEXT;
