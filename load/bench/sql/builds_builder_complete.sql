-- GET /builds?builderid=1&complete=true&order=-buildid&limit=50
-- (newest first on the primary key, keeping builder 1's finished builds: one row in 5 here).
-- pgbench -D total=0: the page alone; 1: page + counter row; 2: page + exact count(*).
SELECT b.id, b.number, b.builderid, b.buildrequestid, b.workerid, b.masterid, b.started_at,
       b.complete_at, b.complete_at IS NOT NULL AS complete, b.state_string, b.results
FROM builds b
WHERE b.builderid = 1 AND b.complete_at IS NOT NULL
ORDER BY b.id DESC
LIMIT 50;
\if :total = 1
SELECT n FROM load_bench.counts WHERE collection = 'builds' AND scope = 'builderid=1&complete=true';
\elif :total = 2
SELECT count(*) FROM builds WHERE builderid = 1 AND complete_at IS NOT NULL;
\endif
