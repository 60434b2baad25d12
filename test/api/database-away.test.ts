// While PostgreSQL is away (a restart, a failover: every connection cut, new ones refused),
// the API answers 503 with Retry-After, never a 500, and serves again once it is back.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { masterConfigSchema } from '../../services/core/config/master-config.js';
import { isDatabaseOutage } from '../../services/core/db/outage.js';
import { type ConnectionPool, createPool } from '../../services/core/db/pool.js';
import { apiInProcess, type InProcessApi } from '../helpers/api.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let proxy: PgProxy;
let pool: ConnectionPool;
let api: InProcessApi;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createDatabase('fixture');
  proxy = await startPgProxy(db.url);
  pool = createPool(proxy.url, { poolSize: 4 });
  api = await apiInProcess({
    db: { pool, url: proxy.url },
    // Kept pages would be answered without the database; this is about what needs it.
    www: masterConfigSchema.shape.www.parse({ page_cache: { enabled: false } }),
  });
  app = api.app;
});
afterAll(async () => {
  await api?.stop();
  await pool?.dispose();
  await proxy?.close();
  await db?.drop();
});

const get = (url: string) => app.inject({ method: 'GET', url, headers: { accept: 'application/json' } });

describe('the API while PostgreSQL is away', () => {
  it('answers 503 with Retry-After to reads and calls, then serves again', async () => {
    expect((await get('/api/v2/builds?limit=1')).statusCode).toBe(200);
    proxy.cut();
    try {
      for (const url of ['/api/v2/builds?limit=1', '/api/v2/builders/1', '/api/v2/logs/1/contents']) {
        const a = await get(url);
        expect({ url, status: a.statusCode, retryAfter: a.headers['retry-after'] }).toEqual({
          url,
          status: 503,
          retryAfter: '5',
        });
        expect(a.json()).toEqual({ error: 'the database is unavailable for a moment: try again later' });
      }
      const call = await app.inject({
        method: 'POST',
        url: '/api/v2/buildrequests/1',
        headers: { 'content-type': 'application/json' },
        payload: { jsonrpc: '2.0', id: 1, method: 'cancel', params: {} },
      });
      expect({ status: call.statusCode, retryAfter: call.headers['retry-after'] }).toEqual({
        status: 503,
        retryAfter: '5',
      });
    } finally {
      proxy.restore();
    }
    await waitFor(
      'reads to succeed again',
      async () => (await get('/api/v2/builds?limit=1')).statusCode === 200,
    );
  });
});

describe('isDatabaseOutage', () => {
  it('tells an outage from a wrong query', () => {
    const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    for (const e of [
      coded('ECONNREFUSED'),
      coded('57P01', 'terminating connection due to administrator command'),
      coded('57P03', 'the database system is starting up'),
      coded('08006'),
      new Error('Connection terminated unexpectedly'),
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]),
    ])
      expect(isDatabaseOutage(e)).toBe(true);
    for (const e of [
      coded('42P01', 'relation "x" does not exist'),
      coded('23505'),
      coded('57014', 'canceling statement due to statement timeout'),
      new Error('boom'),
      'not an error',
    ])
      expect(isDatabaseOutage(e)).toBe(false);
  });
});
