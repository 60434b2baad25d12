-- The writes of one build start, as a master makes them (services/core/data: the claim of
-- claimEachBuildRequest, one request a transaction here where a master's pass claims 50-150
-- in one, then the build's first transaction in run-build.ts: the request's
-- newest build (lastBuildOfRequest), newBuild with the claim its INSERT's condition (the
-- fence's read after it until 2026-11-29), the facts of its first
-- properties (buildStartFacts, one read since 2026-11-29, left out of this script before) and
-- addNewBuildProperties' one INSERT of every new property, 10 here as a forced build has;
-- one INSERT each until 2026-11-28 20:05, the row and the properties in two transactions
-- until 2026-11-28 22:50, and the properties after a lock of the row and a read of what was
-- stored until 2026-11-29, see load/results/fleet.md), each transaction as the master commits
-- it, for pgbench to run alone: PostgreSQL's own limit for what the fleet scenario's builds/s
-- measure (load/fleet/pgbench.sh seeds the requests and runs it). Left out: the events'
-- entity JSON (the master's INSERT returns the new row as its event's JSON), the candidates'
-- read, and what follows a build's row before its first command (worker_preparation, the
-- step's row: phase S of load/fleet/run.ts counts those in its cost a start).
SELECT nextval('fleet_next') AS brid \gset
SELECT builderid FROM buildrequests WHERE id = :brid \gset
BEGIN;
SELECT id FROM masters WHERE id = 1 AND active = 1 FOR SHARE;
WITH open AS (
  SELECT id FROM buildrequests WHERE id = ANY(ARRAY[:brid::int]) AND complete = 0 ORDER BY id FOR NO KEY UPDATE SKIP LOCKED)
INSERT INTO buildrequest_claims (brid, masterid, claimed_at) SELECT id, 1, 0 FROM open ORDER BY id
  ON CONFLICT (brid) DO NOTHING RETURNING brid;
END;
BEGIN;
SELECT max(id) AS id FROM builds WHERE buildrequestid = :brid;
SELECT id FROM builders WHERE id = :builderid FOR NO KEY UPDATE;
INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at, complete_at, state_string, results)
  SELECT coalesce(max(number), 0) + 1, :builderid, :brid, 1, 1, 0, NULL, 'starting', NULL
  FROM builds WHERE builderid = :builderid
  HAVING EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = :brid AND c.masterid = 1)
  ON CONFLICT (builderid, number) DO NOTHING RETURNING id AS buildid \gset
SELECT
  (SELECT coalesce(json_agg(x), '[]'::json) FROM (SELECT property_name, flotilla.try_json(property_value) AS pair
    FROM buildset_properties WHERE buildsetid = :brid) x) AS props,
  (SELECT row_to_json(x) FROM (SELECT p.id, p.name FROM builds b JOIN builders bl ON bl.id = b.builderid
    JOIN projects p ON p.id = bl.projectid WHERE b.id = :buildid) x) AS project,
  (SELECT row_to_json(x) FROM (SELECT ss.branch, ss.revision, ss.repository, ss.project, ss.codebase
    FROM buildset_sourcestamps bss JOIN sourcestamps ss ON ss.id = bss.sourcestampid WHERE bss.buildsetid = :brid
    ORDER BY (ss.codebase = '') DESC, bss.id LIMIT 1) x) AS ss,
  ARRAY(SELECT DISTINCT c.author FROM buildset_sourcestamps bss JOIN changes c ON c.sourcestampid = bss.sourcestampid
    WHERE bss.buildsetid = :brid ORDER BY c.author) AS authors;
INSERT INTO build_properties (buildid, name, value, source)
  SELECT :buildid, n, v, s FROM unnest(
    ARRAY['buildername', 'buildnumber', 'workername', 'builddir', 'scheduler', 'reason', 'owner', 'branch', 'revision', 'project'],
    ARRAY['"b"', '1', '"w"', '"/w/b"', '"fleet"', '"force"', '"f"', '""', '""', '""'],
    ARRAY['Builder', 'Build', 'Worker', 'Worker', 'Scheduler', 'Force Build Form', 'Force Build Form', 'Build', 'Build', 'Build'])
    WITH ORDINALITY AS x(n, v, s, o) ORDER BY o;
END;
