-- Log chunks get a write version too (0007 left them out), so that the contents of a finished
-- log can be kept by the page cache like any other page. The cost is one appended count row
-- per statement that writes chunks (a batch of lines, not a line), measured against the log
-- ingestion benchmark in load/RESULTS.md.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'public.logchunks'::regclass AND tgname = 'flotilla_version') THEN
    CREATE TRIGGER flotilla_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON public.logchunks
      FOR EACH STATEMENT EXECUTE FUNCTION flotilla.count_write();
  END IF;
END $$;
