-- The artifacts an object-store backfill moves (services/core/data/object-backfill.ts): complete
-- and still in PostgreSQL. Partial, so that it holds only those and a walk over it reads nothing
-- else however many artifacts have moved. Not CONCURRENTLY: migrate.ts cleans up an interrupted
-- concurrent build only in `public`, and flotilla.artifacts has a row per artifact (not per
-- chunk), so the build holds its writes for about a second per million rows at most.
CREATE INDEX IF NOT EXISTS flotilla_artifacts_to_move
  ON flotilla.artifacts USING btree (id) WHERE complete AND object_key IS NULL;
