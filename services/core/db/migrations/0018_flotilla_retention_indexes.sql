-- flotilla:concurrent
-- Indexes the retention job's deletes need (services/core/data/retention.ts): Buildbot's
-- schema has foreign keys whose referencing columns have no index, so PostgreSQL's check of
-- each deleted row scans the whole referencing table. Deleting builds became quadratic in the
-- number of builds: load/bench/retention/run.ts deleted 10,000 builds with 100,000 chunks in 121 s,
-- most of it scanning build sets for those each deleted build triggered
-- (buildsets.parent_buildid, ON DELETE SET NULL). Partial where the column is mostly NULL: the check's `= $1` implies
-- NOT NULL, so the planner uses them.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_buildsets_parent
  ON public.buildsets USING btree (parent_buildid) WHERE parent_buildid IS NOT NULL;
-- Changes' parents (ON DELETE SET NULL), when changes go.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_changes_parent
  ON public.changes USING btree (parent_changeids) WHERE parent_changeids IS NOT NULL;
-- Test result sets of a build and of a step (ON DELETE CASCADE), when builds go.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_test_result_sets_build
  ON public.test_result_sets USING btree (buildid);
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_test_result_sets_step
  ON public.test_result_sets USING btree (stepid);
