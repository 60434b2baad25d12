// Error answers say what went wrong for the client and nothing about the server: a database
// that fails (its message names databases, users, addresses, SQL) is `internal error` on
// every route; framework refusals carry their meaning, not Fastify's codes; every answer
// says nosniff. (The fuzz test greps every error answer it provokes for the same things.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectionPool, createPool } from '../../../services/core/db/pool.js';
import { apiInProcess, type InProcessApi } from '../../helpers/api.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { testEnv, withDatabase } from '../../helpers/env.js';
import { basic, testHash } from '../auth/lib.js';
import { oracleForceSchedulers, PUBLIC_URL } from '../lib/harness.js';

/** A pool on a database that does not exist: every query fails. */
function failingDatabase(): { pool: ConnectionPool; url: string } {
  const url = withDatabase(testEnv().databaseUrl, 'flotilla_no_such_database');
  return { pool: createPool(url, { poolSize: 1 }), url };
}

describe('a database that fails', () => {
  let api: InProcessApi;
  let app: InProcessApi['app'];
  const db = failingDatabase();
  beforeAll(async () => {
    api = await apiInProcess({
      db,
      publicUrl: PUBLIC_URL,
      forceSchedulers: oracleForceSchedulers(),
      auth: {
        users: [{ username: 'u', password_hash: await testHash('p'), groups: [] }],
        role_matchers: [],
        session_expiry_seconds: 60,
        login_throttle: {
          max_failures_per_user: 10,
          max_failures_per_client: 10,
          max_failures_per_user_global: 10,
          window_seconds: 60,
        },
      },
    });
    app = api.app;
  });
  afterAll(async () => {
    await api?.stop();
    await db.pool.dispose();
  });

  it.each([
    ['GET', '/api/v2/builders', {}],
    ['GET', '/api/v2/builds/2/steps?limit=3', { accept: 'application/json' }],
    ['HEAD', '/api/v2/builds', {}],
    ['POST', '/api/v2/builds/2', { 'content-type': 'application/json' }],
    ['GET', '/auth/login', { authorization: basic('u', 'p') }],
    ['GET', '/auth/logout', {}],
    ['GET', '/config', {}],
  ])('%s %s: 500 "internal error", nothing more', async (method, url, headers) => {
    const res = await app.inject({
      method: method as 'GET',
      url,
      headers: headers as Record<string, string>,
      ...(method === 'POST' ? { payload: '{"jsonrpc":"2.0","method":"stop","id":1,"params":{}}' } : {}),
    });
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    if (method !== 'HEAD') expect(res.body).toBe('{"error": "internal error"}');
    expect(res.body).not.toMatch(/flotilla|database|postgres|SELECT|at /i);
  });
});

describe('the probes while the database fails', () => {
  it('/healthz stays 200 (alive), /readyz says 503', async () => {
    const db = failingDatabase();
    const { app, stop } = await apiInProcess({ db, publicUrl: PUBLIC_URL });
    try {
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    } finally {
      await stop();
      await db.pool.dispose();
    }
  });
});

describe('framework refusals', () => {
  let api: InProcessApi;
  let app: InProcessApi['app'];
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createDatabase('fixture');
    api = await apiInProcess({
      db,
      publicUrl: PUBLIC_URL,
      forceSchedulers: oracleForceSchedulers(),
      bodyLimit: 100,
    });
    app = api.app;
  });
  afterAll(async () => {
    await api?.stop();
    await db?.drop();
  });

  it('a body past the limit: our words, not Fastify codes', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v2/builds/2',
      headers: { 'content-type': 'application/json' },
      payload: `{"jsonrpc":"2.0","method":"stop","id":1,"params":{"r":"${'x'.repeat(1000)}"}}`,
    });
    expect(res.statusCode).toBe(413);
    expect(res.body).toBe('{"error": "request body too large"}');
  });
  it('a NUL character in JSON-RPC params is -32602, not a database error (Buildbot: a 500)', async () => {
    for (const params of ['{"reason":"a\\u0000b","builderid":4}', '{"x":[[{"k\\u0000":1}]]}']) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v2/forceschedulers/force-runtests',
        headers: { 'content-type': 'application/json' },
        payload: `{"jsonrpc":"2.0","method":"force","id":1,"params":${params}}`,
      });
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body).error).toEqual({
        code: -32602,
        message: 'params may not contain NUL characters',
      });
    }
  });
  it('a URL that cannot be decoded names nothing', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v2/%E0%A4%A' });
    expect(res.statusCode).toBe(404);
    expect(res.body).toBe('not found');
  });
  it('a force naming a builder id past 32 bits is a 400, not a database error', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v2/forceschedulers/force-runtests',
      headers: { 'content-type': 'application/json' },
      payload: '{"jsonrpc":"2.0","method":"force","id":1,"params":{"builderid":1e20}}',
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body).error).toEqual({
      code: -32602,
      message: { builderid: 'not the id of a builder of this scheduler: 100000000000000000000' },
    });
  });
});
