-- The object-store backfill's batch queries (services/core/data/object-backfill.ts) on a
-- million logs and a million artifacts of which one in a thousand is still in PostgreSQL,
-- spread over the ids (the worst case for a walk in id order). Self-contained: its own schema
-- with the tables and indexes the queries use (as migrations 0001, 0005, 0029, 0030 and 0039
-- make them), dropped at the end. Run on any PostgreSQL 15:
--   psql -X -q -f load/bench/object-store/backfill-explain.sql postgres://...
\set ON_ERROR_STOP on
DROP SCHEMA IF EXISTS backfill_explain CASCADE;
CREATE SCHEMA backfill_explain;
SET search_path = backfill_explain;
CREATE TABLE logs (id integer PRIMARY KEY, complete smallint NOT NULL, type varchar(1) NOT NULL);
CREATE TABLE logchunks (logid integer NOT NULL, first_line integer NOT NULL, last_line integer NOT NULL, content bytea);
CREATE INDEX logchunks_firstline ON logchunks (logid, first_line);
CREATE TABLE log_objects (logid integer PRIMARY KEY);
CREATE TABLE artifacts (id integer PRIMARY KEY, complete boolean NOT NULL, object_key text, length bigint NOT NULL);
INSERT INTO logs SELECT i, 1, 's' FROM generate_series(1, 1000000) i;
INSERT INTO log_objects SELECT i FROM generate_series(1, 1000000) i WHERE i % 1000 <> 0;
INSERT INTO logchunks SELECT i, c * 10, c * 10 + 9, '\x00' FROM generate_series(1000, 1000000, 1000) i, generate_series(0, 4) c;
INSERT INTO artifacts SELECT i, true, CASE WHEN i % 1000 = 0 THEN NULL ELSE 'k' END, 1024 FROM generate_series(1, 1000000) i;
CREATE INDEX flotilla_artifacts_to_move ON artifacts (id) WHERE complete AND object_key IS NULL;
VACUUM ANALYZE logs, logchunks, log_objects, artifacts;

\echo 'logs, as object-backfill.ts finds them (a loose index scan of logchunks): a batch of 100 from the middle'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON)
WITH RECURSIVE held(logid) AS (
  SELECT (SELECT min(logid) FROM logchunks WHERE logid > 500000)
  UNION ALL
  SELECT (SELECT min(c.logid) FROM logchunks c WHERE c.logid > held.logid) FROM held WHERE held.logid IS NOT NULL
), batch AS (SELECT logid FROM held WHERE logid IS NOT NULL LIMIT 100)
SELECT b.logid, (l.complete <> 0 AND l.type <> 'd') AS movable
FROM batch b JOIN logs l ON l.id = b.logid ORDER BY b.logid;

\echo 'logs, walked over the logs table instead (what was not done): finished, not moved'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON)
SELECT l.id FROM logs l
WHERE l.id > 0 AND l.complete <> 0 AND l.type <> 'd'
  AND NOT EXISTS (SELECT 1 FROM log_objects o WHERE o.logid = l.id)
ORDER BY l.id LIMIT 100;

\echo 'artifacts, as object-backfill.ts finds them (the partial index of migration 0039)'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON)
SELECT id, length <= 67108864 AS movable FROM artifacts
WHERE complete AND object_key IS NULL AND id > 500000 ORDER BY id LIMIT 100;
DROP INDEX flotilla_artifacts_to_move;
\echo 'artifacts without that index'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON)
SELECT id, length <= 67108864 AS movable FROM artifacts
WHERE complete AND object_key IS NULL AND id > 500000 ORDER BY id LIMIT 100;
DROP SCHEMA backfill_explain CASCADE;
