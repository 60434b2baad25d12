-- The writes of one build start, as a master makes them (services/core/data: the claim of
-- claimBuildRequests with onlyIfActive, then newBuild and setBuildProperties' one INSERT of every
-- new property, 10 here as a forced build has; one INSERT each until 2026-11-28 20:05, and the
-- row and the properties in two transactions, the second fenced, until 2026-11-28 22:50 (now
-- one, whose fence is read once the row is in), see
-- load/results/fleet.md), each transaction as the master commits it, for
-- pgbench to run alone: PostgreSQL's own limit for what the fleet scenario's builds/s
-- measure (load/fleet/pgbench.sh seeds the requests and runs it). Left out: the events'
-- entity reads (a new build's now comes from its INSERT) and the candidates' read (reads;
-- the comparison is about the writes).
SELECT nextval('fleet_next') AS brid \gset
SELECT builderid FROM buildrequests WHERE id = :brid \gset
BEGIN;
SELECT id FROM masters WHERE id = 1 AND active = 1 FOR SHARE;
SELECT id FROM buildrequests WHERE id = ANY(ARRAY[:brid::int]) AND complete = 0 ORDER BY id FOR NO KEY UPDATE;
SELECT brid FROM buildrequest_claims WHERE brid = ANY(ARRAY[:brid::int]) LIMIT 1;
INSERT INTO buildrequest_claims (brid, masterid, claimed_at) SELECT id, 1, 0 FROM unnest(ARRAY[:brid::int]) AS x(id)
  ON CONFLICT (brid) DO NOTHING RETURNING brid;
END;
BEGIN;
SELECT id AS buildid, number FROM builds WHERE buildrequestid = :brid AND masterid = 1 AND complete_at IS NULL;
SELECT id FROM builders WHERE id = :builderid FOR NO KEY UPDATE;
INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at, complete_at, state_string, results)
  SELECT coalesce(max(number), 0) + 1, :builderid, :brid, 1, 1, 0, NULL, 'starting', NULL
  FROM builds WHERE builderid = :builderid
  ON CONFLICT (builderid, number) DO NOTHING RETURNING id AS buildid \gset
SELECT w.seq, w.result, b.complete_at IS NULL AND EXISTS (SELECT 1 FROM buildrequest_claims c
    WHERE c.brid = b.buildrequestid AND c.masterid = 1) AS held
  FROM builds b LEFT JOIN flotilla.build_writes w ON w.buildid = b.id WHERE b.id = :buildid FOR NO KEY UPDATE OF b;
SELECT id FROM builds WHERE id = :buildid FOR NO KEY UPDATE;
SELECT name, value, source FROM build_properties WHERE buildid = :buildid;
INSERT INTO build_properties (buildid, name, value, source)
  SELECT :buildid, n, v, s FROM unnest(
    ARRAY['buildername', 'buildnumber', 'workername', 'builddir', 'scheduler', 'reason', 'owner', 'branch', 'revision', 'project'],
    ARRAY['"b"', '1', '"w"', '"/w/b"', '"fleet"', '"force"', '"f"', '""', '""', '""'],
    ARRAY['Builder', 'Build', 'Worker', 'Worker', 'Scheduler', 'Force Build Form', 'Force Build Form', 'Build', 'Build', 'Build'])
    WITH ORDINALITY AS x(n, v, s, o) ORDER BY o;
END;
