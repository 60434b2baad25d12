-- What one request's update costs PostgreSQL with 25,000 pending and 1,000 claimed, the
-- triggers of buildrequests included: 500 completions and 300 priority updates of claimed
-- requests, one statement each, timed in one DO block, in a transaction rolled back at the
-- end. Run against a fleet run's database (its 25,000 requests and 1,000 claims, left by
-- `STOP_AFTER=S load/fleet/run.sh`), as the cluster's superuser (the setup writes the
-- pending state without the triggers), with the trigger functions of a migration file:
--
--   runuser -u postgres -- psql -h "$PWD/.data/bench/pg" -p "$BENCH_PG_PORT" -U postgres -d fleet_run \
--     -v fn=services/core/db/migrations/0008_flotilla_pending_unclaimed.sql -f load/fleet/request-update.sql
--   (and fn=services/core/db/migrations/0043_flotilla_buildrequests_update_counts.sql, in turns)
\set ON_ERROR_STOP 1
BEGIN;
SET session_replication_role = replica;
UPDATE buildrequests SET complete = 0, results = -1, complete_at = NULL;
DELETE FROM flotilla.unclaimed_complete_buildrequests;
INSERT INTO flotilla.unclaimed_buildrequests (brid)
SELECT id FROM buildrequests r WHERE NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id)
ON CONFLICT DO NOTHING;
SET session_replication_role = origin;
ANALYZE buildrequests;
ANALYZE buildrequest_claims;
ANALYZE flotilla.unclaimed_buildrequests;
ANALYZE flotilla.unclaimed_complete_buildrequests;
SELECT (SELECT count(*) FROM flotilla.unclaimed_buildrequests) AS unclaimed,
       (SELECT count(*) FROM buildrequest_claims) AS claims;
\i :fn
DO $$
DECLARE t0 timestamptz; t1 timestamptz; x int; n int := 0;
BEGIN
  FOR x IN SELECT brid FROM buildrequest_claims ORDER BY brid LIMIT 20 LOOP  -- plans made
    UPDATE buildrequests SET complete = 1, results = 0, complete_at = 1 WHERE id = x AND complete = 0;
  END LOOP;
  t0 := clock_timestamp();
  FOR x IN SELECT brid FROM buildrequest_claims ORDER BY brid OFFSET 20 LIMIT 500 LOOP
    UPDATE buildrequests SET complete = 1, results = 0, complete_at = 1 WHERE id = x AND complete = 0;
    n := n + 1;
  END LOOP;
  t1 := clock_timestamp();
  RAISE NOTICE 'completions: %, % ms each', n, round((extract(epoch FROM t1 - t0) * 1000 / n)::numeric, 3);
  t0 := clock_timestamp();
  FOR x IN SELECT brid FROM buildrequest_claims ORDER BY brid OFFSET 520 LIMIT 300 LOOP
    UPDATE buildrequests SET priority = 5 WHERE id = x;
  END LOOP;
  t1 := clock_timestamp();
  RAISE NOTICE 'priority updates: 300, % ms each', round((extract(epoch FROM t1 - t0) * 1000 / 300)::numeric, 3);
END $$;
ROLLBACK;
