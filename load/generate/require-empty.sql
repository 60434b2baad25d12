-- Refuse a database that holds data: included (\ir) by generate.sql and fleet.sql first.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM changes) OR EXISTS (SELECT 1 FROM builds) OR EXISTS (SELECT 1 FROM masters) THEN
    RAISE EXCEPTION 'the database already holds data: generate into a freshly migrated database';
  END IF;
END $$;
