-- The count triggers' scope functions (0004) made inlinable, as 0044 did for the write keys
-- (issue 35: a build's start and a claim pass, load/results/fleet.md 2026-11-29 05:50-06:30).
--
-- 0004 declared flotilla.build_scopes, buildrequest_scopes and buildset_scopes IMMUTABLE, but
-- joined text to a number or a boolean with `||` (text || anynonarray: STABLE, it calls the
-- type's output function), and PostgreSQL inlines no SQL function whose body is more volatile
-- than its declaration. So each was called as a function of its own, once per row, parsed and
-- planned again at each execution of the trigger statement that calls it: a build's INSERT,
-- each claim pass's claims, every request's and build set's update. With the casts below
-- (immutable: int4out and boolean's text cast) the planner puts the array expression into the
-- trigger's statement. Timed on the fleet's database after a phase S (load/fleet/count-scopes.sql,
-- the commands in its head: 500 single-row writes of each in one rolled-back transaction),
-- 0004's functions and these in turns, four turns, load 8.4-8.8 (2026-11-29 05:56):
--
--   a build's row                0.263-0.445 ms before, 0.153-0.344 ms after
--   a request's claim            0.460-0.707 ms before, 0.249-0.300 ms after
--
-- The spelling is the same: `'x=' || 5` and `'x=' || 5::text` are both 'x=5', `'x=' || true`
-- and `'x=' || true::text` both 'x=true' (test/db/count-scopes-0045.test.ts compares the old
-- and new functions' arrays and checks that the planner inlines the new ones).
CREATE OR REPLACE FUNCTION flotilla.build_scopes(builderid int, workerid int, complete boolean) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY['', 'builderid=' || builderid::text, 'complete=' || complete::text,
               'builderid=' || builderid::text || '&complete=' || complete::text]
         || CASE WHEN workerid IS NULL THEN ARRAY[]::text[] ELSE ARRAY['workerid=' || workerid::text] END;
$$;

CREATE OR REPLACE FUNCTION flotilla.buildrequest_scopes(builderid int, complete boolean, claimed boolean) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY['', 'builderid=' || builderid::text, 'complete=' || complete::text, 'claimed=' || claimed::text,
               'builderid=' || builderid::text || '&complete=' || complete::text,
               'builderid=' || builderid::text || '&claimed=' || claimed::text,
               'complete=' || complete::text || '&claimed=' || claimed::text,
               'builderid=' || builderid::text || '&complete=' || complete::text || '&claimed=' || claimed::text];
$$;

CREATE OR REPLACE FUNCTION flotilla.buildset_scopes(complete boolean) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$ SELECT ARRAY['', 'complete=' || complete::text]; $$;
