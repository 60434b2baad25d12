-- The statements of one build start as the masters send them, from its request's claim to its
-- first command, for pgbench to run alone: PostgreSQL's own limit for the builds started a
-- second of phase S (load/fleet/burst.ts; load/fleet/pgbench.sh seeds the requests and runs
-- this). GENERATED from a real start by load/fleet/pgbench-start.ts; do not edit. When the
-- masters' statements change, test/master/builds/statements.test.ts fails; regenerate with
--   PGBENCH_START_WRITE=1 FOCUS=1 npm test -- test/master/builds/statements.test.ts
-- Each transaction as the master commits it: the claim (one request here, where a master's pass
-- claims all it can start in one), the build's row and its first properties, worker_preparation,
-- the step's row, the step's state string and its log, each fenced by the build's claim. Left
-- out, as they come before the claim or after the command: the candidates' read, the command's
-- output and the build's end. The first statement is pgbench's own: the next request, and every
-- value the start's statements take as a variable (ROLES in pgbench-start.ts for the ids).
SELECT
  1 AS masterid,
  ARRAY[r.id] AS array_brid,
  extract(epoch FROM now())::int AS now,
  'buildrequestid' AS t_buildrequestid,
  'buildsetid' AS t_buildsetid,
  'builderid' AS t_builderid,
  'priority' AS t_priority,
  'claimed' AS t_claimed,
  'claimed_at' AS t_claimed_at,
  'claimed_by_masterid' AS t_claimed_by_masterid,
  'complete' AS t_complete,
  'results' AS t_results,
  'submitted_at' AS t_submitted_at,
  'complete_at' AS t_complete_at,
  'waited_for' AS t_waited_for,
  'properties' AS t_properties,
  r.id AS brid,
  r.builderid AS builderid,
  1 AS workerid,
  'starting' AS t_starting,
  'buildid' AS t_buildid,
  'number' AS t_number,
  'workerid' AS t_workerid,
  'masterid' AS t_masterid,
  'started_at' AS t_started_at,
  'state_string' AS t_state_string,
  r.buildsetid AS buildsetid,
  r.id AS buildid,
  '{"buildername","buildnumber","branch","revision","repository","project","codebase","workername","builddir"}' AS c1,
  '{"\"fleet-0000\"","1","\"\"","\"\"","\"\"","\"\"","\"\"","\"f0000\"","\"/scripted/f0000/fleet-0000\""}' AS c2,
  '{"Builder","Build","Build","Build","Build","Build","Build","Worker","Worker"}' AS c3,
  '1' AS c4,
  'worker_preparation' AS t_worker_preparation,
  '50' AS c5,
  'stepid' AS t_stepid,
  'name' AS t_name,
  'urls' AS t_urls,
  'hidden' AS t_hidden,
  'worker f0000 ready' AS c6,
  '0' AS c7,
  2 * r.id AS step0,
  'ok' AS t_ok,
  '{"stepid":7008,"number":1,"name":"ok"}' AS c8,
  '2' AS c9,
  '''true''' AS c10,
  2 * r.id + 1 AS step1,
  'stdio' AS t_stdio,
  's' AS t_s,
  'logid' AS t_logid,
  'slug' AS t_slug,
  'num_lines' AS t_num_lines,
  'type' AS t_type,
  '8004' AS c11,
  set_config('fleet.brid', r.id::text, false) AS brid_setting,
  set_config('fleet.step', (2 * r.id - 1)::text, false) AS step_setting
FROM (SELECT nextval('fleet_next')::int AS id) n JOIN buildrequests r ON r.id = n.id \gset
BEGIN;
SELECT id FROM masters WHERE id = :masterid AND active = 1 FOR SHARE;
WITH open AS (
  SELECT id FROM buildrequests WHERE id = ANY(:array_brid::int[]) AND complete = 0
  ORDER BY id FOR NO KEY UPDATE SKIP LOCKED)
  INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
  SELECT id, :masterid, :now FROM open ORDER BY id
  ON CONFLICT (brid) DO NOTHING RETURNING brid;
SELECT json_build_object(:t_buildrequestid::text, a.id, :t_buildsetid::text, a.buildsetid, :t_builderid::text, a.builderid, :t_priority::text, a.priority, :t_claimed::text, EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = a.id), :t_claimed_at::text, (SELECT "c"."claimed_at" FROM buildrequest_claims c WHERE c.brid = a.id), :t_claimed_by_masterid::text, (SELECT "c"."masterid" FROM buildrequest_claims c WHERE c.brid = a.id), :t_complete::text, (coalesce(a.complete, 0) <> 0), :t_results::text, a.results, :t_submitted_at::text, a.submitted_at, :t_complete_at::text, a.complete_at, :t_waited_for::text, (coalesce(a.waited_for, 0) <> 0), :t_properties::text, NULL::json) AS e FROM "buildrequests" a WHERE a.id = ANY(:array_brid::int[]) ORDER BY a.id;
COMMIT;
BEGIN;
SELECT max(id) AS id FROM builds WHERE buildrequestid = :brid;
SELECT id FROM builders WHERE id = :builderid FOR NO KEY UPDATE;
WITH a AS (
  INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at, complete_at,
  state_string, results)
  SELECT coalesce(max(number), 0) + 1, :builderid, :brid, :workerid, :masterid,
  :now, NULL, :t_starting, NULL
  FROM builds WHERE builderid = :builderid
  HAVING EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = :brid AND c.masterid = :masterid)
  ON CONFLICT (builderid, number) DO NOTHING
  RETURNING *) SELECT json_build_object(:t_buildid::text, a.id, :t_number::text, a.number, :t_builderid::text, a.builderid, :t_buildrequestid::text, a.buildrequestid, :t_workerid::text, a.workerid, :t_masterid::text, a.masterid, :t_started_at::text, a.started_at, :t_complete::text, (a.complete_at IS NOT NULL), :t_complete_at::text, a.complete_at, :t_results::text, a.results, :t_state_string::text, a.state_string, :t_properties::text, '{}'::json) AS e FROM a;
SELECT
  (SELECT coalesce(json_agg(x), '[]'::json) FROM (SELECT property_name, flotilla.try_json(property_value) AS pair
  FROM buildset_properties WHERE buildsetid = :buildsetid) x) AS props,
  (SELECT row_to_json(x) FROM (SELECT p.id, p.name FROM builds b JOIN builders bl ON bl.id = b.builderid
  JOIN projects p ON p.id = bl.projectid WHERE b.id = :buildid) x) AS project,
  (SELECT row_to_json(x) FROM (
  SELECT ss.branch, ss.revision, ss.repository, ss.project, ss.codebase FROM buildset_sourcestamps bss
  JOIN sourcestamps ss ON ss.id = bss.sourcestampid WHERE bss.buildsetid = :buildsetid
  ORDER BY (ss.codebase = '') DESC, bss.id LIMIT 1) x) AS ss,
  ARRAY(
  SELECT DISTINCT c.author FROM buildset_sourcestamps bss JOIN changes c ON c.sourcestampid = bss.sourcestampid
  WHERE bss.buildsetid = :buildsetid ORDER BY c.author) AS authors;
INSERT INTO build_properties (buildid, name, value, source)
  SELECT :buildid, n, v, s
  FROM unnest(:c1::text[], :c2::text[], :c3::text[])
  WITH ORDINALITY AS x(n, v, s, o)
  ORDER BY o;
COMMIT;
SELECT ss.id AS ssid, ss.branch, ss.revision, ss.repository, ss.project, ss.codebase
  FROM buildset_sourcestamps bss JOIN sourcestamps ss ON ss.id = bss.sourcestampid
  WHERE bss.buildsetid = :buildsetid ORDER BY bss.id;
BEGIN;
WITH f AS (SELECT b.id, w.seq, w.result,
  b.complete_at IS NULL AND EXISTS (SELECT 1 FROM buildrequest_claims c
  WHERE c.brid = b.buildrequestid AND c.masterid = :masterid) AS held
  FROM builds b LEFT JOIN flotilla.build_writes w ON w.buildid = b.id
  WHERE b.id = :buildid FOR NO KEY UPDATE OF b),
  recorded AS (
  INSERT INTO flotilla.build_writes (buildid, seq, result)
  SELECT id, :c4, NULL FROM f WHERE held AND (seq IS NULL OR seq < :c4)
  ON CONFLICT (buildid) DO UPDATE SET seq = EXCLUDED.seq, result = EXCLUDED.result)
  SELECT seq, result, held FROM f;
WITH a AS (INSERT INTO steps (number, name, buildid, started_at, complete_at, state_string, results, urls_json, hidden)
  SELECT (SELECT coalesce(max(number), -1) + 1 FROM steps WHERE buildid = :buildid),
  CASE WHEN NOT EXISTS (SELECT 1 FROM steps WHERE buildid = :buildid AND name = :t_worker_preparation::text)
  THEN :t_worker_preparation::text
  ELSE (SELECT x.candidate
  FROM generate_series(1, 1 + (SELECT count(*) FROM steps WHERE buildid = :buildid)::int) AS k(n)
  CROSS JOIN LATERAL (SELECT left(:t_worker_preparation::text, :c5 - length('_' || k.n)) || '_' || k.n AS candidate) x
  WHERE NOT EXISTS (SELECT 1 FROM steps s WHERE s.buildid = :buildid AND s.name = x.candidate)
  ORDER BY k.n LIMIT 1)
  END,
  :buildid, :now, NULL, 'pending', NULL, '[]', 0
  RETURNING *) SELECT json_build_object(:t_stepid::text, a.id, :t_number::text, a.number, :t_name::text, a.name, :t_buildid::text, a.buildid, :t_started_at::text, a.started_at, :t_complete::text, (a.complete_at IS NOT NULL), :t_complete_at::text, a.complete_at, :t_results::text, a.results, :t_state_string::text, a.state_string, :t_urls::text, coalesce(flotilla.try_json(a.urls_json), '[]'::json), :t_hidden::text, (a.hidden <> 0)) AS e FROM a;
WITH a AS (UPDATE steps SET state_string = :c6, complete_at = :now, results = :c7,
  hidden = :c7
  WHERE id = :step0 AND complete_at IS NULL RETURNING *) SELECT json_build_object(:t_stepid::text, a.id, :t_number::text, a.number, :t_name::text, a.name, :t_buildid::text, a.buildid, :t_started_at::text, a.started_at, :t_complete::text, (a.complete_at IS NOT NULL), :t_complete_at::text, a.complete_at, :t_results::text, a.results, :t_state_string::text, a.state_string, :t_urls::text, coalesce(flotilla.try_json(a.urls_json), '[]'::json), :t_hidden::text, (a.hidden <> 0)) AS e FROM a;
WITH a AS (INSERT INTO steps (number, name, buildid, started_at, complete_at, state_string, results, urls_json, hidden)
  SELECT (SELECT coalesce(max(number), -1) + 1 FROM steps WHERE buildid = :buildid),
  CASE WHEN NOT EXISTS (SELECT 1 FROM steps WHERE buildid = :buildid AND name = :t_ok::text)
  THEN :t_ok::text
  ELSE (SELECT x.candidate
  FROM generate_series(1, 1 + (SELECT count(*) FROM steps WHERE buildid = :buildid)::int) AS k(n)
  CROSS JOIN LATERAL (SELECT left(:t_ok::text, :c5 - length('_' || k.n)) || '_' || k.n AS candidate) x
  WHERE NOT EXISTS (SELECT 1 FROM steps s WHERE s.buildid = :buildid AND s.name = x.candidate)
  ORDER BY k.n LIMIT 1)
  END,
  :buildid, :now, NULL, 'pending', NULL, '[]', 0
  RETURNING *) SELECT json_build_object(:t_stepid::text, a.id, :t_number::text, a.number, :t_name::text, a.name, :t_buildid::text, a.buildid, :t_started_at::text, a.started_at, :t_complete::text, (a.complete_at IS NOT NULL), :t_complete_at::text, a.complete_at, :t_results::text, a.results, :t_state_string::text, a.state_string, :t_urls::text, coalesce(flotilla.try_json(a.urls_json), '[]'::json), :t_hidden::text, (a.hidden <> 0)) AS e FROM a;
INSERT INTO flotilla.build_writes (buildid, seq, result)
  VALUES (:buildid, :c4, :c8::jsonb)
  ON CONFLICT (buildid) DO UPDATE SET seq = EXCLUDED.seq, result = EXCLUDED.result;
COMMIT;
BEGIN;
WITH f AS (SELECT b.id, w.seq, w.result,
  b.complete_at IS NULL AND EXISTS (SELECT 1 FROM buildrequest_claims c
  WHERE c.brid = b.buildrequestid AND c.masterid = :masterid) AS held
  FROM builds b LEFT JOIN flotilla.build_writes w ON w.buildid = b.id
  WHERE b.id = :buildid FOR NO KEY UPDATE OF b),
  recorded AS (
  INSERT INTO flotilla.build_writes (buildid, seq, result)
  SELECT id, :c9, NULL FROM f WHERE held AND (seq IS NULL OR seq < :c9)
  ON CONFLICT (buildid) DO UPDATE SET seq = EXCLUDED.seq, result = EXCLUDED.result)
  SELECT seq, result, held FROM f;
WITH a AS (UPDATE steps SET state_string = :c10 WHERE id = :step1 RETURNING *) SELECT json_build_object(:t_stepid::text, a.id, :t_number::text, a.number, :t_name::text, a.name, :t_buildid::text, a.buildid, :t_started_at::text, a.started_at, :t_complete::text, (a.complete_at IS NOT NULL), :t_complete_at::text, a.complete_at, :t_results::text, a.results, :t_state_string::text, a.state_string, :t_urls::text, coalesce(flotilla.try_json(a.urls_json), '[]'::json), :t_hidden::text, (a.hidden <> 0)) AS e FROM a;
SELECT EXISTS (SELECT 1 FROM logs WHERE stepid = :step1 AND name = :t_stdio) AS dup
  FROM steps WHERE id = :step1 FOR NO KEY UPDATE;
WITH a AS (INSERT INTO logs (name, slug, stepid, complete, num_lines, type)
  VALUES (:t_stdio, :t_stdio, :step1, 0, 0, :t_s)
  ON CONFLICT (stepid, slug) DO NOTHING RETURNING *) SELECT json_build_object(:t_logid::text, a.id, :t_name::text, a.name, :t_slug::text, a.slug, :t_stepid::text, a.stepid, :t_complete::text, (a.complete <> 0), :t_num_lines::text, a.num_lines, :t_type::text, a.type) AS e FROM a;
INSERT INTO flotilla.build_writes (buildid, seq, result)
  VALUES (:buildid, :c9, :c11::jsonb)
  ON CONFLICT (buildid) DO UPDATE SET seq = EXCLUDED.seq, result = EXCLUDED.result;
COMMIT;
