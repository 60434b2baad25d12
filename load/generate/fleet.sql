-- The fleet data set (issue 35): ten million builds over a thousand builders and five years,
-- in Buildbot 3.7's schema, set-based like generate.sql (one INSERT ... SELECT over
-- generate_series per table; statement-level triggers see each table in one batch; no
-- trigger disabled). Run by run.sh with SET=fleet:
--   psql -v scale=1 -v detail=1000000 -v steps=10000000 -f fleet.sql $DATABASE_URL
--
-- What it makes at scale s (s = 1 is the issue's set):
--   builders       1,000 (fleet-b0001 ...), workers 1,000 (fleet-w0001 ...)
--   changes        1,002,500 s, one per buildset, each with its own source stamp and 1-3
--                  change_files: a change every 157 s for five years ending now (550 a day)
--   buildsets      one per change; each asks 10 builders (a project's 10 builders: buildset
--                  i asks builders 10((i-1) mod 100)+1 .. +10), so 10 requests per buildset
--   buildrequests  10,025,000 s; the newest 2,500 s buildsets' 25,000 s requests are pending
--                  (complete=0, unclaimed, no build); the others complete, claimed by master 1
--   builds         10,000,000 s, one per complete request, id = request id; builder b's
--                  builds are requests b, b+1000, ... so number = (id-1)/1000 + 1 (10,000 s
--                  per builder, numbered in id order, as check.sql wants)
--   results        ~86% success, 5% warnings, 7% failure, 1% exception, 1% cancelled; and 4
--                  broken builders (b0250, b0500, b0750, b1000) failed their newest 2,000
--                  builds, so their previous successful build is 2,000 builds back at any
--                  scale of 0.2 or more (what #4055 asks; at scale 1 their newest 20%)
--   steps          5 per build, for the newest :steps builds (default all 10,000,000 s:
--                  50,000,000 steps): the build page and the waterfall read them
--   logs, chunks,  only for the newest :detail builds (default 1,000,000, about six months):
--   properties     one stdio log (one chunk of 3-7 lines) per step and 9 properties per build.
--                  Older builds keep their steps but their logs and properties are gone, as
--                  an installation with a log horizon has it (Buildbot's JanitorConfigurator,
--                  our retention job): all 50M logs and chunks would not fit the 25 GB disk
--                  budget of this machine (see load/results/fleet-reads.md for the sizes)
--
-- Foreign keys: those from and to these tables are dropped first and added again at the end,
-- where PostgreSQL validates each with one join instead of one lookup per inserted row.
-- Indexes: every index of these tables that no constraint needs is dropped before the
-- inserts and made again after them (one sort per index instead of 10M inserts into each);
-- the definitions are the migrations' own, read back from pg_indexes.

\set ON_ERROR_STOP on
\timing on

CREATE TEMP TABLE gen AS
SELECT greatest(10, round(1000000 * :scale)::int) AS sets,   -- complete buildsets
       greatest(1, round(2500 * :scale)::int) AS psets,       -- pending buildsets
       10 AS per_set, 1000 AS nbuilders, 1000 AS nworkers,
       greatest(1, round(:detail * :scale)::int) AS detail,
       greatest(1, round(:steps * :scale)::int) AS steps,
       157 AS every, extract(epoch FROM date_trunc('hour', now()))::bigint AS t_end;
ALTER TABLE gen ADD COLUMN t0 bigint, ADD COLUMN broken_from bigint;
-- a broken builder's builds after number broken_from failed: its newest 2,000 at any scale,
-- so that a smaller set keeps the walk back that the previous-success read makes (#4055)
UPDATE gen SET t0 = t_end - every * (sets + psets), broken_from = greatest(0, sets * per_set / nbuilders - 2000);
SELECT * FROM gen;

\ir require-empty.sql

-- request j's result: a fixed hash of j, so that every table derived from it agrees
CREATE FUNCTION pg_temp.res(j bigint, builder int, num bigint, broken_from bigint) RETURNS int LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN builder % 250 = 0 AND num > broken_from THEN 2
              ELSE (SELECT CASE WHEN h < 860 THEN 0 WHEN h < 910 THEN 1 WHEN h < 980 THEN 2
                                WHEN h < 990 THEN 4 ELSE 6 END
                    FROM (SELECT (j * 2654435761) % 1000 AS h) x) END
$$;

\echo dropping the secondary indexes of the big tables
CREATE TEMP TABLE dropped AS
SELECT i.schemaname, i.indexname, i.indexdef
FROM pg_indexes i
JOIN pg_class c ON c.relname = i.indexname
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = i.schemaname
WHERE i.schemaname = 'public'
  AND i.tablename IN ('changes', 'change_files', 'sourcestamps', 'buildsets', 'buildset_sourcestamps',
                      'buildrequests', 'buildrequest_claims', 'builds', 'steps', 'logs', 'logchunks',
                      'build_properties')
  AND i.indexname <> 'buildrequest_claims_brids'  -- the requests' count trigger looks claims up by it
  AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = c.oid);
SELECT format('DROP INDEX %I.%I', schemaname, indexname) FROM dropped \gexec

\echo dropping the foreign keys from and to them (checked again, each in one join, at the end)
CREATE TEMP TABLE dropped_fks AS
SELECT k.conrelid::regclass::text AS tbl, k.conname, pg_get_constraintdef(k.oid) AS def
FROM pg_constraint k
WHERE k.contype = 'f'
  AND (k.conrelid::regclass::text IN ('changes', 'change_files', 'sourcestamps', 'buildsets', 'buildset_sourcestamps',
                                      'buildrequests', 'buildrequest_claims', 'builds', 'steps', 'logs', 'logchunks',
                                      'build_properties')
       OR k.confrelid::regclass::text IN ('changes', 'sourcestamps', 'buildsets', 'buildrequests', 'builds', 'steps', 'logs'));
SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', tbl, conname) FROM dropped_fks \gexec

-- Write notices tell running API pods which cached pages a write changed; no API runs on a
-- database being generated, so they are off during the load (the count triggers stay on:
-- the totals must be true). ALTER TABLE ... DISABLE TRIGGER needs only the table's owner.
SELECT format('ALTER TABLE %s DISABLE TRIGGER %I', tgrelid::regclass, tgname)
FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE 'flotilla_notice_%' \gexec

-- The count triggers of the three 10M-row tables unnest every row into its 4-8 scopes and
-- aggregate 40-80M keys (57 us a request on this machine: EXPLAIN ANALYZE of a 20,000-row
-- insert); they are off during the load and the same deltas are made at the end from rows
-- grouped by the scope's columns first (a few thousand groups), with the triggers' own
-- scope functions. The smaller tables keep theirs on.
SELECT format('ALTER TABLE %s DISABLE TRIGGER flotilla_count_ins', t)
FROM unnest(ARRAY['builds', 'buildrequests', 'buildrequest_claims']) t \gexec

\echo masters, builders, workers
INSERT INTO masters (id, name, name_hash, active, last_active)
SELECT 1, 'flotilla-fleet-generator:/load/generate', md5('fleet-master') || left(md5('fleet-master2'), 8), 0, t_end
FROM gen;

INSERT INTO builders (id, name, description, name_hash)
SELECT b, 'fleet-b' || lpad(b::text, 4, '0'), 'project ' || ((b - 1) / 10 + 1) || ', builder ' || ((b - 1) % 10 + 1),
       -- 40 hex characters, unique; not Buildbot's sha1 of the name (PostgreSQL has no sha1
       -- without pgcrypto): no Buildbot master configures these builders, nothing looks them up
       left(encode(sha256(convert_to('fleet-b' || lpad(b::text, 4, '0'), 'UTF8')), 'hex'), 40)
FROM gen, generate_series(1, gen.nbuilders) AS b;

INSERT INTO workers (id, name, info, paused, graceful)
SELECT w, 'fleet-w' || lpad(w::text, 4, '0'), '{}', 0, 0
FROM gen, generate_series(1, gen.nworkers) AS w;

\echo sourcestamps (one per change: project p of 100 has builders 10(p-1)+1 .. 10p)
INSERT INTO sourcestamps (id, ss_hash, branch, revision, patchid, repository, codebase, project, created_at)
SELECT i, left(encode(sha256(('fleet-ss:' || i)::bytea), 'hex'), 40), x.branch,
       md5('rev:' || i) || left(md5('rev2:' || i), 8), NULL,
       'https://git.example.invalid/' || x.project || '.git', '', x.project, gen.t0 + gen.every * i
FROM gen, generate_series(1, gen.sets + gen.psets) AS i,
     LATERAL (SELECT 'project' || ((i - 1) % 100 + 1) AS project,
                     CASE WHEN i % 10 = 0 THEN 'release/' || (i / 100000 + 1) || '.x' ELSE 'master' END AS branch) x;

\echo changes (one per stamp: its branch, revision, repository and project)
INSERT INTO changes (changeid, author, committer, comments, branch, revision, revlink, when_timestamp,
                     category, repository, codebase, project, sourcestampid, parent_changeids)
SELECT ss.id, a.who, a.who, 'change ' || ss.id || ': touch module ' || (ss.id % 37), ss.branch, ss.revision,
       NULL, ss.created_at, NULL, ss.repository, ss.codebase, ss.project, ss.id, NULL
FROM sourcestamps ss,
     LATERAL (SELECT 'dev' || (ss.id % 5000) || ' <dev' || (ss.id % 5000) || '@example.invalid>' AS who) a;

\echo change_files (1-3 per change)
INSERT INTO change_files (changeid, filename)
SELECT c.changeid, 'src/module_' || (c.changeid % 37) || '/file_' || ((c.changeid * k) % 1000) || '.c'
FROM changes c
JOIN generate_series(1, 3) AS k ON k <= 1 + c.changeid % 3;

-- request j = (i-1)*10 + k + 1 of buildset i (k = 0..9): builder 1 + (j-1) mod 1000,
-- submitted with its buildset, started 5-59 s later, finished 2-30 min after its start
CREATE TEMP VIEW req AS
SELECT i, j, b, (j - 1) / g.nbuilders + 1 AS num, i > g.sets AS pending,
       g.t0 + g.every * i AS submitted,
       g.t0 + g.every * i + 5 + j % 55 AS started,
       g.t0 + g.every * i + 5 + j % 55 + 120 + (j * 37) % 1680 AS finished,
       pg_temp.res(j, b, (j - 1) / g.nbuilders + 1, g.broken_from) AS results
FROM gen g, generate_series(1, g.sets + g.psets) AS i, generate_series(0, g.per_set - 1) AS k,
     LATERAL (SELECT (i - 1) * g.per_set + k + 1 AS j) jj,
     LATERAL (SELECT 1 + ((i - 1) * g.per_set + k) % g.nbuilders AS b) bb;

\echo buildsets (complete_at and results: the last and the worst of its requests)
-- per buildset over its own 10 requests (a LATERAL of 10 rows), not a GROUP BY over all 10M
INSERT INTO buildsets (id, external_idstring, reason, submitted_at, complete, complete_at, results,
                       parent_buildid, parent_relationship)
SELECT i, NULL, 'The SingleBranchScheduler scheduler named ''project' || ((i - 1) % 100 + 1) || ''' triggered this build',
       g.t0 + g.every * i, CASE WHEN i > g.sets THEN 0 ELSE 1 END,
       CASE WHEN i > g.sets THEN NULL ELSE w.finished END,
       CASE WHEN i > g.sets THEN NULL ELSE w.results END,  -- 0 < 1 < 2 < 4 < 6: max is the worst
       NULL, NULL
FROM gen g, generate_series(1, g.sets + g.psets) AS i,
     LATERAL (SELECT max(g.t0 + g.every * i + 5 + j % 55 + 120 + (j * 37) % 1680) AS finished,
                     max(pg_temp.res(j, 1 + (j - 1) % g.nbuilders, (j - 1) / g.nbuilders + 1, g.broken_from)) AS results
              FROM (SELECT (i - 1) * g.per_set + k + 1 AS j FROM generate_series(0, g.per_set - 1) AS k) r) w;

\echo buildset_sourcestamps
INSERT INTO buildset_sourcestamps (id, buildsetid, sourcestampid)
SELECT i, i, i FROM gen, generate_series(1, gen.sets + gen.psets) AS i;

\echo buildrequest_claims (every complete request, by master 1)
INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
SELECT j, 1, started - 1 FROM req WHERE NOT pending;

\echo buildrequests
INSERT INTO buildrequests (id, buildsetid, builderid, priority, complete, results, submitted_at,
                           complete_at, waited_for)
SELECT j, i, b, j % 3, CASE WHEN pending THEN 0 ELSE 1 END, CASE WHEN pending THEN -1 ELSE results END,
       submitted, CASE WHEN pending THEN NULL ELSE finished END, 0
FROM req;

\echo builds (one per complete request)
INSERT INTO builds (id, number, builderid, buildrequestid, workerid, masterid, started_at, complete_at,
                    state_string, results)
SELECT j, num, b, j, 1 + (b - 1 + 250 * (num % 4)) % 1000, 1, started, finished,
       CASE results WHEN 0 THEN 'build successful' WHEN 1 THEN 'warnings lint' WHEN 2 THEN 'failed test'
                    WHEN 4 THEN 'exception' ELSE 'cancelled' END,
       results
FROM req WHERE NOT pending;

\echo steps (5 per build of the newest :steps)
INSERT INTO steps (id, number, name, buildid, started_at, complete_at, state_string, results, urls_json, hidden)
SELECT (b.id - 1) * 5 + k + 1, k, (ARRAY['git', 'compile', 'test', 'lint', 'upload'])[k + 1], b.id,
       b.started_at + (b.complete_at - b.started_at) * k / 5, b.started_at + (b.complete_at - b.started_at) * (k + 1) / 5,
       (ARRAY['update', 'compile', 'test', 'lint', 'upload'])[k + 1] || CASE WHEN k = 2 AND b.results = 2 THEN ' (failure)' ELSE '' END,
       CASE WHEN k = 2 THEN least(b.results, 2) WHEN k = 3 AND b.results = 1 THEN 1
            WHEN k = 4 AND b.results > 2 THEN b.results ELSE 0 END,
       '[]', 0
FROM gen, builds b, generate_series(0, 4) AS k
WHERE b.id > (SELECT max(id) FROM builds) - gen.steps;

\echo logs (one stdio log per step of the newest :detail builds)
INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type)
SELECT s.id, 'stdio', 'stdio', s.id, 1, 3 + s.number, 's'
FROM gen, steps s
WHERE s.buildid > (SELECT max(id) FROM builds) - gen.detail;

\echo logchunks (one chunk per log)
\ir stdio-chunks.sql

\echo build_properties (9 per build of the newest :detail)
INSERT INTO build_properties (buildid, name, value, source)
SELECT n.id, p.name, p.value, p.source
FROM gen
JOIN builds n ON n.id > (SELECT max(id) FROM builds) - gen.detail
JOIN builders bd ON bd.id = n.builderid
JOIN workers w ON w.id = n.workerid
JOIN sourcestamps ss ON ss.id = (n.id - 1) / gen.per_set + 1
CROSS JOIN LATERAL unnest(
  ARRAY['buildername', 'buildnumber', 'workername', 'branch', 'revision', 'repository', 'project', 'codebase', 'scheduler'],
  ARRAY[to_json(bd.name)::text, n.number::text, to_json(w.name)::text, to_json(ss.branch)::text,
        to_json(ss.revision)::text, to_json(ss.repository)::text, to_json(ss.project)::text, '""',
        to_json(ss.project)::text],
  ARRAY['Builder', 'Build', 'Worker', 'Build', 'Build', 'Build', 'Build', 'Build', 'Scheduler']
) AS p(name, value, source);

\echo making the dropped indexes again
SET maintenance_work_mem = '1GB';
SELECT indexdef FROM dropped \gexec
\echo the foreign keys again (each validated by one join)
SELECT format('ALTER TABLE %s ADD CONSTRAINT %I %s', tbl, conname, def) FROM dropped_fks \gexec

\echo the totals of builds and requests, and the unclaimed set, as their triggers would have made them
INSERT INTO flotilla.count_deltas (tbl, scope, n)
SELECT 'builds', s, sum(n)
FROM (SELECT builderid, workerid, complete_at IS NOT NULL AS done, count(*) AS n FROM builds GROUP BY 1, 2, 3) g,
     unnest(flotilla.build_scopes(builderid, workerid, done)) s
GROUP BY s;
INSERT INTO flotilla.count_deltas (tbl, scope, n)
SELECT 'buildrequests', s, sum(n)
FROM (SELECT r.builderid, coalesce(r.complete, 0) <> 0 AS done, c.brid IS NOT NULL AS claimed, count(*) AS n
      FROM buildrequests r LEFT JOIN buildrequest_claims c ON c.brid = r.id GROUP BY 1, 2, 3) g,
     unnest(flotilla.buildrequest_scopes(builderid, done, claimed)) s
GROUP BY s;
INSERT INTO flotilla.unclaimed_buildrequests (brid)
SELECT r.id FROM buildrequests r
WHERE coalesce(r.complete, 0) = 0 AND NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id);
INSERT INTO flotilla.unclaimed_complete_buildrequests (brid)
SELECT r.id FROM buildrequests r
WHERE coalesce(r.complete, 0) <> 0 AND NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id);
SELECT format('ALTER TABLE %s ENABLE TRIGGER flotilla_count_ins', t)
FROM unnest(ARRAY['builds', 'buildrequests', 'buildrequest_claims']) t \gexec

SELECT format('ALTER TABLE %s ENABLE TRIGGER %I', tgrelid::regclass, tgname)
FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE 'flotilla_notice_%' \gexec

\ir sequences.sql
