-- flotilla:concurrent
-- The previous successful build, both ways it is asked (load/results/fleet-reads.md, "prev_success
-- at 2.5M builds"):
--
-- As REST, `/builders/{b}/builds?results=0&complete=true&number__lt={n}&order=-number&limit=1`
-- (Buildbot's getPrevSuccessfulBuild as its reporters ask it): builds_number walked back from
-- n over every failed build, a heap visit each; on a builder whose last 2,000 builds failed
-- (#4055's case) 1,837 visits, 1,807 of them reads, 294 ms in one run with 20 builds running.
-- Partial on results = 0, whose value the API's custom plans see, as 0033's index; carrying
-- complete_at, so that the read's total (complete=true) is an index-only count.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_builds_builder_success_number
  ON public.builds USING btree (builderid, number) INCLUDE (complete_at) WHERE results = 0;
-- For a build's changes (services/api/registry/resources/changes.ts), the stamps with a
-- (repository, branch, codebase), written as that file's STAMP_KEY is, so that a build whose
-- branch none of its builder's recent successes built finds the earlier successes of that
-- branch from their stamps instead of comparing the stamps of every success of the builder.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_sourcestamps_key
  ON public.sourcestamps USING btree ((repository || chr(1) || coalesce(branch, chr(2)) || chr(1) || codebase));
