-- GET /builds/N/steps  (pgbench -D build=N): the build's existence (404 or not), its steps
-- in id order and their exact count (a handful of rows: count(*) is the best total here).
SELECT s.id, s.number, s.name, s.buildid, s.started_at, s.complete_at, s.complete_at IS NOT NULL AS complete,
       s.state_string, s.results, s.urls_json, s.hidden,
       count(*) OVER () AS total
FROM builds b
JOIN steps s ON s.buildid = b.id
WHERE b.id = :build
ORDER BY s.id;
