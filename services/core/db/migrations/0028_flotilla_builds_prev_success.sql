-- flotilla:concurrent
-- A builder's successful builds, newest completion first: the previous successful build that
-- /builds/{id}/changes stops at (Buildbot's getPrevSuccessfulBuild orders by complete_at),
-- services/api/registry/resources/changes.ts. Without it every successful build of the
-- builder had its source stamps compared before a sort (the build page's 4-6 s on the 1M-row
-- set, load/results/web-pages.md); with it the scan stops at the first that matches.
-- Partial: only successful builds are ever looked for.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_builds_builder_success
  ON public.builds USING btree (builderid, complete_at DESC NULLS LAST) WHERE results = 0;
