// Control actions whose effect the oracle cases cannot show: set_priority, and a stop that
// reaches a build whose master is no longer active.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { ApiUnderTest } from './lib/harness.js';

let api: ApiUnderTest;
beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
});
afterAll(async () => {
  await api?.close();
});

const call = (path: string, method: string, params: Record<string, unknown> = {}) =>
  api.rpc(path, { jsonrpc: '2.0', method, id: 7, params });

describe('set_priority', () => {
  it('changes the priority of a pending request', async () => {
    const a = await call('/buildrequests/101', 'set_priority', { priority: 5 });
    expect([a.status, a.json()]).toEqual([200, { id: 7, jsonrpc: '2.0', result: null }]);
    expect((await api.get('/buildrequests/101')).json().buildrequests[0].priority).toBe(5);
  });

  it('refuses a completed request and a priority that is not an integer', async () => {
    const done = await call('/buildrequests/2', 'set_priority', { priority: 5 });
    expect([done.status, done.json().error.code]).toEqual([400, -32602]);
    const bad = await call('/buildrequests/101', 'set_priority', { priority: 'high' });
    expect([bad.status, bad.json().error]).toEqual([
      400,
      { code: -32602, message: { priority: 'expected an integer' } },
    ]);
  });
});

describe('stop', () => {
  it('ends a build whose master is no longer active', async () => {
    const db = api.db.pool;
    // A build still running on master 1, which then went away.
    await db.query(sql`UPDATE builds SET complete_at = NULL, results = NULL WHERE id = 99`);
    await db.query(sql`UPDATE buildrequests SET complete = 0, results = -1, complete_at = NULL
                       WHERE id = (SELECT buildrequestid FROM builds WHERE id = 99)`);
    await db.query(sql`UPDATE steps SET complete_at = NULL, results = NULL WHERE buildid = 99 AND number = (
                       SELECT max(number) FROM steps WHERE buildid = 99)`);
    const [reopened] = await db.query(
      sql`SELECT count(*)::int AS n FROM steps WHERE buildid = 99 AND complete_at IS NULL`,
    );
    expect(reopened.n).toBe(1);
    await db.query(sql`UPDATE masters SET active = 0 WHERE id = 1`);
    try {
      const a = await call('/builds/99', 'stop', { reason: 'nobody home' });
      expect(a.status).toBe(200);
      const build = (await api.get('/builds/99')).json().builds[0];
      expect(build).toMatchObject({ complete: true, results: 6, state_string: 'cancelled (nobody home)' });
      const steps = (await api.get('/builds/99/steps')).json().steps;
      expect(steps.length).toBeGreaterThan(0);
      for (const s of steps) expect(s.complete).toBe(true);
      const br = (await api.get(`/buildrequests/${build.buildrequestid}`)).json().buildrequests[0];
      expect(br).toMatchObject({ complete: true, results: 6 });
    } finally {
      await db.query(sql`UPDATE masters SET active = 1 WHERE id = 1`);
    }
  });

  it('leaves a build whose master is active to that master', async () => {
    await api.db.pool.query(sql`UPDATE builds SET complete_at = NULL, results = NULL WHERE id = 98`);
    expect((await call('/builds/98', 'stop', {})).status).toBe(200);
    expect((await api.get('/builds/98')).json().builds[0].complete).toBe(false);
  });
});

describe('scheduler enable', () => {
  const enabled = async (id: number) =>
    (await api.get(`/schedulers/${id}?field=enabled`)).json().schedulers[0].enabled as boolean;

  it('turns a scheduler off and on again, by either path', async () => {
    const off = await call('/schedulers/1', 'enable', { enabled: false });
    expect([off.status, off.json()]).toEqual([200, { id: 7, jsonrpc: '2.0', result: null }]);
    expect(await enabled(1)).toBe(false);
    const [row] = await api.db.pool.query(sql`SELECT enabled FROM schedulers WHERE id = 1`);
    expect(row.enabled).toBe(0);
    const on = await call('/masters/1/schedulers/1', 'enable', { enabled: true });
    expect(on.status).toBe(200);
    expect(await enabled(1)).toBe(true);
  });

  it('refuses a value that is not a boolean, and a scheduler another master runs', async () => {
    for (const params of [{}, { enabled: 'no' }, { enabled: 0 }]) {
      const bad = await call('/schedulers/1', 'enable', params);
      expect([bad.status, bad.json().error]).toEqual([
        400,
        { code: -32602, message: { enabled: 'expected true or false' } },
      ]);
    }
    expect(await enabled(1)).toBe(true);
    const elsewhere = await call('/masters/999/schedulers/1', 'enable', { enabled: false });
    expect([elsewhere.status, elsewhere.text]).toEqual([404, 'not found']);
    expect((await call('/schedulers/999999', 'enable', { enabled: false })).status).toBe(404);
    expect(await enabled(1)).toBe(true);
  });

  it('answers -32601 to any other method, as every other path does (Buildbot: 200 result null)', async () => {
    const other = await call('/schedulers/1', 'nosuch');
    expect([other.status, other.json().error]).toEqual([
      501,
      { code: -32601, message: 'action: nosuch is not supported' },
    ]);
  });
});
