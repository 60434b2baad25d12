-- flotilla:concurrent
-- Deleting a build (the retention job, services/core/data/retention.ts) checks the build sets
-- that name it as rebuilt (buildsets.rebuilt_buildid, ON DELETE SET NULL), a column that
-- migration 0021 brought with Buildbot 4.3's schema, without an index: each deleted build
-- scanned every build set. On the real-masters retention benchmark
-- (load/bench/retention/masters.ts, 100,000 builds and build sets), a batch of 100 builds took
-- 6.2-7.4 s before this index (PostgreSQL's log), 2.1 s with it, the rest being a plan that
-- deleteBuilds now avoids. Partial, like migration 0018's for parent_buildid: the column is
-- mostly NULL, and the check's `= $1` implies NOT NULL, so the planner uses it.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_buildsets_rebuilt
  ON public.buildsets USING btree (rebuilt_buildid) WHERE rebuilt_buildid IS NOT NULL;
