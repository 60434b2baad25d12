-- Write notices finer than a table, for the tables a running build writes all the time
-- (builds, steps, logs, logchunks, build_properties). Besides the table's name (0010),
-- a statement that writes them sends one notice per part of the table it changed, named
-- `<table>/<column>=<value>` (`steps/buildid=5`, `builds/builderid=3/complete=t`), for every
-- row's values before and after the write. An API pod keeps a page that reads only one part
-- of such a table (a build's steps, a builder's finished builds: services/api/read/
-- page-keys.ts) across writes to the other parts.
--
-- Why: with 20 builds running, these tables are written every few milliseconds, and a
-- table-wide notice expired every kept page read from them: the steps of a build that
-- finished a week ago were read afresh after every new step anywhere.
--
-- A statement that changes more than 100 parts (a clean-up deleting old logs) sends the
-- table's bare name instead, which expires every page of the table, as before. So does
-- TRUNCATE, which has no rows to name. The write versions (0007) stay per table: they are
-- what a pod checks when its notices are late, and a page kept on notices across a write to
-- another part is then read afresh, never served stale.
--
-- Two channels, so that a rolling upgrade serves nothing stale: flotilla_writes carries the
-- table's bare name for every write statement, exactly as 0010 did, which is what a pod from
-- before this migration listens to and understands (a part's name would be a table it never
-- read, and it would keep those pages past the write for as long as it runs).
-- flotilla_write_keys carries the parts of these five tables (or their bare name past 100
-- parts and on TRUNCATE) and the bare name of every other table; pods from this version on
-- listen there only (services/api/query/write-notices.ts). A write to a busy table
-- therefore sends one notice more; PostgreSQL still folds repeats within a transaction.
--
-- Statement triggers with transition tables, not row triggers: a batch of log chunks for
-- one log sends one notice, whatever its size (PostgreSQL also folds repeated notices of one
-- transaction into one).
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

-- The notice keys of a row: every part of its table that holds it. The row's own columns,
-- not the row as a whole: a log chunk's content is never copied to name its log.
CREATE FUNCTION flotilla.write_keys(tbl text, id bigint, owner bigint, complete boolean)
RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE tbl
    WHEN 'builds' THEN ARRAY[
      'builds/id=' || id,
      'builds/builderid=' || owner,
      'builds/complete=' || CASE WHEN complete THEN 't' ELSE 'f' END,
      'builds/builderid=' || owner || '/complete=' || CASE WHEN complete THEN 't' ELSE 'f' END]
    WHEN 'steps' THEN ARRAY['steps/id=' || id, 'steps/buildid=' || owner]
    WHEN 'logs' THEN ARRAY['logs/id=' || id, 'logs/stepid=' || owner]
    WHEN 'logchunks' THEN ARRAY['logchunks/logid=' || owner]
    WHEN 'build_properties' THEN ARRAY['build_properties/buildid=' || owner]
  END
$$;

-- PL/pgSQL plans a trigger function apart for each table it is attached to, and only the
-- statements a call reaches.
CREATE FUNCTION flotilla.notify_write_keys() RETURNS trigger LANGUAGE plpgsql AS $$
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

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['builds', 'steps', 'logs', 'logchunks', 'build_properties'] LOOP
    EXECUTE format('CREATE OR REPLACE TRIGGER flotilla_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON public.%I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_write(''keyed'')', t);
    EXECUTE format('CREATE TRIGGER flotilla_notice_insert AFTER INSERT ON public.%I REFERENCING NEW TABLE AS new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION flotilla.notify_write_keys()', t);
    EXECUTE format('CREATE TRIGGER flotilla_notice_update AFTER UPDATE ON public.%I '
                   'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION flotilla.notify_write_keys()', t);
    EXECUTE format('CREATE TRIGGER flotilla_notice_delete AFTER DELETE ON public.%I REFERENCING OLD TABLE AS old_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION flotilla.notify_write_keys()', t);
  END LOOP;
END $$;
