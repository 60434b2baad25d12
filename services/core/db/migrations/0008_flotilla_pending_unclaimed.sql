-- The unclaimed set of 0004 holds only pending requests from now on, so the claim loop reads
-- a set as small as the real queue.
--
-- 0004 kept in flotilla.unclaimed_buildrequests every request without a claim. A request
-- cancelled from the API is completed without ever being claimed (API pods are not masters
-- and have no master id to claim with), so it stayed in that set forever, and the set grew
-- with every such cancel. The masters' claim loop (services/master/distributor.ts) and
-- queued-requests metric read the whole set on each pass.
--
-- The request ids without a claim are now split by completeness into two tables:
--
--   flotilla.unclaimed_buildrequests           unclaimed and pending (coalesce(complete, 0) = 0):
--                                              what masters claim from; the name is 0004's, so
--                                              pods of the previous release, still running while
--                                              this one rolls out, read a table that exists
--   flotilla.unclaimed_complete_buildrequests  unclaimed and complete: cancelled before a claim,
--                                              or completed by some other writer without one
--
-- Two tables rather than a flag column on one: the pending table stays as small as the queue
-- (no dead rows or index entries from requests that finished long ago), readers need no
-- predicate to pick their half, and a page that reads only the pending half does not change
-- version (0007) when a cancelled request joins the other. `claimed=false` in the API means
-- "no claim row", whatever complete is (Buildbot's semantics), so it reads both tables.
--
-- A request is claimed exactly when its id is in neither table. The triggers below replace
-- 0004's (same names, CREATE OR REPLACE, same trigger definitions) and keep both tables equal
-- to the ground truth on every insert, update and delete of buildrequests and every insert
-- and delete of buildrequest_claims, one statement at a time (bulk statements included):
--
--   insert of a request      its id goes to the table of its completeness, if it has no claim
--   update of a request      an unclaimed id moves to the other table when complete changes
--                            (completing, cancelling, un-completing); an id that changed leaves
--                            and the new one is placed as on insert
--   delete of a request      its id leaves both (its claims are gone first, by ON DELETE CASCADE)
--   insert of a claim        its request's id leaves both
--   delete of a claim        its request's id goes to the table of the request's completeness
--
-- The totals of 0004 (count_deltas, scope claimed=...) are computed as before, with "claimed"
-- read from both tables for the rows before a statement and from buildrequest_claims for the
-- rows after an update (the same answer while the tables are exact, and the right one for an
-- id that changed).
--
-- Applied in one transaction. It first locks out writers of the two tables (SHARE ROW
-- EXCLUSIVE, what CREATE TRIGGER takes; readers and row locks are not blocked): a writer
-- running 0004's functions cannot commit between the move below and this commit, and once the
-- lock is granted every statement here sees every write committed before it. Claims first:
-- Flotilla's writers that touch both write claims before requests (claim, then complete).
LOCK TABLE public.buildrequest_claims, public.buildrequests IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE IF NOT EXISTS flotilla.unclaimed_complete_buildrequests (brid integer PRIMARY KEY);

CREATE OR REPLACE FUNCTION flotilla.count_buildrequests() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- A new row cannot have a claim yet; buildrequest_claims says so all the same.
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, count(*) FROM new_rows r,
      unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
        EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id))) s GROUP BY s;
    INSERT INTO flotilla.unclaimed_buildrequests (brid)
    SELECT r.id FROM new_rows r
    WHERE coalesce(r.complete, 0) = 0
      AND NOT EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id)
    ON CONFLICT DO NOTHING;
    INSERT INTO flotilla.unclaimed_complete_buildrequests (brid)
    SELECT r.id FROM new_rows r
    WHERE coalesce(r.complete, 0) <> 0
      AND NOT EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id)
    ON CONFLICT DO NOTHING;
  ELSIF TG_OP = 'DELETE' THEN
    -- The claims of deleted rows are gone already (ON DELETE CASCADE); the two tables still know.
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, -count(*) FROM old_rows r,
      unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
        NOT EXISTS (SELECT 1 FROM flotilla.unclaimed_buildrequests u WHERE u.brid = r.id)
        AND NOT EXISTS (SELECT 1 FROM flotilla.unclaimed_complete_buildrequests u WHERE u.brid = r.id))) s
    GROUP BY s;
    DELETE FROM flotilla.unclaimed_buildrequests u USING old_rows r WHERE u.brid = r.id;
    DELETE FROM flotilla.unclaimed_complete_buildrequests u USING old_rows r WHERE u.brid = r.id;
  ELSE
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, sum(d) FROM (
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
               EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id))) AS s, 1 AS d
        FROM new_rows r
      UNION ALL
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
               NOT EXISTS (SELECT 1 FROM flotilla.unclaimed_buildrequests u WHERE u.brid = r.id)
               AND NOT EXISTS (SELECT 1 FROM flotilla.unclaimed_complete_buildrequests u WHERE u.brid = r.id))), -1
        FROM old_rows r
    ) x GROUP BY s HAVING sum(d) <> 0;
    -- Only ids in the wrong table for their new completeness move; any other update writes nothing here.
    WITH moved AS (
      DELETE FROM flotilla.unclaimed_buildrequests u USING new_rows r
      WHERE u.brid = r.id AND coalesce(r.complete, 0) <> 0 RETURNING u.brid)
    INSERT INTO flotilla.unclaimed_complete_buildrequests (brid) SELECT brid FROM moved ON CONFLICT DO NOTHING;
    WITH moved AS (
      DELETE FROM flotilla.unclaimed_complete_buildrequests u USING new_rows r
      WHERE u.brid = r.id AND coalesce(r.complete, 0) = 0 RETURNING u.brid)
    INSERT INTO flotilla.unclaimed_buildrequests (brid) SELECT brid FROM moved ON CONFLICT DO NOTHING;
    -- Ids that changed (Buildbot never does this; one check when nothing did).
    IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.id = n.id)) THEN
      DELETE FROM flotilla.unclaimed_buildrequests u USING old_rows o
      WHERE u.brid = o.id AND NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.id = o.id);
      DELETE FROM flotilla.unclaimed_complete_buildrequests u USING old_rows o
      WHERE u.brid = o.id AND NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.id = o.id);
      INSERT INTO flotilla.unclaimed_buildrequests (brid)
      SELECT r.id FROM new_rows r
      WHERE coalesce(r.complete, 0) = 0 AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.id = r.id)
        AND NOT EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id)
      ON CONFLICT DO NOTHING;
      INSERT INTO flotilla.unclaimed_complete_buildrequests (brid)
      SELECT r.id FROM new_rows r
      WHERE coalesce(r.complete, 0) <> 0 AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.id = r.id)
        AND NOT EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id)
      ON CONFLICT DO NOTHING;
    END IF;
  END IF;
  RETURN NULL;
END $$;

-- A claim moves its request from claimed=false to claimed=true (and back when it goes). The
-- totals are 0004's; only where the request's id is kept changed.
CREATE OR REPLACE FUNCTION flotilla.count_claims() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, sum(d) FROM (
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0, true)) AS s, 1 AS d
        FROM new_rows c JOIN public.buildrequests r ON r.id = c.brid
      UNION ALL
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0, false)), -1
        FROM new_rows c JOIN public.buildrequests r ON r.id = c.brid
    ) x GROUP BY s HAVING sum(d) <> 0;
    DELETE FROM flotilla.unclaimed_buildrequests u USING new_rows c WHERE u.brid = c.brid;
    DELETE FROM flotilla.unclaimed_complete_buildrequests u USING new_rows c WHERE u.brid = c.brid;
  ELSE
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, sum(d) FROM (
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0, false)) AS s, 1 AS d
        FROM old_rows c JOIN public.buildrequests r ON r.id = c.brid
      UNION ALL
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0, true)), -1
        FROM old_rows c JOIN public.buildrequests r ON r.id = c.brid
    ) x GROUP BY s HAVING sum(d) <> 0;
    -- A request being deleted is no longer visible here: its own trigger clears its id.
    INSERT INTO flotilla.unclaimed_buildrequests (brid)
    SELECT c.brid FROM old_rows c JOIN public.buildrequests r ON r.id = c.brid
    WHERE coalesce(r.complete, 0) = 0
    ON CONFLICT DO NOTHING;
    INSERT INTO flotilla.unclaimed_complete_buildrequests (brid)
    SELECT c.brid FROM old_rows c JOIN public.buildrequests r ON r.id = c.brid
    WHERE coalesce(r.complete, 0) <> 0
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;

-- Move what 0004's set holds that is not a pending request: complete requests to their own
-- table, ids of requests that no longer exist nowhere. 0004's set was exact (its triggers are
-- tested against the ground truth), so this reads only that set, never every request.
WITH gone AS (
  DELETE FROM flotilla.unclaimed_buildrequests u
  WHERE NOT EXISTS (SELECT 1 FROM public.buildrequests r WHERE r.id = u.brid AND coalesce(r.complete, 0) = 0)
  RETURNING u.brid)
INSERT INTO flotilla.unclaimed_complete_buildrequests (brid)
SELECT g.brid FROM gone g JOIN public.buildrequests r ON r.id = g.brid
ON CONFLICT DO NOTHING;

-- Write versions (0007): the new table changes version like every other table pages read.
CREATE OR REPLACE TRIGGER flotilla_version
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON flotilla.unclaimed_complete_buildrequests
  FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_write();
