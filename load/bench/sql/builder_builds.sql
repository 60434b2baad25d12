-- GET /builders/1/builds?order=-number&limit=50 (builds_number is (builderid, number)).
-- The builder's existence decides between a page and a 404, so it is part of the answer.
-- pgbench -D total=0: the page alone; 1: page + counter row; 2: page + exact count(*).
SELECT EXISTS (SELECT 1 FROM builders WHERE id = 1) AS builder_exists;
SELECT b.id, b.number, b.builderid, b.buildrequestid, b.workerid, b.masterid, b.started_at,
       b.complete_at, b.complete_at IS NOT NULL AS complete, b.state_string, b.results
FROM builds b
WHERE b.builderid = 1
ORDER BY b.number DESC
LIMIT 50;
\if :total = 1
SELECT n FROM load_bench.counts WHERE collection = 'builds' AND scope = 'builderid=1';
\elif :total = 2
SELECT count(*) FROM builds WHERE builderid = 1;
\endif
