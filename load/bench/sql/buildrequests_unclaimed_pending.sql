-- GET /buildrequests?claimed=false&order=-priority&order=submitted_at&limit=50, when the
-- store guarantees that a complete request is claimed (Buildbot claims before it
-- completes, cancel included): the unclaimed requests are then among the pending ones, and
-- the partial index flotilla_buildrequests_pending_v2 bounds the work by the pending count.
-- Not exact on a database where something completed a request without claiming it.
-- pgbench -D total=0: the page alone; 1: page + counter row; 2: page + exact count(*).
SELECT br.id, br.buildsetid, br.builderid, br.priority, br.complete, br.results, br.submitted_at,
       br.complete_at, br.waited_for, false AS claimed, NULL::int AS claimed_at,
       NULL::int AS claimed_by_masterid
FROM buildrequests br
WHERE coalesce(br.complete, 0) = 0 AND NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = br.id)
ORDER BY br.priority DESC, br.submitted_at, br.id
LIMIT 50;
\if :total = 1
SELECT n FROM load_bench.counts WHERE collection = 'buildrequests' AND scope = 'claimed=false';
\elif :total = 2
SELECT count(*) FROM buildrequests br
WHERE coalesce(br.complete, 0) = 0 AND NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = br.id);
\endif
