-- Write notices: every statement that moves a write version (0007, 0009) also sends a
-- notification on channel flotilla_writes whose payload is the table's name. PostgreSQL
-- delivers it to the listening API pods when the writer commits (never for a rollback), in
-- commit order, and collapses repeats within one transaction, so a batch of statements on
-- one table costs one notice.
--
-- Why: with the versions alone an API pod must ask the database on every request whether a
-- kept page is still current (one round trip, which on a small machine costs more than the
-- page's own index lookup). A pod that listens knows of every committed write within the
-- delivery delay, and serves a kept page from memory while no notice has named any of its
-- tables (services/api/query/write-notices.ts bounds how late it may be).
--
-- Like the versions, notices come from triggers, so a Buildbot 3.7 master's writes send them
-- too. Nothing else changes: the version rows are appended exactly as before.
CREATE OR REPLACE FUNCTION flotilla.count_write() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  t text := CASE WHEN TG_TABLE_SCHEMA = 'public' THEN TG_TABLE_NAME
                 ELSE TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME END;
BEGIN
  INSERT INTO flotilla.count_deltas (tbl, scope, n) VALUES (t, '~w', 1);
  PERFORM pg_notify('flotilla_writes', t);
  RETURN NULL;
END $$;
