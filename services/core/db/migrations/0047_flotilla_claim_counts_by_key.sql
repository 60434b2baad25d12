-- A batch of claims counted at the cost of its own requests, not of the queue (issue 35:
-- a claim pass, load/results/fleet.md 2026-11-30).
--
-- 0008's flotilla.count_claims() joined the claims' transition table with buildrequests
-- (twice) and with both unclaimed sets. A trigger's statements have no parameters, so each
-- connection plans them once and keeps that plan; PostgreSQL knows a transition table's size
-- when it plans, and for a claim pass's batch (a master claims all it can start in one
-- statement: 167-333 requests in the fleet's phase S) beside 25,000 pending it chose hash
-- joins over sequential scans of buildrequests and of the unclaimed set. auto_explain on the
-- bench cluster (auto_explain.log_min_duration 15 ms, log_nested_statements on) showed
-- each batch's count at 65-75 ms of a 92-116 ms claim, two `Seq Scan on buildrequests` of
-- 25,001 rows; pg_stat_statements put the count at 0.69 ms of PostgreSQL's 7.3 ms a start
-- (2026-11-30 02:17, `S_ROUNDS=2 BENCH_PG_PORT=21440 FLEET_REDIS_PORT=21441 STOP_AFTER=S
-- load/fleet/run.sh`). pgbench's start claims one request a statement, which the same
-- trigger answers by index: the cost was the fleet's alone.
--
-- Here each request is read once, by its primary key from the ids of the transition table
-- (`= ANY (ARRAY(...))`, which PostgreSQL answers by index whatever the batch's size, as
-- 0043 does for updates), counted for both sides of the change from that one read, and the
-- unclaimed sets are touched by their primary keys the same way. The totals and sets are
-- 0008's on every claim and release (test/db/counts.test.ts and test/db/unclaimed-sets.test.ts
-- check them against the ground truth); test/db/claim-counts.test.ts checks that a batch reads
-- neither table whole.
CREATE OR REPLACE FUNCTION flotilla.count_claims() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, sum(v.d)
    FROM public.buildrequests r
      CROSS JOIN LATERAL (VALUES (1, true), (-1, false)) v(d, claimed)
      CROSS JOIN LATERAL unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0, v.claimed)) s
    WHERE r.id = ANY (ARRAY(SELECT c.brid FROM new_rows c))
    GROUP BY s HAVING sum(v.d) <> 0;
    DELETE FROM flotilla.unclaimed_buildrequests u WHERE u.brid = ANY (ARRAY(SELECT c.brid FROM new_rows c));
    DELETE FROM flotilla.unclaimed_complete_buildrequests u
    WHERE u.brid = ANY (ARRAY(SELECT c.brid FROM new_rows c));
  ELSE
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, sum(v.d)
    FROM public.buildrequests r
      CROSS JOIN LATERAL (VALUES (1, false), (-1, true)) v(d, claimed)
      CROSS JOIN LATERAL unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0, v.claimed)) s
    WHERE r.id = ANY (ARRAY(SELECT c.brid FROM old_rows c))
    GROUP BY s HAVING sum(v.d) <> 0;
    -- A request being deleted is no longer visible here: its own trigger clears its id.
    INSERT INTO flotilla.unclaimed_buildrequests (brid)
    SELECT r.id FROM public.buildrequests r
    WHERE r.id = ANY (ARRAY(SELECT c.brid FROM old_rows c)) AND coalesce(r.complete, 0) = 0
    ON CONFLICT DO NOTHING;
    INSERT INTO flotilla.unclaimed_complete_buildrequests (brid)
    SELECT r.id FROM public.buildrequests r
    WHERE r.id = ANY (ARRAY(SELECT c.brid FROM old_rows c)) AND coalesce(r.complete, 0) <> 0
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
