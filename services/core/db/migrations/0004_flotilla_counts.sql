-- Exact totals that cost the same on ten thousand rows as on ten million.
--
-- meta.total must be exact, and a count(*) over 500k builds or 1M changes costs 15-26 ms on
-- this class of machine, most of what a page would cost. So the database keeps the totals
-- itself, for the collections and scopes clients really page through:
--
--   builds:        all, by builder, by worker, by completeness, by builder and completeness
--   buildrequests: all combinations of builder, completeness and claimed
--   buildsets:     all, by completeness
--   changes, sourcestamps: all
--
-- A scope is a key such as 'builderid=3&complete=true' (dimensions in a fixed order). Triggers
-- on the tables themselves maintain them, so the totals stay true whoever writes: Flotilla, or
-- a Buildbot 3.7 master sharing the database. The triggers are statement-level with transition
-- tables, so a bulk insert costs one aggregate, not one call per row.
--
-- Totals are kept as deltas that are only ever appended (+n, -n), never as one row updated
-- in place: concurrent writers never wait on each other's counter row and cannot deadlock
-- on counters. A total is the sum of its scope's deltas; flotilla.compact_counts() folds them
-- (the API calls it when a scope has gathered many deltas; masters call it periodically).
CREATE TABLE flotilla.count_deltas (
  tbl text NOT NULL,
  scope text NOT NULL,
  n bigint NOT NULL
);
CREATE INDEX count_deltas_scope ON flotilla.count_deltas (tbl, scope) INCLUDE (n);

-- Fold each scope's deltas into one row, atomically (readers see the same sum before and after).
CREATE FUNCTION flotilla.compact_counts() RETURNS void LANGUAGE sql AS $$
  WITH gone AS (DELETE FROM flotilla.count_deltas RETURNING tbl, scope, n)
  INSERT INTO flotilla.count_deltas (tbl, scope, n)
  SELECT tbl, scope, sum(n) FROM gone GROUP BY tbl, scope HAVING sum(n) <> 0;
$$;

-- The scopes one row counts in. Keys list dimensions in this order: builderid, workerid,
-- complete, claimed.
CREATE FUNCTION flotilla.build_scopes(builderid int, workerid int, complete boolean) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY['', 'builderid=' || builderid, 'complete=' || complete,
               'builderid=' || builderid || '&complete=' || complete]
         || CASE WHEN workerid IS NULL THEN ARRAY[]::text[] ELSE ARRAY['workerid=' || workerid] END;
$$;

CREATE FUNCTION flotilla.buildrequest_scopes(builderid int, complete boolean, claimed boolean) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY['', 'builderid=' || builderid, 'complete=' || complete, 'claimed=' || claimed,
               'builderid=' || builderid || '&complete=' || complete,
               'builderid=' || builderid || '&claimed=' || claimed,
               'complete=' || complete || '&claimed=' || claimed,
               'builderid=' || builderid || '&complete=' || complete || '&claimed=' || claimed];
$$;

CREATE FUNCTION flotilla.buildset_scopes(complete boolean) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$ SELECT ARRAY['', 'complete=' || complete]; $$;

-- Each trigger function reads the transition tables its event has: new rows count +1 in
-- their scopes, old rows -1; an update that changes no dimension adds nothing.

-- builds -------------------------------------------------------------------------------
CREATE FUNCTION flotilla.count_builds() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'builds', s, count(*) FROM new_rows,
      unnest(flotilla.build_scopes(builderid, workerid, complete_at IS NOT NULL)) s GROUP BY s;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'builds', s, -count(*) FROM old_rows,
      unnest(flotilla.build_scopes(builderid, workerid, complete_at IS NOT NULL)) s GROUP BY s;
  ELSE
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'builds', s, sum(d) FROM (
      SELECT unnest(flotilla.build_scopes(builderid, workerid, complete_at IS NOT NULL)) AS s, 1 AS d FROM new_rows
      UNION ALL
      SELECT unnest(flotilla.build_scopes(builderid, workerid, complete_at IS NOT NULL)), -1 FROM old_rows
    ) x GROUP BY s HAVING sum(d) <> 0;
  END IF;
  RETURN NULL;
END $$;

-- buildrequests and their claims ---------------------------------------------------------
-- Whether a request is claimed comes from the unclaimed set below, except for a new row
-- (which cannot have a claim yet): when a request is deleted, its claims are gone (ON
-- DELETE CASCADE) before this trigger runs, but the set still knows.
CREATE FUNCTION flotilla.count_buildrequests() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, count(*) FROM new_rows r,
      unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
        EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id))) s GROUP BY s;
    INSERT INTO flotilla.unclaimed_buildrequests (brid)
    SELECT r.id FROM new_rows r
    WHERE NOT EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id)
    ON CONFLICT DO NOTHING;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, -count(*) FROM old_rows r,
      unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
        NOT EXISTS (SELECT 1 FROM flotilla.unclaimed_buildrequests u WHERE u.brid = r.id))) s GROUP BY s;
    DELETE FROM flotilla.unclaimed_buildrequests u USING old_rows r WHERE u.brid = r.id;
  ELSE
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, sum(d) FROM (
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
               NOT EXISTS (SELECT 1 FROM flotilla.unclaimed_buildrequests u WHERE u.brid = r.id))) AS s, 1 AS d
        FROM new_rows r
      UNION ALL
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
               NOT EXISTS (SELECT 1 FROM flotilla.unclaimed_buildrequests u WHERE u.brid = r.id))), -1
        FROM old_rows r
    ) x GROUP BY s HAVING sum(d) <> 0;
  END IF;
  RETURN NULL;
END $$;

-- A claim moves its request from claimed=false to claimed=true (and back when it goes).
CREATE FUNCTION flotilla.count_claims() RETURNS trigger LANGUAGE plpgsql AS $$
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
  ELSE
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildrequests', s, sum(d) FROM (
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0, false)) AS s, 1 AS d
        FROM old_rows c JOIN public.buildrequests r ON r.id = c.brid
      UNION ALL
      SELECT unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0, true)), -1
        FROM old_rows c JOIN public.buildrequests r ON r.id = c.brid
    ) x GROUP BY s HAVING sum(d) <> 0;
    INSERT INTO flotilla.unclaimed_buildrequests (brid)
    SELECT c.brid FROM old_rows c JOIN public.buildrequests r ON r.id = c.brid
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;

-- buildsets, changes, sourcestamps ----------------------------------------------------------
CREATE FUNCTION flotilla.count_buildsets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildsets', s, count(*) FROM new_rows, unnest(flotilla.buildset_scopes(complete <> 0)) s GROUP BY s;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildsets', s, -count(*) FROM old_rows, unnest(flotilla.buildset_scopes(complete <> 0)) s GROUP BY s;
  ELSE
    INSERT INTO flotilla.count_deltas (tbl, scope, n)
    SELECT 'buildsets', s, sum(d) FROM (
      SELECT unnest(flotilla.buildset_scopes(complete <> 0)) AS s, 1 AS d FROM new_rows
      UNION ALL
      SELECT unnest(flotilla.buildset_scopes(complete <> 0)), -1 FROM old_rows
    ) x GROUP BY s HAVING sum(d) <> 0;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION flotilla.count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE delta bigint;
BEGIN
  IF TG_OP = 'INSERT' THEN SELECT count(*) INTO delta FROM new_rows;
  ELSE SELECT -count(*) INTO delta FROM old_rows; END IF;
  IF delta <> 0 THEN
    INSERT INTO flotilla.count_deltas (tbl, scope, n) VALUES (TG_TABLE_NAME, '', delta);
  END IF;
  RETURN NULL;
END $$;

-- The requests nobody has claimed: few, and what `claimed=false` asks for; without this set
-- that filter is an anti-join over every request ever made.
CREATE TABLE flotilla.unclaimed_buildrequests (brid integer PRIMARY KEY);

-- Triggers first: CREATE TRIGGER locks each table against writers until this transaction
-- commits, so the backfill below sees every row and no row escapes both.
CREATE TRIGGER flotilla_count_ins AFTER INSERT ON public.builds
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_builds();
CREATE TRIGGER flotilla_count_upd AFTER UPDATE ON public.builds
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_builds();
CREATE TRIGGER flotilla_count_del AFTER DELETE ON public.builds
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_builds();

CREATE TRIGGER flotilla_count_ins AFTER INSERT ON public.buildrequests
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_buildrequests();
CREATE TRIGGER flotilla_count_upd AFTER UPDATE ON public.buildrequests
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_buildrequests();
CREATE TRIGGER flotilla_count_del AFTER DELETE ON public.buildrequests
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_buildrequests();

CREATE TRIGGER flotilla_count_ins AFTER INSERT ON public.buildrequest_claims
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_claims();
CREATE TRIGGER flotilla_count_del AFTER DELETE ON public.buildrequest_claims
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_claims();

CREATE TRIGGER flotilla_count_ins AFTER INSERT ON public.buildsets
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_buildsets();
CREATE TRIGGER flotilla_count_upd AFTER UPDATE ON public.buildsets
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_buildsets();
CREATE TRIGGER flotilla_count_del AFTER DELETE ON public.buildsets
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_buildsets();

CREATE TRIGGER flotilla_count_ins AFTER INSERT ON public.changes
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_rows();
CREATE TRIGGER flotilla_count_del AFTER DELETE ON public.changes
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_rows();
CREATE TRIGGER flotilla_count_ins AFTER INSERT ON public.sourcestamps
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_rows();
CREATE TRIGGER flotilla_count_del AFTER DELETE ON public.sourcestamps
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_rows();

-- Backfill what an existing database already holds.
INSERT INTO flotilla.count_deltas (tbl, scope, n)
SELECT 'builds', s, count(*) FROM public.builds,
  unnest(flotilla.build_scopes(builderid, workerid, complete_at IS NOT NULL)) s GROUP BY s;
INSERT INTO flotilla.count_deltas (tbl, scope, n)
SELECT 'buildrequests', s, count(*) FROM public.buildrequests r,
  unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
    EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id))) s GROUP BY s;
INSERT INTO flotilla.count_deltas (tbl, scope, n)
SELECT 'buildsets', s, count(*) FROM public.buildsets, unnest(flotilla.buildset_scopes(complete <> 0)) s GROUP BY s;
INSERT INTO flotilla.count_deltas (tbl, scope, n) SELECT 'changes', '', count(*) FROM public.changes;
INSERT INTO flotilla.count_deltas (tbl, scope, n) SELECT 'sourcestamps', '', count(*) FROM public.sourcestamps;
INSERT INTO flotilla.unclaimed_buildrequests (brid)
SELECT r.id FROM public.buildrequests r
WHERE NOT EXISTS (SELECT 1 FROM public.buildrequest_claims c WHERE c.brid = r.id);
