// The entities events carry are what the read API answers for the same row: checked on every
// build, step, log, change, worker, builder, scheduler and build request a real Buildbot wrote
// into the oracle's fixture.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  builderJson,
  buildJson,
  buildrequestJson,
  changeJson,
  entity,
  logJson,
  schedulerJson,
  stepJson,
  workerJson,
} from '../../../services/core/data/entities.js';
import { type SQLQuery, sql } from '../../../services/core/db/pool.js';
import { apiGet, type Harness, openHarness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness('fixture');
});
afterAll(async () => {
  await h?.close();
});

const cases: [string, string, (alias: string) => SQLQuery, string, string][] = [
  ['builds', 'id', buildJson, 'builds', 'builds/'],
  ['steps', 'id', stepJson, 'steps', 'steps/'],
  ['logs', 'id', logJson, 'logs', 'logs/'],
  ['changes', 'changeid', changeJson, 'changes', 'changes/'],
  ['workers', 'id', workerJson, 'workers', 'workers/'],
  ['builders', 'id', builderJson, 'builders', 'builders/'],
  ['schedulers', 'id', schedulerJson, 'schedulers', 'schedulers/'],
  ['buildrequests', 'id', buildrequestJson, 'buildrequests', 'buildrequests/'],
];

describe('entities agree with the read API', () => {
  it.each(cases)('%s', async (table, idColumn, json, _plural, path) => {
    const ids = await h.db.pool.query(
      sql`SELECT ${sql.ident(idColumn)} AS id FROM ${sql.ident(table)} ORDER BY 1`,
    );
    expect(ids.length).toBeGreaterThan(0);
    for (const { id } of ids) {
      const e = await entity(h.db.pool, table, 'x', json('x'), id, idColumn);
      const [api] = await apiGet(h.db.pool, `${path}${id}`);
      expect(e, `${table} ${id}`).toEqual(api);
    }
  });
});
