-- A request's update counted at the cost of its own row, not of the queue (issue 35: a
-- build's end, load/results/fleet.md 2026-11-29 03:30).
--
-- 0008's update branch of flotilla.count_buildrequests() read, for every updated row,
-- whether it is claimed three times (buildrequest_claims for the row after, both unclaimed
-- sets for the row before), and moved ids between the unclaimed sets by joining them with
-- the transition table. PostgreSQL planned the first lookup as a hashed subplan, a scan of
-- every claim, and the joins as hash joins over the pending set: the completion of one
-- request (`UPDATE buildrequests`, a build's end) took 2.4 ms of PostgreSQL's time in the
-- fleet's phase S (pg_stat_statements, 2026-11-29 03:29), 1.7 ms of it in the count, and
-- an update of a priority as much. With 25,000 pending and 1,000 claimed, one request at a
-- time, five pairs in turns (load 10-14, 2026-11-29 03:53-04:05):
--
--   0008's   a completion 1.81, 4.96, 5.31, 4.67, 7.26 ms; a priority 3.11, 2.84, 5.46, 7.40, 6.11 ms
--   this     a completion 1.20, 0.84, 1.42, 1.29, 1.10 ms; a priority 0.29, 0.11, 0.26, 0.40, 0.48 ms
--
--   runuser -u postgres -- psql -h "$PWD/.data/bench/pg" -p "$BENCH_PG_PORT" -U postgres -d fleet_run \
--     -v fn=services/core/db/migrations/0043_flotilla_buildrequests_update_counts.sql -f load/fleet/request-update.sql
--   (fn=...0008_flotilla_pending_unclaimed.sql for 0008's)
--
-- What changes, each giving the same totals and sets as 0008 on every update (test/db/
-- counts.test.ts and test/db/unclaimed-sets.test.ts check them against the ground truth):
--   - a row is paired with its own row before the update by id. An update of a request
--     changes no claim (a claim's request id cannot change under it: its foreign key is
--     NO ACTION on update), so "claimed" is the same before and after and is read once,
--     from buildrequest_claims, by its primary key;
--   - a pair whose builder and completeness did not change counts nothing and reads
--     nothing (a priority, a results column);
--   - only ids whose completeness changed move between the two unclaimed sets, looked up
--     by their primary keys;
--   - rows whose id changed (Buildbot never does this) are counted and placed as 0008 did,
--     in the branch that only they reach.
-- An update trigger of its own (0008's function keeps inserts and deletes; its update
-- branch is no longer called).
CREATE FUNCTION flotilla.count_buildrequest_updates() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Rows whose id changed first, while both sets still hold what they held before the update.
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.id = n.id)) THEN
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, sum(d) FROM (
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
               EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id))) AS s, 1 AS d
        FROM new_rows r WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.id = r.id)
      UNION ALL
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
               NOT EXISTS (SELECT 1 FROM flotilla.unclaimed_buildrequests u WHERE u.brid = r.id)
               AND NOT EXISTS (SELECT 1 FROM flotilla.unclaimed_complete_buildrequests u WHERE u.brid = r.id))), -1
        FROM old_rows r WHERE NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.id = r.id)
    ) x GROUP BY s HAVING sum(d) <> 0;
    -- Their old ids leave both sets; their new ids join the set of their completeness, unclaimed.
    WITH gone AS (SELECT o.id FROM old_rows o WHERE NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.id = o.id)),
         pending AS (DELETE FROM flotilla.unclaimed_buildrequests u USING gone WHERE u.brid = gone.id)
    DELETE FROM flotilla.unclaimed_complete_buildrequests u USING gone WHERE u.brid = gone.id;
    WITH came AS (SELECT r.id, coalesce(r.complete, 0) <> 0 AS done FROM new_rows r
                  WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.id = r.id)
                    AND NOT EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id)),
         pending AS (INSERT INTO flotilla.unclaimed_buildrequests (brid)
                     SELECT id FROM came WHERE NOT done ON CONFLICT DO NOTHING)
    INSERT INTO flotilla.unclaimed_complete_buildrequests (brid) SELECT id FROM came WHERE done ON CONFLICT DO NOTHING;
  END IF;
  -- Rows whose id was kept: counted only when their builder or completeness changed.
  INSERT INTO flotilla.count_deltas (tbl, scope, n)
  SELECT 'buildrequests', s, sum(v.d)
  FROM new_rows r
  JOIN old_rows o ON o.id = r.id
  LEFT JOIN public.buildrequest_claims c ON c.brid = r.id
  CROSS JOIN LATERAL (VALUES (1, r.builderid, coalesce(r.complete, 0) <> 0),
                             (-1, o.builderid, coalesce(o.complete, 0) <> 0)) v(d, builderid, complete)
  CROSS JOIN LATERAL unnest(flotilla.buildrequest_scopes(v.builderid, v.complete, c.brid IS NOT NULL)) s
  WHERE r.builderid IS DISTINCT FROM o.builderid
     OR (coalesce(r.complete, 0) <> 0) <> (coalesce(o.complete, 0) <> 0)
  GROUP BY s HAVING sum(v.d) <> 0;
  -- An unclaimed id moves to the set of its new completeness, each way only when some row
  -- went that way: a statement on either set, even of no row, runs that set's write-version
  -- trigger (0007). Any other update writes nothing here.
  IF EXISTS (SELECT 1 FROM new_rows r JOIN old_rows o ON o.id = r.id
             WHERE coalesce(r.complete, 0) <> 0 AND coalesce(o.complete, 0) = 0) THEN
    WITH moved AS (
      DELETE FROM flotilla.unclaimed_buildrequests u
      WHERE u.brid = ANY (ARRAY(SELECT r.id FROM new_rows r WHERE coalesce(r.complete, 0) <> 0))
      RETURNING u.brid)
    INSERT INTO flotilla.unclaimed_complete_buildrequests (brid) SELECT brid FROM moved ON CONFLICT DO NOTHING;
  END IF;
  IF EXISTS (SELECT 1 FROM new_rows r JOIN old_rows o ON o.id = r.id
             WHERE coalesce(r.complete, 0) = 0 AND coalesce(o.complete, 0) <> 0) THEN
    WITH moved AS (
      DELETE FROM flotilla.unclaimed_complete_buildrequests u
      WHERE u.brid = ANY (ARRAY(SELECT r.id FROM new_rows r WHERE coalesce(r.complete, 0) = 0))
      RETURNING u.brid)
    INSERT INTO flotilla.unclaimed_buildrequests (brid) SELECT brid FROM moved ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER flotilla_count_upd AFTER UPDATE ON public.buildrequests
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_buildrequest_updates();
