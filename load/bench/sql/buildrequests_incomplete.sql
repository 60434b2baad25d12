-- GET /buildrequests?complete=false&limit=50 (id order). Buildbot's column allows NULL, which
-- means not complete; the partial index flotilla_buildrequests_pending_v2 (id) WHERE
-- coalesce(complete, 0) = 0 of migration 0006 serves page and count.
-- pgbench -D total=0: the page alone; 1: page + counter row; 2: page + exact count(*).
SELECT br.id, br.buildsetid, br.builderid, br.priority, br.complete, br.results, br.submitted_at,
       br.complete_at, br.waited_for, c.brid IS NOT NULL AS claimed, c.claimed_at,
       c.masterid AS claimed_by_masterid
FROM buildrequests br
LEFT JOIN buildrequest_claims c ON c.brid = br.id
WHERE coalesce(br.complete, 0) = 0
ORDER BY br.id
LIMIT 50;
\if :total = 1
SELECT n FROM load_bench.counts WHERE collection = 'buildrequests' AND scope = 'complete=false';
\elif :total = 2
SELECT count(*) FROM buildrequests WHERE coalesce(complete, 0) = 0;
\endif
