-- Finished logs moved to the object store (services/core/data/log-objects.ts,
-- docs/object-store.md). A moved log keeps its row in logs; its chunks leave logchunks for one
-- object, and log_object_chunks indexes that object as logchunks indexed the rows: each
-- chunk's lines, codec, and where its bytes are in the object, so a range of lines is one
-- ranged GET of only the chunks that hold it.
CREATE TABLE IF NOT EXISTS flotilla.log_objects (
  logid    integer     PRIMARY KEY REFERENCES public.logs (id) ON DELETE CASCADE,
  key      text        NOT NULL,
  bytes    bigint      NOT NULL,
  moved_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS flotilla.log_object_chunks (
  logid       integer  NOT NULL REFERENCES flotilla.log_objects (logid) ON DELETE CASCADE,
  first_line  integer  NOT NULL,
  last_line   integer  NOT NULL,
  compressed  smallint NOT NULL,
  byte_offset bigint   NOT NULL,
  byte_length integer  NOT NULL,
  PRIMARY KEY (logid, first_line)
);
-- Objects whose rows are gone (a log deleted with its build, a log past its horizon): the
-- retention job deletes them from the store, then their row here. A trigger, so that no way
-- of deleting a log (a cascade from its build or step, by us or by a Buildbot master sharing
-- the database) leaves an object nobody knows of.
CREATE TABLE IF NOT EXISTS flotilla.object_garbage (
  key   text        PRIMARY KEY,
  since timestamptz NOT NULL DEFAULT now()
);
CREATE OR REPLACE FUNCTION flotilla.log_object_garbage() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO flotilla.object_garbage (key) VALUES (OLD.key) ON CONFLICT (key) DO NOTHING;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS log_objects_garbage ON flotilla.log_objects;
CREATE TRIGGER log_objects_garbage AFTER DELETE ON flotilla.log_objects
  FOR EACH ROW EXECUTE FUNCTION flotilla.log_object_garbage();
