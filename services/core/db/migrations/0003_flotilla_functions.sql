-- Helpers the read API uses, in our own schema.
--
-- Property values are JSON text that Buildbot (or an older Buildbot, or a hand-written
-- script) stored; a malformed value must cost its property, never the whole response.
CREATE OR REPLACE FUNCTION flotilla.try_json(value text) RETURNS json
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN value::json;
EXCEPTION WHEN others THEN
  RETURN NULL;
END;
$$;
