-- Flotilla's objects on Buildbot 4.3's tables (0021, or a database Buildbot 4.3 upgraded):
-- runs on both, so it only adds what is Flotilla's.
--
-- Buildbot 4.3's migration 066 leaves builds.locks_duration_s NOT NULL without a default; a
-- Flotilla master (and a Buildbot 3.7 one on a database 0021 upgraded) inserts builds without
-- the column, so it gets 0, the value 066 gave every earlier build. Buildbot 4.3 always writes
-- the column itself, so the default changes nothing it does.
ALTER TABLE public.builds ALTER COLUMN locks_duration_s SET DEFAULT 0;

-- Write versions (0007): pages that read the new tables can be cached like the others.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['projects', 'codebases', 'codebase_commits', 'codebase_branches'] LOOP
    EXECUTE format('CREATE OR REPLACE TRIGGER flotilla_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE '
                   'ON public.%I FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_write()', t);
  END LOOP;
END $$;
