-- What the keyed write notices' triggers (migrations 0016 and 0044) cost the writes of a
-- build's start on the tables they watch: a build's row, its first property, a step inserted
-- and updated, and its log, 400 starts, one statement each, timed in one DO block in a
-- transaction rolled back at the end (so that no notice is sent). Run against the database
-- load/fleet/pgbench.sh leaves (fleet_pgbench: 1,000 builders and their requests), with the
-- functions of each migration in turns (0016's: the keys of a row and the trigger's; 0044
-- replaces both):
--
--   sed -n '/^CREATE FUNCTION flotilla.write_keys/,/^END \$\$;/p' \
--     services/core/db/migrations/0016_flotilla_write_notice_keys.sql | sed 's/^CREATE FUNCTION/CREATE OR REPLACE FUNCTION/' >/tmp/0016.sql
--   psql "$(BENCH_PG_PORT=27440 load/bench/cluster.sh url fleet_pgbench)" -q -v fn=/tmp/0016.sql -f load/fleet/write-keys.sql
--   (and fn=services/core/db/migrations/0044_flotilla_write_keys_one_statement.sql, in turns)
\set ON_ERROR_STOP 1
BEGIN;
\i :fn
DO $$
DECLARE t0 timestamptz; t1 timestamptz; i int; n int := 400; base int := 100000000;
BEGIN
  FOR i IN 1 .. n + 20 LOOP
    IF i = 21 THEN t0 := clock_timestamp(); END IF;  -- the first 20 make the plans
    INSERT INTO builds (id, number, builderid, buildrequestid, workerid, masterid, started_at, state_string)
    VALUES (base + i, base + i, 1 + i % 1000, i, 1, 1, 0, 'starting');
    INSERT INTO build_properties (buildid, name, value, source) VALUES (base + i, 'workername', '"w"', 'Worker');
    INSERT INTO steps (id, number, name, buildid, started_at, state_string, urls_json, hidden)
    VALUES (base + i, 0, 'worker_preparation', base + i, 0, 'pending', '[]', 0);
    UPDATE steps SET state_string = 'worker ready', complete_at = 0, results = 0 WHERE id = base + i;
    INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type)
    VALUES (base + i, 'stdio', 'stdio', base + i, 0, 0, 's');
  END LOOP;
  t1 := clock_timestamp();
  RAISE NOTICE 'a start''s five keyed writes: % ms', round((extract(epoch FROM t1 - t0) * 1000 / n)::numeric, 3);
END $$;
ROLLBACK;
