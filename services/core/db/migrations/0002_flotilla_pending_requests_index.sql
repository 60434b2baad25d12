-- flotilla:concurrent
-- Pending build requests, oldest first: what the distributor and
-- /buildrequests?complete=false read. Buildbot's own buildrequests_complete index
-- leads with `complete` and still walks every complete row to find the pending ones.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_buildrequests_pending
  ON public.buildrequests USING btree (id) WHERE complete = 0;
