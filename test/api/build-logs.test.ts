// Flotilla's `/builds/{buildid}/logs` (services/api/registry/resources/logs.ts): every log of
// a build's steps in one read, so that the web UI's build page costs one read of logs instead
// of one `/steps/{stepid}/logs` per step.
import { expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { collection } from './lib/harness.js';
import { apiOnRows, expectBadQueriesRefused, expectOutsideSpec } from './lib/own-endpoint.js';

// Build 1 has steps 1-3 (step 2 without a log, step 3 with two), build 2 step 4 with one log.
const ROWS = [
  sql`INSERT INTO masters (id, name, name_hash, active, last_active) VALUES (1, 'm', md5('m'), 1, 0)`,
  sql`INSERT INTO builders (id, name, name_hash) VALUES (1, 'a', md5('a'))`,
  sql`INSERT INTO buildsets (id, submitted_at, complete) SELECT i, i, 1 FROM generate_series(1, 2) i`,
  sql`INSERT INTO buildrequests (id, buildsetid, builderid, submitted_at, complete)
    SELECT i, i, 1, i, 1 FROM generate_series(1, 2) i`,
  sql`INSERT INTO builds (id, number, builderid, buildrequestid, masterid, started_at, complete_at, state_string, results)
    SELECT i, i, 1, i, 1, i, i + 1, 'done', 0 FROM generate_series(1, 2) i`,
  sql`INSERT INTO steps (id, number, name, buildid, started_at, complete_at, state_string, results, urls_json, hidden)
    VALUES (1, 0, 's0', 1, 1, 2, 'ok', 0, '[]', 0), (2, 1, 's1', 1, 1, 2, 'ok', 0, '[]', 0),
           (3, 2, 's2', 1, 1, 2, 'ok', 0, '[]', 0), (4, 0, 's0', 2, 2, 3, 'ok', 0, '[]', 0)`,
  sql`INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type)
    VALUES (1, 'stdio', 'stdio', 1, 1, 3, 's'), (2, 'stdio', 'stdio', 3, 1, 4, 's'),
           (3, 'summary', 'summary', 3, 0, 1, 't'), (4, 'stdio', 'stdio', 4, 1, 5, 's')`,
];
const t = apiOnRows(ROWS);

it("answers every log of the build's steps, each exactly as its step's own list answers it", async () => {
  const { rows, total } = collection<Record<string, unknown>>(await t.api.get('/builds/1/logs'), 'logs');
  expect(rows.map((r) => [r.logid, r.stepid])).toEqual([
    [1, 1],
    [2, 3],
    [3, 3],
  ]);
  expect(total).toBe(3);
  const perStep = [];
  for (const stepid of [1, 2, 3])
    perStep.push(...collection(await t.api.get(`/steps/${stepid}/logs`), 'logs').rows);
  expect(rows).toEqual(perStep);
});

it('filters and pages in the query language, as any collection', async () => {
  const page = collection<{ logid: number; stepid: number }>(
    await t.api.get('/builds/1/logs?stepid=3&order=-logid&limit=1&field=logid&field=stepid'),
    'logs',
  );
  expect(page).toEqual({ rows: [{ logid: 3, stepid: 3 }], total: 2 });
});

it('answers 404 for a build that does not exist, and 400 for bad input, in the contract shape', async () => {
  const missing = await t.api.get('/builds/99/logs');
  expect(missing.status).toBe(404);
  await expectBadQueriesRefused(t.api, '/builds/1/logs', ['stepid__in=x', 'nosuch=1', 'limit=-1']);
});

it('stays out of /application.spec, which is Buildbot 3.7s', async () => {
  await expectOutsideSpec(t.api, 'builds/n:buildid/logs', 'steps/n:stepid/logs');
});
