-- flotilla:concurrent
-- Pending build requests again, now with the predicate the API uses: buildrequests.complete
-- may be NULL (Buildbot's column allows it; DEFAULT 0), and NULL means not complete. An index
-- on `complete = 0` cannot serve `coalesce(complete, 0) = 0`, so this one replaces 0002's.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_buildrequests_pending_v2
  ON public.buildrequests USING btree (id) WHERE coalesce(complete, 0) = 0;
DROP INDEX CONCURRENTLY IF EXISTS public.flotilla_buildrequests_pending;
