-- Artifacts: the files a build's transfer steps upload (services/core/data/artifacts.ts).
--
-- Each is a PostgreSQL large object, so that every master (which writes it block by block as
-- the worker sends it) and every API pod (which streams it back) reach the same bytes with
-- nothing shared but the database. A row is written when the upload starts and marked
-- complete at its end; an upload that fails is deleted with its object, as Buildbot's
-- FileWriter removes a partial file. Deleting a row (or its build) unlinks the object.
CREATE TABLE IF NOT EXISTS flotilla.artifacts (
  id serial PRIMARY KEY,
  buildid integer NOT NULL REFERENCES public.builds (id) ON DELETE CASCADE,
  stepid integer NOT NULL REFERENCES public.steps (id) ON DELETE CASCADE,
  -- The step's masterdest: a path-like name, unique in its build.
  name text NOT NULL,
  -- 'file', or 'directory' (a tar archive of it; compress says whether gzipped).
  kind text NOT NULL CHECK (kind IN ('file', 'directory')),
  compress text CHECK (compress IN ('gz', 'bz2')),
  -- Permission bits Buildbot's FileWriter would have set on the master's copy (mode).
  mode integer,
  object oid NOT NULL,
  length bigint NOT NULL DEFAULT 0,
  complete boolean NOT NULL DEFAULT false,
  created_at integer NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS artifacts_build_name ON flotilla.artifacts (buildid, name);
CREATE INDEX IF NOT EXISTS artifacts_step ON flotilla.artifacts (stepid);

CREATE OR REPLACE FUNCTION flotilla.artifacts_unlink() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM lo_unlink(OLD.object) FROM pg_largeobject_metadata WHERE oid = OLD.object;
  RETURN OLD;
END
$$;

DROP TRIGGER IF EXISTS artifacts_unlink ON flotilla.artifacts;
CREATE TRIGGER artifacts_unlink AFTER DELETE ON flotilla.artifacts
  FOR EACH ROW EXECUTE FUNCTION flotilla.artifacts_unlink();
