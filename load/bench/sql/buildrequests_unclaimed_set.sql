-- GET /buildrequests?claimed=false&order=-priority&order=submitted_at&limit=50, on a database
-- that carries Flotilla's migrations 0004 and 0008: their triggers keep the ids of the
-- requests without a claim, pending ones in flotilla.unclaimed_buildrequests and complete
-- ones (cancelled before a claim) in flotilla.unclaimed_complete_buildrequests, exact
-- whoever writes. The page then costs a sort
-- of the unclaimed requests (2,000 here), not an anti-join over every claim. The LATERAL
-- ... OFFSET 0 keeps the planner from a hash join that scans all 500,000 requests (it
-- prices 2,000 index lookups above one sequential scan: 150 ms against 5 ms measured).
-- pgbench -D total=0: the page alone; 1: page + counter row; 2: page + exact count(*).
SELECT br.id, br.buildsetid, br.builderid, br.priority, br.complete, br.results, br.submitted_at,
       br.complete_at, br.waited_for, false AS claimed, NULL::int AS claimed_at,
       NULL::int AS claimed_by_masterid
FROM (SELECT brid FROM flotilla.unclaimed_buildrequests
      UNION ALL SELECT brid FROM flotilla.unclaimed_complete_buildrequests) u
CROSS JOIN LATERAL (SELECT * FROM buildrequests b WHERE b.id = u.brid OFFSET 0) br
ORDER BY br.priority DESC, br.submitted_at, br.id
LIMIT 50;
\if :total = 1
SELECT n FROM load_bench.counts WHERE collection = 'buildrequests' AND scope = 'claimed=false';
\elif :total = 2
SELECT (SELECT count(*) FROM flotilla.unclaimed_buildrequests)
     + (SELECT count(*) FROM flotilla.unclaimed_complete_buildrequests);
\endif
