-- flotilla:concurrent
-- The build sets of a source stamp: before a scheduler builds a change it looks for a build
-- set of its own name that already builds the change's stamp (a Buildbot master running the
-- same scheduler before it, services/core/data/schedulers.ts changesBuiltBy). Buildbot's
-- schema indexes buildset_sourcestamps by build set only.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_buildset_sourcestamps_stamp
  ON public.buildset_sourcestamps USING btree (sourcestampid);
