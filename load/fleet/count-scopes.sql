-- What the count triggers' scope functions (migrations 0004 and 0045) cost the writes that call
-- them most: a build's row (flotilla.build_scopes) and a request's claim
-- (flotilla.buildrequest_scopes, twice a row), 500 of each, one row a statement, timed in one
-- DO block in a transaction rolled back at the end. Run against the database phase S leaves
-- (fleet_run: 1,000 builders, 25,000 requests) or load/fleet/pgbench.sh's (fleet_pgbench), with
-- each migration's functions in turns:
--
--   sed -n '/^CREATE FUNCTION flotilla.build_scopes/,/^LANGUAGE sql IMMUTABLE AS \$\$ SELECT ARRAY/p' \
--     services/core/db/migrations/0004_flotilla_counts.sql | sed 's/^CREATE FUNCTION/CREATE OR REPLACE FUNCTION/' >/tmp/0004.sql
--   psql "$(BENCH_PG_PORT=21440 load/bench/cluster.sh url fleet_run)" -q -v fn=/tmp/0004.sql -f load/fleet/count-scopes.sql
--   (and fn=services/core/db/migrations/0045_flotilla_count_scopes_inlined.sql, in turns)
\set ON_ERROR_STOP 1
BEGIN;
\i :fn
DO $$
DECLARE t0 timestamptz; t1 timestamptz; t2 timestamptz; i int; n int := 500; first_request int;
BEGIN
  SELECT min(brid) INTO first_request FROM flotilla.unclaimed_buildrequests;
  FOR i IN 1 .. n + 20 LOOP
    IF i = 21 THEN t0 := clock_timestamp(); END IF;  -- the first 20 make the plans
    INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at, state_string)
    SELECT coalesce(max(number), 0) + 1, 1 + i % 1000, first_request + i, NULL, 1, 0, 'starting'
    FROM builds WHERE builderid = 1 + i % 1000;
  END LOOP;
  t1 := clock_timestamp();
  FOR i IN 1 .. n + 20 LOOP
    IF i = 21 THEN t1 := clock_timestamp(); END IF;
    INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
    SELECT brid, (SELECT min(id) FROM masters), 0 FROM flotilla.unclaimed_buildrequests WHERE brid = first_request + i;
  END LOOP;
  t2 := clock_timestamp();
  RAISE NOTICE 'a build''s row: % ms, a claim: % ms',
    round((extract(epoch FROM t1 - t0) * 1000 / n)::numeric, 3),
    round((extract(epoch FROM t2 - t1) * 1000 / n)::numeric, 3);
END $$;
ROLLBACK;
