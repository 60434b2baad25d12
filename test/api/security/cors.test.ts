// CORS as configured (www.allowed_origins, Buildbot's allowed_origins): listed origins and
// patterns get the CORS headers; any other origin is refused with Buildbot's 400 "invalid
// origin" (for a JSON-RPC call too, so a foreign page cannot act with a user's cookie).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { AuthApp } from '../auth/lib.js';

let db: TestDatabase;
let api: AuthApp;
beforeAll(async () => {
  db = await createDatabase('fixture');
  api = await AuthApp.start(
    {
      www: {
        rate_limit: { enabled: false },
        allowed_origins: ['https://ui.example.org', 'https://*.corp.example'],
      },
    },
    { db },
  );
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

describe('www.allowed_origins', () => {
  it.each(['https://ui.example.org', 'https://build.corp.example', 'HTTPS://UI.EXAMPLE.ORG'])(
    '%s is allowed',
    async (origin) => {
      const a = await api.get('/api/v2/builders', { headers: { origin } });
      expect(a.status).toBe(200);
      expect(a.headers['access-control-allow-origin']).toBe(origin.toLowerCase());
      const pre = await api.request('OPTIONS', '/api/v2/builds/2', {
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      expect(pre.status).toBe(200);
      // As Buildbot's: Twisted's default type and an empty body.
      expect([pre.headers['content-type'], pre.text]).toEqual(['text/html', '']);
    },
  );
  it.each([
    'http://flotilla.test:8010',
    'https://evil.example',
    'https://ui.example.org.evil.example',
    'null',
  ])('%s is refused: 400 invalid origin, GET and POST', async (origin) => {
    const a = await api.get('/api/v2/builders', { headers: { origin } });
    expect(a.status).toBe(400);
    expect(a.json()).toEqual({ error: 'invalid origin' });
    expect(a.headers['access-control-allow-origin']).toBeUndefined();
    const p = await api.rpc('/builds/2', 'stop', {}, { headers: { origin } });
    expect(p.status).toBe(400);
    expect(p.json()).toEqual({ error: { message: 'invalid origin' } });
  });
});
