// Flotilla's `/change_builds` (services/api/registry/resources/change-builds.ts): the builds
// of many changes in one read, each with its change, so that a page of changes in the web UI
// costs one read of their builds instead of one `/changes/{id}/builds` per change.
import { expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { collection } from './lib/harness.js';
import { apiOnRows, expectBadQueriesRefused, expectOutsideSpec } from './lib/own-endpoint.js';

// Changes 1-3, each on its own stamp. Build set 1 holds stamp 1, build set 2 stamps 2 and 3
// (two codebases changed at once), build set 3 no change's stamp (a forced build). Each build
// set has a request on each of builders 1 and 2, and each request one build.
const ROWS = [
  sql`INSERT INTO masters (id, name, name_hash, active, last_active) VALUES (1, 'm', md5('m'), 1, 0)`,
  sql`INSERT INTO builders (id, name, name_hash) VALUES (1, 'a', md5('a')), (2, 'b', md5('b'))`,
  sql`INSERT INTO sourcestamps (id, ss_hash, branch, revision, repository, codebase, project, created_at)
    SELECT i, md5(i::text), 'main', 'r' || i, 'repo', 'cb' || i, 'p', i FROM generate_series(1, 4) i`,
  sql`INSERT INTO changes (changeid, author, comments, branch, revision, when_timestamp, repository, codebase,
                         project, sourcestampid)
    SELECT i, 'a', 'c' || i, 'main', 'r' || i, i, 'repo', 'cb' || i, 'p', i FROM generate_series(1, 3) i`,
  sql`INSERT INTO buildsets (id, submitted_at, complete) SELECT i, i, 1 FROM generate_series(1, 3) i`,
  sql`INSERT INTO buildset_sourcestamps (id, buildsetid, sourcestampid) VALUES (1, 1, 1), (2, 2, 2), (3, 2, 3), (4, 3, 4)`,
  sql`INSERT INTO buildrequests (id, buildsetid, builderid, submitted_at, complete)
    SELECT i, (i + 1) / 2, 2 - i % 2, i, 1 FROM generate_series(1, 6) i`,
  sql`INSERT INTO builds (id, number, builderid, buildrequestid, masterid, started_at, complete_at, state_string, results)
    SELECT i, (i + 1) / 2, 2 - i % 2, i, 1, i, i + 1, 'done', 0 FROM generate_series(1, 6) i`,
];
const t = apiOnRows(ROWS);

type Row = { changeid: number; buildid: number; builderid: number };

it("answers each change's builds with its change, newest change first and its builds newest first", async () => {
  const { rows, total } = collection<Row>(
    await t.api.get(
      '/change_builds?changeid__in=1&changeid__in=3&field=changeid&field=buildid&field=builderid',
    ),
    'builds',
  );
  expect(rows).toEqual([
    { changeid: 3, buildid: 4, builderid: 2 },
    { changeid: 3, buildid: 3, builderid: 1 },
    { changeid: 1, buildid: 2, builderid: 2 },
    { changeid: 1, buildid: 1, builderid: 1 },
  ]);
  expect(total).toBe(4);
});

it('answers for each change exactly the builds /changes/{id}/builds answers, with every build field', async () => {
  const { rows } = collection<Record<string, unknown>>(
    await t.api.get('/change_builds?changeid__in=1&changeid__in=2&changeid__in=3&order=buildid'),
    'builds',
  );
  for (const changeid of [1, 2, 3]) {
    const one = collection(await t.api.get(`/changes/${changeid}/builds?order=buildid`), 'builds').rows;
    expect(rows.filter((r) => r.changeid === changeid)).toEqual(one.map((b) => ({ ...b, changeid })));
    expect(one.length).toBe(2);
  }
  // Build set 2's builds are under both its changes; the forced build set's under none.
  expect(rows.map((r) => r.buildid)).toEqual([1, 2, 3, 3, 4, 4]);
});

it('filters and pages in the query language, as any collection', async () => {
  const page = collection<Row>(
    await t.api.get(
      '/change_builds?changeid__in=2&changeid__in=3&builderid=1&limit=1&field=changeid&field=buildid&field=builderid',
    ),
    'builds',
  );
  expect(page).toEqual({ rows: [{ changeid: 3, buildid: 3, builderid: 1 }], total: 2 });
});

it('refuses bad input with 400 in the contract shape', async () => {
  await expectBadQueriesRefused(t.api, '/change_builds', [
    'changeid__in=x',
    'changeid__foo=1',
    'nosuch=1',
    'changeid__lt=1&changeid__lt=2',
    'limit=-1',
  ]);
});

it('stays out of /application.spec, which is Buildbot 3.7s', async () => {
  await expectOutsideSpec(t.api, 'change_builds', 'changes/n:changeid/builds');
});
