-- Engines removed on the engines page or by the API are kept, marked with the time of
-- their removal: the runs that used them still name them (their pages, their diffs).
-- A removed name may be registered again (the row is reused, `removed` cleared).
ALTER TABLE engines ADD COLUMN removed INTEGER;  -- Unix seconds; NULL while registered
