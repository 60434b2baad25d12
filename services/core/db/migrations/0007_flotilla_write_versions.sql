-- Write versions: a number per table that grows with every committed statement that writes
-- it, so that an API pod can tell, with one cheap query, that nothing a rendered page was read
-- from has changed since (services/api/query/versions.ts, services/api/http/page-cache.ts).
--
-- Each writing statement appends (tbl, '~w', 1) to flotilla.count_deltas, in the writer's own
-- transaction; a version is the sum of a table's '~w' deltas. Because the delta commits with
-- the write, a version and the rows it describes are read from the same snapshot; and because
-- every delta is positive and a later snapshot sees everything an earlier one saw, two equal
-- sums mean the same set of committed writes. The deltas are only ever appended (no counter
-- row updated in place, so writers never wait on each other), and flotilla.compact_counts()
-- folds them like the totals of 0004 without changing any sum.
--
-- Like 0004's totals, the triggers keep versions true whoever writes: Flotilla, or a Buildbot
-- 3.7 master sharing the database. Every table of the schema is versioned except logchunks,
-- whose appends are the hottest write path and which no cached page reads; a page that reads
-- an unversioned table is never cached.
CREATE FUNCTION flotilla.count_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO flotilla.count_deltas (tbl, scope, n)
  VALUES (CASE WHEN TG_TABLE_SCHEMA = 'public' THEN TG_TABLE_NAME
               ELSE TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME END, '~w', 1);
  RETURN NULL;
END $$;

DO $$
DECLARE t record;
BEGIN
  FOR t IN
    SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p')
      AND ((n.nspname = 'public' AND c.relname NOT IN ('logchunks', 'alembic_version'))
           OR (n.nspname = 'flotilla' AND c.relname = 'unclaimed_buildrequests'))
      AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid AND g.tgname = 'flotilla_version')
    ORDER BY 1, 2
  LOOP
    EXECUTE format('CREATE TRIGGER flotilla_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_write()', t.nspname, t.relname);
  END LOOP;
END $$;
