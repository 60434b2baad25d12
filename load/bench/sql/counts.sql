-- A stand-in for the counters the API keeps with triggers (a counts table keyed by
-- collection and scope), so that pgbench can time "the page plus a one-row total lookup".
-- Filled here from count(*) on the generated data; recreate after regenerating.
--   psql -X -v ON_ERROR_STOP=1 -f load/bench/sql/counts.sql $DATABASE_URL
-- It lives in its own schema (load_bench) and is read only by these pgbench scripts.
CREATE SCHEMA IF NOT EXISTS load_bench;
DROP TABLE IF EXISTS load_bench.counts;
CREATE TABLE load_bench.counts (
  collection text NOT NULL,
  scope text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (collection, scope)
);
INSERT INTO load_bench.counts (collection, scope, n)
SELECT 'changes', '', count(*) FROM changes
UNION ALL SELECT 'builds', '', count(*) FROM builds
UNION ALL SELECT 'builds', 'builderid=1', count(*) FROM builds WHERE builderid = 1
UNION ALL SELECT 'builds', 'builderid=1&complete=true', count(*) FROM builds WHERE builderid = 1 AND complete_at IS NOT NULL
UNION ALL SELECT 'buildrequests', 'complete=false', count(*) FROM buildrequests WHERE coalesce(complete, 0) = 0
UNION ALL SELECT 'buildrequests', 'claimed=false', count(*) FROM buildrequests br
  WHERE NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = br.id)
UNION ALL SELECT 'buildsets', '', count(*) FROM buildsets;
ANALYZE load_bench.counts;
