// Bugs the test suites found once, each pinned by the request that showed it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { ApiUnderTest, JSON_ACCEPT } from './lib/harness.js';

let api: ApiUnderTest;
beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
});
afterAll(async () => {
  await api?.close();
});

describe('regressions', () => {
  it('a NUL byte in a value or a path is a 400 or a 404, never a 500', async () => {
    expect((await api.get('/builds?state_string=%00')).status).toBe(400);
    expect((await api.get('/builds?property=%00')).status).toBe(400);
    expect((await api.get('/builders?tags__contains=%00')).status).toBe(400);
    expect((await api.get('/builders/a%00b/forceschedulers')).status).toBe(404);
  });

  it("a boolean filter spelled like an object's own property is a 400 (the fuzz suite's __proto__)", async () => {
    for (const v of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const a = await api.get(`/schedulers?enabled=${v}`);
      expect([a.status, a.json()], v).toEqual([400, { error: 'invalid filter value for enabled' }]);
    }
  });

  it('repeated contains on a list of integers matches any of them', async () => {
    const a = await api.get('/builders?masterids__contains=1&masterids__contains=2');
    expect(a.status).toBe(200);
    expect(a.json().meta.total).toBe(5);
  });

  it('a collection under a parent that cannot exist is a 404', async () => {
    const a = await api.get('/builders/no%20such/forceschedulers');
    expect([a.status, a.text]).toEqual([404, 'not found']);
  });

  it('a URL that cannot be decoded is a plain 404', async () => {
    for (const p of ['/builds/%zz', '/builds/%E9']) {
      const a = await api.get(p);
      expect([a.status, a.mediaType, a.text]).toEqual([404, 'text/plain', 'not found']);
    }
  });

  it('build data downloads have an ETag and answer 304', async () => {
    const a = await api.get('/builds/2/data/coverage/value', {});
    expect(a.status).toBe(200);
    const etag = a.headers.etag as string;
    expect(etag).toMatch(/^"/);
    expect((await api.get('/builds/2/data/coverage/value', { 'if-none-match': etag })).status).toBe(304);
  });

  it('If-None-Match compares weakly', async () => {
    const a = await api.get('/logs/5/raw', {});
    const etag = a.headers.etag as string;
    expect(etag).toMatch(/^W\//);
    expect((await api.get('/logs/5/raw', { 'if-none-match': etag.slice(2) })).status).toBe(304);
  });

  it('limit=0 gives no Link to a next page', async () => {
    expect((await api.get('/builds?limit=0')).headers.link).toBeUndefined();
    expect((await api.get('/builds?limit=1')).headers.link).toBeDefined();
  });

  it('OPTIONS without an Origin is an invalid method', async () => {
    const a = await api.request('OPTIONS', '/builds');
    expect([a.status, a.json()]).toEqual([400, { error: 'invalid HTTP method' }]);
  });

  it('a request whose complete is NULL counts as incomplete everywhere', async () => {
    await api.db.pool.query(
      sql`INSERT INTO buildrequests (id, buildsetid, builderid, submitted_at, complete) VALUES (900, 1, 2, 1, NULL)`,
    );
    expect((await api.get('/buildrequests/900')).json().buildrequests[0].complete).toBe(false);
    const ids = (await api.get('/buildrequests?complete=false'))
      .json()
      .buildrequests.map((r: { buildrequestid: number }) => r.buildrequestid);
    expect(ids).toContain(900);
    await api.db.pool.query(sql`DELETE FROM buildrequests WHERE id = 900`);
  });

  it('a POST from a foreign origin gets the JSON-RPC error shape', async () => {
    const a = await api.rpc(
      '/builds/2',
      { jsonrpc: '2.0', method: 'stop', id: 1, params: {} },
      { origin: 'http://evil.example' },
    );
    expect([a.status, a.json()]).toEqual([400, { error: { message: 'invalid origin' } }]);
  });

  it('JSON answers vary by Accept (and Accept-Encoding: they may be compressed)', async () => {
    expect((await api.get('/builders', JSON_ACCEPT)).headers.vary).toBe('Accept, Accept-Encoding');
  });
});
