// Control actions while Redis is away: a stop or a worker action that must reach a master
// cannot be carried, so it is refused with 503 and Retry-After (nothing changed, send it
// again), never a 500 and never a 200 for a message that went nowhere. What needs no master
// (ending a build whose master is gone, cancelling a request nobody claimed) still works.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { ApiUnderTest } from './lib/harness.js';

let api: ApiUnderTest;
beforeAll(async () => {
  // Nothing listens on port 1: every command fails once the client gives it up.
  api = await ApiUnderTest.start('fixture', { redisUrl: 'redis://127.0.0.1:1' });
});
afterAll(async () => {
  await api?.close();
});

const call = (path: string, method: string, params: Record<string, unknown> = {}) =>
  api.rpc(path, { jsonrpc: '2.0', method, id: 7, params });

const REFUSED = 'the master cannot be reached for a moment: nothing was changed, try again later';

function expectRefused(a: Awaited<ReturnType<typeof call>>): void {
  expect(a.status).toBe(503);
  expect(a.headers['retry-after']).toBe('5');
  expect(a.json()).toEqual({ error: REFUSED });
}

/** Build `id` running again on master 1 (active), its request claimed by that master. */
async function running(id: number): Promise<number> {
  const db = api.db.pool;
  await db.query(sql`UPDATE builds SET complete_at = NULL, results = NULL WHERE id = ${id}`);
  const [b] = await db.query(sql`SELECT buildrequestid FROM builds WHERE id = ${id}`);
  const brid = b.buildrequestid as number;
  await db.query(
    sql`UPDATE buildrequests SET complete = 0, results = -1, complete_at = NULL WHERE id = ${brid}`,
  );
  await db.query(sql`DELETE FROM buildrequest_claims WHERE brid = ${brid}`);
  await db.query(sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at) VALUES (${brid}, 1, 1)`);
  await db.query(sql`UPDATE masters SET active = 1 WHERE id = 1`);
  return brid;
}

describe('while Redis is away', () => {
  it('refuses to stop a running build whose master is active, and leaves it running', async () => {
    await running(98);
    expectRefused(await call('/builds/98', 'stop', { reason: 'now' }));
    expect((await api.get('/builds/98')).json().builds[0].complete).toBe(false);
  });

  it('refuses to cancel a claimed request whose build runs, and leaves both as they were', async () => {
    const brid = await running(97);
    expectRefused(await call(`/buildrequests/${brid}`, 'cancel', { reason: 'now' }));
    expect((await api.get('/builds/97')).json().builds[0].complete).toBe(false);
    expect((await api.get(`/buildrequests/${brid}`)).json().buildrequests[0].complete).toBe(false);
  });

  it('refuses a worker action', async () => {
    expectRefused(await call('/workers/1', 'pause', { reason: 'now' }));
  });

  it('still ends a build whose master is gone, which needs no message', async () => {
    await running(96);
    await api.db.pool.query(sql`UPDATE masters SET active = 0 WHERE id = 1`);
    try {
      const a = await call('/builds/96', 'stop', { reason: 'nobody home' });
      expect(a.status).toBe(200);
      expect((await api.get('/builds/96')).json().builds[0]).toMatchObject({ complete: true, results: 6 });
    } finally {
      await api.db.pool.query(sql`UPDATE masters SET active = 1 WHERE id = 1`);
    }
  });
});
