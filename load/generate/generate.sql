-- Flotilla load data, set-based: every table is filled by INSERT ... SELECT over
-- generate_series, one statement per table, so that statement-level triggers (row counts
-- kept with transition tables) see each table's rows in one batch. Run by run.sh:
--   psql -v scale=1 -v huge_lines=1000000 -v builders=5 -v workers=3 -f generate.sql $DATABASE_URL
--
-- What it makes at scale s (numbers rounded, minimum 1):
--   changes        1,000,000 s, each with its own source stamp and 1-3 change_files
--   buildsets      500,000 s, one build request each, one buildset_sourcestamps row each
--   buildrequests  the newest 2,000 s are pending (complete=0, unclaimed, no build);
--                  the others are complete, claimed (buildrequest_claims) by master 1,
--                  and have their build; 2,000 s of them were retried: a first build that
--                  ended RETRY (5) and a second one that finished, so builds = buildsets
--   builds         500,000 s over :builders builders (builderid = 1 + (brid-1) % :builders),
--                  numbers 1, 2, 3 ... per builder in id order, on workers 1 to :workers - 1
--   builders       the oracle's 5; with :builders > 5 (issue 34 §3's "10,000 builders' worth
--                  of tags"), builders 6.. :builders too, named builder-NNNNN, each with 3
--                  tags (team-0..99, os-linux/windows/macos, tier-1..3: 106 tags) and on
--                  master 1 with 3 of the workers configured (configured_workers)
--   workers        worker1, worker2, offline-worker; with :workers > 3, worker4 .. too
--   steps/logs     the newest 10,000 s builds: 5 steps each, one complete stdio log per
--                  step (one chunk of 3-7 lines), 9 build_properties each
--   huge log       one more stdio log of :huge_lines lines (default 1,000,000, whatever the
--                  scale) on the newest build's 'test' step, in chunks of 1,000 lines
--
-- Buildbot's semantics kept: valid foreign keys; builders, workers and the master carry
-- their real sha1 name_hash (so a Buildbot master configured with the oracle's builders
-- finds builders 1-5 by name); ss_hash is 40 hex chars, unique (a sha256 prefix, not
-- Buildbot's sha1 of the columns: a Buildbot that adds the same stamp makes a new row);
-- times are integer epoch seconds from 2020-09-13 (1,600,000,000) onwards, one change
-- every 30 s and one buildset every 60 s; a buildset is complete iff its request is;
-- results: incomplete requests -1, buildsets NULL; log chunks are stored the way
-- Buildbot stores them ('o' + line, joined by \n, no final newline, compressed=0).
-- Master 1 (the generator's) is inactive, so a Buildbot master starting on this
-- database has nothing of it to expire; every sequence is set past the last id.

\set ON_ERROR_STOP on
\timing on

CREATE TEMP TABLE gen AS
SELECT c, r, p, greatest(1, (r - p) / p) AS step, nb, huge, nbuilders, nworkers, 1600000000 AS t0
FROM (
  SELECT greatest(5, :builders::int) AS nbuilders, greatest(3, :workers::int) AS nworkers,
         greatest(2, round(1000000 * :scale)::int) AS c,
         greatest(2, round(500000 * :scale)::int) AS r,
         greatest(1, round(2000 * :scale)::int) AS p,
         greatest(1, round(10000 * :scale)::int) AS nb,
         :huge_lines::int AS huge
) s;
-- at least one complete request per pending one
UPDATE gen SET p = least(p, r / 2), step = greatest(1, (r - least(p, r / 2)) / least(p, r / 2));
SELECT * FROM gen;

\ir require-empty.sql

\echo masters, builders, workers
INSERT INTO masters (id, name, name_hash, active, last_active)
SELECT 1, 'flotilla-load-generator:/load/generate', 'c168e831fb589dc5ac7fb69e536536347f502104', 0,
       t0 + 60 * r + 3600
FROM gen;

-- the oracle's master.cfg builders, in its order; name_hash = sha1(name) as Buildbot computes it
INSERT INTO builders (id, name, description, name_hash) VALUES
  (1, 'runtests', 'Runs the unit test suite (ends with WARNINGS)', 'ae3c03f408678b20c1eb105fc44bf038def161a9'),
  (2, 'build', 'Compiles and triggers the package builder', '80754af91bfb6d1073585b046fe0a474ce868509'),
  (3, 'package', 'Packages artifacts (triggered by build)', '582681c2eae02b3f3d399c0c26d321560f6c567a'),
  (4, 'flaky', 'Result depends on the mode property', '0612bcf5b16a1ec368ef4ebb92d6be2f7040260b'),
  (5, 'deploy', 'Its only worker never connects: requests stay pending', 'b0d51b9ff91b623cc42b17c529b7c21c2ab57fb4');

INSERT INTO workers (id, name, info, paused, graceful) VALUES
  (1, 'worker1', '{}', 0, 0),
  (2, 'worker2', '{}', 0, 0),
  (3, 'offline-worker', '{}', 0, 0);

-- the many-builders variant: name_hash as 40 hex characters of md5s, not Buildbot's sha1
-- (PostgreSQL has no sha1 without pgcrypto), unique as Buildbot's
INSERT INTO builders (id, name, description, name_hash)
SELECT i, 'builder-' || lpad(i::text, 5, '0'), 'Generated builder ' || i,
       md5('builder:' || i) || left(md5('builder2:' || i), 8)
FROM gen, generate_series(6, gen.nbuilders) AS i;

INSERT INTO workers (id, name, info, paused, graceful)
SELECT i, 'worker' || i, '{"os": "linux"}', 0, 0
FROM gen, generate_series(4, gen.nworkers) AS i;

INSERT INTO tags (id, name, name_hash)
SELECT row_number() OVER (ORDER BY t), t, md5('tag:' || t) || left(md5('tag2:' || t), 8)
FROM gen, (SELECT 'team-' || k AS t FROM generate_series(0, 99) k
           UNION ALL SELECT 'os-' || o FROM unnest(ARRAY['linux', 'windows', 'macos']) o
           UNION ALL SELECT 'tier-' || k FROM generate_series(1, 3) k) v
WHERE gen.nbuilders > 5;

INSERT INTO builders_tags (builderid, tagid)
SELECT i, tg.id
FROM gen, generate_series(6, gen.nbuilders) AS i
JOIN tags tg ON tg.name IN ('team-' || (i % 100),
                            'os-' || (ARRAY['linux', 'windows', 'macos'])[1 + i % 3],
                            'tier-' || (1 + i % 3));

INSERT INTO builder_masters (id, builderid, masterid)
SELECT i, i, 1 FROM gen, generate_series(6, gen.nbuilders) AS i;

INSERT INTO configured_workers (buildermasterid, workerid)
SELECT i, 1 + (i * 7 + k * 331) % gen.nworkers
FROM gen, generate_series(6, gen.nbuilders) AS i, generate_series(0, 2) AS k
WHERE gen.nworkers > 3;

\echo sourcestamps (one per change)
INSERT INTO sourcestamps (id, ss_hash, branch, revision, patchid, repository, codebase, project, created_at)
SELECT i,
       left(encode(sha256(('ss:' || i)::bytea), 'hex'), 40),
       CASE WHEN i % 10 = 0 THEN 'release/' || (i / 100000 + 1) || '.x' ELSE 'master' END,
       md5('rev:' || i) || left(md5('rev2:' || i), 8),
       NULL,
       'https://git.example.invalid/flotilla.git', '', 'flotilla',
       t0 + 30 * i
FROM gen, generate_series(1, gen.c) AS i;

\echo changes
INSERT INTO changes (changeid, author, committer, comments, branch, revision, revlink, when_timestamp,
                     category, repository, codebase, project, sourcestampid, parent_changeids)
SELECT i,
       'dev' || (i % 50) || ' <dev' || (i % 50) || '@example.invalid>',
       'dev' || (i % 50) || ' <dev' || (i % 50) || '@example.invalid>',
       'change ' || i || ': touch module ' || (i % 37),
       CASE WHEN i % 10 = 0 THEN 'release/' || (i / 100000 + 1) || '.x' ELSE 'master' END,
       md5('rev:' || i) || left(md5('rev2:' || i), 8),
       NULL,
       t0 + 30 * i,
       NULL,
       'https://git.example.invalid/flotilla.git', '', 'flotilla',
       i,
       NULL
FROM gen, generate_series(1, gen.c) AS i;

\echo change_files (1-3 per change)
INSERT INTO change_files (changeid, filename)
SELECT i, 'src/module_' || (i % 37) || '/file_' || ((i * k) % 1000) || '.c'
FROM gen, generate_series(1, gen.c) AS i, generate_series(1, 3) AS k
WHERE k <= 1 + i % 3;

\echo buildsets
INSERT INTO buildsets (id, external_idstring, reason, submitted_at, complete, complete_at, results,
                       parent_buildid, parent_relationship)
SELECT i, NULL,
       'The SingleBranchScheduler scheduler named ''on-master'' triggered this build',
       t0 + 60 * i,
       CASE WHEN i > r - p THEN 0 ELSE 1 END,
       CASE WHEN i > r - p THEN NULL
            WHEN i % step = 0 AND i <= step * p THEN t0 + 60 * i + 10 + 30 + i % 97 + 5 + 30 + i % 89
            ELSE t0 + 60 * i + 10 + 30 + i % 97 END,
       CASE WHEN i > r - p THEN NULL WHEN i % 20 = 0 THEN 2 WHEN i % 7 = 0 THEN 1 ELSE 0 END,
       NULL, NULL
FROM gen, generate_series(1, gen.r) AS i;

\echo buildset_sourcestamps
INSERT INTO buildset_sourcestamps (id, buildsetid, sourcestampid)
SELECT i, i, least(c, 2 * i)
FROM gen, generate_series(1, gen.r) AS i;

\echo buildrequests
INSERT INTO buildrequests (id, buildsetid, builderid, priority, complete, results, submitted_at,
                           complete_at, waited_for)
SELECT i, i, 1 + (i - 1) % nbuilders, i % 3,
       CASE WHEN i > r - p THEN 0 ELSE 1 END,
       CASE WHEN i > r - p THEN -1 WHEN i % 20 = 0 THEN 2 WHEN i % 7 = 0 THEN 1 ELSE 0 END,
       t0 + 60 * i,
       CASE WHEN i > r - p THEN NULL
            WHEN i % step = 0 AND i <= step * p THEN t0 + 60 * i + 10 + 30 + i % 97 + 5 + 30 + i % 89
            ELSE t0 + 60 * i + 10 + 30 + i % 97 END,
       0
FROM gen, generate_series(1, gen.r) AS i;

\echo buildrequest_claims (every complete request, by master 1)
INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
SELECT i, 1, t0 + 60 * i + 5
FROM gen, generate_series(1, gen.r - gen.p) AS i;

\echo builds (one per complete request, two for the retried ones)
INSERT INTO builds (id, number, builderid, buildrequestid, workerid, masterid, started_at, complete_at,
                    state_string, results)
SELECT id, row_number() OVER (PARTITION BY builderid ORDER BY id), builderid, brid,
       1 + id % (nworkers - 1), 1, started_at, complete_at,
       CASE results WHEN 0 THEN 'build successful' WHEN 1 THEN 'warnings lint' WHEN 2 THEN 'failed test'
                    ELSE 'retry lost connection' END,
       results
FROM (
  SELECT row_number() OVER (ORDER BY a.brid, a.attempt) AS id, a.*
  FROM (
    SELECT i AS brid, k AS attempt, 1 + (i - 1) % nbuilders AS builderid, nworkers,
           CASE WHEN k = 1 THEN t0 + 60 * i + 10 ELSE t0 + 60 * i + 10 + 30 + i % 97 + 5 END AS started_at,
           CASE WHEN k = 1 THEN t0 + 60 * i + 10 + 30 + i % 97
                ELSE t0 + 60 * i + 10 + 30 + i % 97 + 5 + 30 + i % 89 END AS complete_at,
           CASE WHEN k = 1 AND i % step = 0 AND i <= step * p THEN 5
                WHEN i % 20 = 0 THEN 2 WHEN i % 7 = 0 THEN 1 ELSE 0 END AS results
    FROM gen, generate_series(1, gen.r - gen.p) AS i, generate_series(1, 2) AS k
    WHERE k = 1 OR (i % step = 0 AND i <= step * p)
  ) a
) b;

-- the newest nb builds get steps, logs and properties
CREATE TEMP TABLE newest AS
SELECT b.*, row_number() OVER (ORDER BY b.id) - 1 AS ord
FROM builds b, gen WHERE b.id > (SELECT max(id) FROM builds) - gen.nb;

\echo steps (5 per newest build)
INSERT INTO steps (id, number, name, buildid, started_at, complete_at, state_string, results, urls_json, hidden)
SELECT n.ord * 5 + k + 1, k, (ARRAY['git', 'compile', 'test', 'lint', 'upload'])[k + 1], n.id,
       n.started_at + 5 * k, n.started_at + 5 * k + 5,
       (ARRAY['update', 'compile', 'test', 'lint', 'upload'])[k + 1] || CASE WHEN k = 2 AND n.results = 2 THEN ' (failure)' ELSE '' END,
       CASE WHEN k = 2 THEN least(n.results, 2) WHEN k = 3 AND n.results = 1 THEN 1 ELSE 0 END,
       '[]', 0
FROM newest n, generate_series(0, 4) AS k;

\echo logs (one stdio log per step)
INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type)
SELECT s.id, 'stdio', 'stdio', s.id, 1, 3 + s.number, 's'
FROM steps s;

\echo logchunks (one chunk per step log)
\ir stdio-chunks.sql

\echo build_properties (9 per newest build)
INSERT INTO build_properties (buildid, name, value, source)
SELECT n.id, p.name, p.value, p.source
FROM newest n
JOIN builders bd ON bd.id = n.builderid
JOIN sourcestamps ss ON ss.id = least((SELECT c FROM gen), 2 * n.buildrequestid)
CROSS JOIN LATERAL (VALUES
  ('buildername', to_json(bd.name)::text, 'Builder'),
  ('buildnumber', n.number::text, 'Build'),
  ('workername', (SELECT to_json(w.name)::text FROM workers w WHERE w.id = n.workerid), 'Worker'),
  ('branch', to_json(ss.branch)::text, 'Build'),
  ('revision', to_json(ss.revision)::text, 'Build'),
  ('repository', to_json(ss.repository)::text, 'Build'),
  ('project', to_json(ss.project)::text, 'Build'),
  ('codebase', '""', 'Build'),
  ('scheduler', '"on-master"', 'Scheduler')
) AS p(name, value, source);

\echo huge log (:huge_lines lines, chunks of 1000 lines)
INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type)
SELECT (SELECT max(id) + 1 FROM logs), 'huge', 'huge', s.id, 1, gen.huge, 's'
FROM gen, steps s
WHERE s.buildid = (SELECT max(id) FROM builds) AND s.name = 'test';

INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
SELECT (SELECT id FROM logs WHERE slug = 'huge'), ch * 1000, least(ch * 1000 + 999, gen.huge - 1),
       convert_to((SELECT string_agg('otest_' || lpad(n::text, 7, '0') || ' ... ok (module '
                                     || (n % 37) || ', ' || (n % 1000) || ' ms)', E'\n' ORDER BY n)
                   FROM generate_series(ch * 1000, least(ch * 1000 + 999, gen.huge - 1)) AS n), 'UTF8'),
       0
FROM gen, generate_series(0, (gen.huge - 1) / 1000) AS ch;

\ir sequences.sql
