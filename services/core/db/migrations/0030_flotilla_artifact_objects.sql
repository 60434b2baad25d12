-- Finished artifacts moved to the object store (services/core/data/artifact-objects.ts,
-- docs/object-store.md). A moved artifact keeps its row; its large object is unlinked in the
-- transaction that records object_key, so a row has its bytes in exactly one place: `object`
-- (PostgreSQL) while object_key is null, the store's object after.
ALTER TABLE flotilla.artifacts ADD COLUMN IF NOT EXISTS object_key text;
ALTER TABLE flotilla.artifacts ALTER COLUMN object DROP NOT NULL;

-- Deleting a row (a replaced upload, retention, a build deleted by anyone, by cascade) unlinks
-- its large object as before, or lists its object's key in object_garbage, which the retention
-- job deletes from the store (as for logs, migration 0029): no way of deleting an artifact
-- leaves an object nobody knows of.
CREATE OR REPLACE FUNCTION flotilla.artifacts_unlink() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.object IS NOT NULL THEN
    PERFORM lo_unlink(OLD.object) FROM pg_largeobject_metadata WHERE oid = OLD.object;
  END IF;
  IF OLD.object_key IS NOT NULL THEN
    INSERT INTO flotilla.object_garbage (key) VALUES (OLD.object_key) ON CONFLICT (key) DO NOTHING;
  END IF;
  RETURN OLD;
END
$$;
