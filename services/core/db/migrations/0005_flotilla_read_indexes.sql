-- flotilla:concurrent
-- Indexes the read API's pages need on a large database; each named for what it serves.
-- Running builds, newest first (builds?complete=false): few rows among many.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_builds_running
  ON public.builds USING btree (id) WHERE complete_at IS NULL;
-- A builder's builds by id (builds?builderid=N&order=-buildid).
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_builds_builder_id
  ON public.builds USING btree (builderid, id);
-- A range of log lines: the chunks that end at or after the first line, with first_line in
-- the index so that chunks before the range are skipped without reading their rows.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_logchunks_range
  ON public.logchunks USING btree (logid, last_line) INCLUDE (first_line);
-- A builder's requests by id.
CREATE INDEX CONCURRENTLY IF NOT EXISTS flotilla_buildrequests_builder_id
  ON public.buildrequests USING btree (builderid, id);
