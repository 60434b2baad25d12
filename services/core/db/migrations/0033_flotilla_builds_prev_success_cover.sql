-- flotilla:concurrent
-- 0028's index of a builder's successful builds by completion, with the columns the previous-
-- successful-build scan reads (services/api/registry/resources/changes.ts: number to skip the
-- builds at or after the one asked about, id and buildrequestid for the candidate's stamps),
-- so that it is an index-only scan: asked about an old build, the scan passes every newer
-- success of the builder before the first older one. On the ten-million-build set
-- (load/generate/fleet.sql, 10,000 builds a builder) /builds/499037/changes (builder 37,
-- build 500) passed 9,501 of them: 129 ms with 0028's index (a heap visit each: 113 ms of
-- it), 18.9 ms with this one (4 ms; EXPLAIN ANALYZE of the fragment, psql -v buildid=499037,
-- load/results/fleet-reads.md); prev_success's p95 was 2.6 s with 20 builds running.
-- It replaces 0028's, whose key it shares.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_builds_builder_success_cover
  ON public.builds USING btree (builderid, complete_at DESC NULLS LAST) INCLUDE (number, id, buildrequestid)
  WHERE results = 0;
DROP INDEX CONCURRENTLY IF EXISTS public.flotilla_builds_builder_success;
