-- Write notices on two channels, so that a rolling upgrade past 0016 serves nothing stale.
-- 0016 sent the parts of the five busy tables (`steps/buildid=5`) on flotilla_writes, where
-- an API pod from before 0016 takes each for the name of a table it never read, and keeps
-- its pages of those tables from memory past the write, for as long as it runs.
--
-- Now:
-- - flotilla_writes carries the table's bare name for every write statement, exactly as
--   0010 did: what a pod from before 0016 listens to and understands;
-- - flotilla_write_keys carries what 0016 sent: the parts of the five busy tables (or the
--   bare name past 100 parts and on TRUNCATE) and the bare name of every other table. Pods
--   from this version on listen there only (services/api/query/write-notices.ts).
-- A write to a busy table therefore sends one notice more (PostgreSQL still folds repeats
-- within a transaction). The triggers themselves are 0016's; only the functions change.
CREATE OR REPLACE FUNCTION flotilla.count_write() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  t text := CASE WHEN TG_TABLE_SCHEMA = 'public' THEN TG_TABLE_NAME
                 ELSE TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME END;
BEGIN
  INSERT INTO flotilla.count_deltas (tbl, scope, n) VALUES (t, '~w', 1);
  PERFORM pg_notify('flotilla_writes', t);
  -- A table with keyed notices (argument 'keyed') names its parts from its own triggers.
  IF TG_NARGS = 0 OR TG_ARGV[0] <> 'keyed' OR TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('flotilla_write_keys', t);
  END IF;
  RETURN NULL;
END $$;

-- PL/pgSQL plans a trigger function apart for each table it is attached to, and only the
-- statements a call reaches.
CREATE OR REPLACE FUNCTION flotilla.notify_write_keys() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  keys text[] := '{}';
  k text;
BEGIN
  -- Each transition table exists only for the events whose trigger names it; each branch
  -- is a statement of its own, so only the taken one is planned.
  IF TG_TABLE_NAME = 'builds' THEN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      keys := keys || ARRAY(SELECT DISTINCT unnest(flotilla.write_keys('builds', r.id, r.builderid, r.complete_at IS NOT NULL)) FROM new_rows r);
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
      keys := keys || ARRAY(SELECT DISTINCT unnest(flotilla.write_keys('builds', r.id, r.builderid, r.complete_at IS NOT NULL)) FROM old_rows r);
    END IF;
  ELSIF TG_TABLE_NAME = 'steps' THEN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      keys := keys || ARRAY(SELECT DISTINCT unnest(flotilla.write_keys('steps', r.id, r.buildid, NULL)) FROM new_rows r);
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
      keys := keys || ARRAY(SELECT DISTINCT unnest(flotilla.write_keys('steps', r.id, r.buildid, NULL)) FROM old_rows r);
    END IF;
  ELSIF TG_TABLE_NAME = 'logs' THEN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      keys := keys || ARRAY(SELECT DISTINCT unnest(flotilla.write_keys('logs', r.id, r.stepid, NULL)) FROM new_rows r);
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
      keys := keys || ARRAY(SELECT DISTINCT unnest(flotilla.write_keys('logs', r.id, r.stepid, NULL)) FROM old_rows r);
    END IF;
  ELSIF TG_TABLE_NAME = 'logchunks' THEN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      keys := keys || ARRAY(SELECT DISTINCT unnest(flotilla.write_keys('logchunks', NULL, r.logid, NULL)) FROM new_rows r);
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
      keys := keys || ARRAY(SELECT DISTINCT unnest(flotilla.write_keys('logchunks', NULL, r.logid, NULL)) FROM old_rows r);
    END IF;
  ELSIF TG_TABLE_NAME = 'build_properties' THEN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      keys := keys || ARRAY(SELECT DISTINCT unnest(flotilla.write_keys('build_properties', NULL, r.buildid, NULL)) FROM new_rows r);
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
      keys := keys || ARRAY(SELECT DISTINCT unnest(flotilla.write_keys('build_properties', NULL, r.buildid, NULL)) FROM old_rows r);
    END IF;
  END IF;
  keys := ARRAY(SELECT DISTINCT unnest(keys));
  -- A key with no value (a NULL column) names no part: the whole table, then.
  IF cardinality(keys) > 100 OR array_position(keys, NULL) IS NOT NULL THEN
    PERFORM pg_notify('flotilla_write_keys', TG_TABLE_NAME);
  ELSE
    FOREACH k IN ARRAY keys LOOP
      PERFORM pg_notify('flotilla_write_keys', k);
    END LOOP;
  END IF;
  RETURN NULL;
END $$;
