// API tokens (issue 33, section 4): a logged-in user makes named tokens with an expiry and
// roles of their own, lists and revokes them at /api/v2/tokens; a script sends `Authorization:
// Bearer <token>` and acts as that user, cut to the token's roles. Refused in the contract's
// shapes: malformed, unknown, revoked (on another pod too, at once), expired, roles beyond
// the creator's, a token managing tokens. A valid token works while its user's logins are
// throttled. Create and revoke are audit rows. Two API apps (two pods) on one fixture copy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { waitFor } from '../../helpers/wait.js';
import { WsClient } from '../events/lib.js';
import { type Context, fixtureContext } from '../lib/registry-paths.js';
import { AuthApp, basic, type Reply, testHash } from './lib.js';

const RULES = [
  { match: 'stop', roles: ['developer'], default_deny: false },
  { match: 'any-control', roles: ['admin'] },
];
const ROLES = [
  { role: 'admin', groups: ['admins'] },
  { role: 'developer', groups: ['developers', 'admins'] },
  { role: 'owner', owner: true },
];
const CONFIG = {
  auth: {
    users: [] as unknown[],
    role_matchers: ROLES,
    allow_rules: RULES,
    login_throttle: { max_failures_per_user: 3 },
  },
};

let db: TestDatabase;
let api: AuthApp;
let other: AuthApp;
let ctx: Context;
let rootSession = '';
let devSession = '';

beforeAll(async () => {
  db = await createDatabase('fixture');
  ctx = await fixtureContext(db.pool);
  CONFIG.auth.users = [
    { username: 'root', email: 'root@example.test', password_hash: await testHash('a'), groups: ['admins'] },
    { username: 'dev', password_hash: await testHash('d'), groups: ['developers'] },
  ];
  api = await AuthApp.start(CONFIG, { db });
  other = await AuthApp.start(CONFIG, { db });
  rootSession = await api.login('root', 'a');
  devSession = await api.login('dev', 'd');
});
afterAll(async () => {
  await api?.close();
  await other?.close();
  await db?.drop();
});

const now = () => Math.floor(Date.now() / 1000);
/** A token's id and secret (the secret may hold `_`). */
function partsOf(token: string): { id: number; secret: string } {
  const m = /^flt_([0-9]+)_(.+)$/s.exec(token)!;
  return { id: Number(m[1]), secret: m[2]! };
}
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

async function create(session: string, params: Record<string, unknown>): Promise<Reply> {
  return api.rpc('/tokens', 'create', params, { session });
}

async function newToken(session: string, name: string, roles?: string[]): Promise<string> {
  const a = await create(session, { name, expires_at: now() + 3600, ...(roles ? { roles } : {}) });
  expect(a.status, a.text).toBe(200);
  return a.json().result.token;
}

const stopBuild = (r: Parameters<AuthApp['rpc']>[3]) => api.rpc(`/builds/${ctx.buildid}`, 'stop', {}, r);
const rpcAs = (token: string, path: string, method: string) =>
  api.rpc(path, method, {}, { headers: { authorization: `Bearer ${token}` } });

describe('making, listing and using a token', () => {
  it('answers the token once, lists it without its secret, and keeps only a hash', async () => {
    const a = await create(rootSession, { name: 'nightly', expires_at: now() + 3600, roles: ['developer'] });
    expect(a.status, a.text).toBe(200);
    const { result } = a.json();
    expect(result).toMatchObject({ name: 'nightly', roles: ['developer'] });
    expect(result.token).toMatch(/^flt_[0-9]+_[A-Za-z0-9_-]{43}$/);
    const list = await api.get('/api/v2/tokens', { session: rootSession });
    expect(list.status).toBe(200);
    const listed = list.json().tokens.find((t: { tokenid: number }) => t.tokenid === result.tokenid);
    expect(listed).toEqual({
      tokenid: result.tokenid,
      name: 'nightly',
      roles: ['developer'],
      created_at: expect.any(Number),
      expires_at: result.expires_at,
      revoked_at: null,
    });
    const { secret } = partsOf(result.token);
    expect(list.text).not.toContain(secret);
    const [row] = await db.pool.query(
      sql`SELECT encode(secret_hash, 'hex') AS h FROM flotilla.api_tokens WHERE id = ${result.tokenid}`,
    );
    expect(row.h).toHaveLength(64);
    expect(row.h).not.toBe(Buffer.from(secret, 'base64url').toString('hex'));
    // Someone else's list does not show it.
    const theirs = await api.get('/api/v2/tokens', { session: devSession });
    expect(theirs.json().tokens.map((t: { name: string }) => t.name)).not.toContain('nightly');
  });

  it('acts as its user, cut to its roles, and sets no cookie', async () => {
    const dev = await newToken(rootSession, 'developer-only', ['developer']);
    const full = await newToken(rootSession, 'everything');
    // By default every role of the user's, and the one owning gives.
    const listed = (await api.get('/api/v2/tokens', { session: rootSession })).json().tokens;
    expect(listed.find((t: { name: string }) => t.name === 'everything').roles).toEqual([
      '@authenticated',
      'admin',
      'developer',
      'owner',
    ]);
    const read = await api.get('/api/v2/builders', bearer(dev));
    expect(read.status).toBe(200);
    expect(read.cookies).toEqual([]);
    // developer may stop; admin's other actions are beyond this token.
    const stopped = await stopBuild(bearer(dev));
    expect(stopped.status, stopped.text).toBe(200);
    const refused = await rpcAs(dev, `/builds/${ctx.buildid}`, 'rebuild');
    expect([refused.status, refused.json().error.code]).toEqual([403, -32600]);
    expect((await rpcAs(full, `/builds/${ctx.buildid}`, 'rebuild')).status).toBe(200);
    const config = await api.get('/config', bearer(dev));
    expect(config.json().user).toMatchObject({ username: 'root' });
  });

  it('works while its user is locked out of password logins', async () => {
    const token = await newToken(devSession, 'throttled');
    for (let i = 0; i < 4; i++) {
      await api.get('/auth/login', { headers: { authorization: basic('dev', 'wrong') } });
    }
    const locked = await api.get('/auth/login', { headers: { authorization: basic('dev', 'd') } });
    expect(locked.status).toBe(429);
    expect((await stopBuild(bearer(token))).status).toBe(200);
  });
});

describe('refusals, in the contract shapes', () => {
  const challenge = 'Bearer realm="flotilla", error="invalid_token"';
  const refusal = (a: Reply, message: string) => {
    expect([a.status, a.text, a.headers['www-authenticate']]).toEqual([
      401,
      `{"error": "${message}"}`,
      challenge,
    ]);
  };

  it('refuses a malformed header, an unknown token and a wrong secret', async () => {
    const malformed = 'malformed Authorization header: expected \\"Bearer flt_...\\"';
    for (const h of ['Bearer', 'Bearer ', 'bearer abc', 'Bearer flt_1_short', 'Bearer flt_0_x']) {
      refusal(await api.get('/api/v2/builders', { headers: { authorization: h } }), malformed);
    }
    const real = await newToken(rootSession, 'probe');
    const { id, secret } = partsOf(real);
    const wrong = `flt_${id}_${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    refusal(await api.get('/api/v2/builders', bearer(wrong)), 'invalid API token');
    refusal(await api.get('/api/v2/builders', bearer(`flt_999999_${secret}`)), 'invalid API token');
    // A JSON-RPC call with a bad token is the same refusal, in JSON-RPC's shape.
    const call = await stopBuild(bearer(wrong));
    expect([call.status, call.json().error]).toEqual([401, { code: -32600, message: 'invalid API token' }]);
  });

  it('refuses a revoked token on every pod at once, and an expired one', async () => {
    const token = await newToken(rootSession, 'to revoke');
    const id = partsOf(token).id;
    expect((await other.get('/api/v2/builders', bearer(token))).status).toBe(200);
    const revoked = await api.rpc(`/tokens/${id}`, 'revoke', {}, { session: rootSession });
    expect([revoked.status, revoked.json().result]).toEqual([200, null]);
    refusal(await other.get('/api/v2/builders', bearer(token)), 'API token revoked');
    refusal(await api.get('/api/v2/builders', bearer(token)), 'API token revoked');
    const listed = (await api.get('/api/v2/tokens', { session: rootSession })).json().tokens;
    expect(listed.find((t: { tokenid: number }) => t.tokenid === id).revoked_at).toEqual(expect.any(Number));

    const expiring = await newToken(rootSession, 'short');
    expect((await api.get('/api/v2/builders', bearer(expiring))).status).toBe(200);
    // Its time passes (the expiry is what is checked; waiting an hour is not the test).
    await db.pool.query(
      sql`UPDATE flotilla.api_tokens SET expires_at = ${now() - 1} WHERE id = ${partsOf(expiring).id}`,
    );
    refusal(await other.get('/api/v2/builders', bearer(expiring)), 'API token expired');
  });

  it('closes a websocket opened with a token once the token is revoked, on another pod; refuses a bad one', async () => {
    const pod = await AuthApp.start(
      { ...CONFIG, www: { events: { session_check_seconds: 0.2 }, rate_limit: { enabled: false } } },
      { db, keyPrefix: api.keyPrefix },
    );
    try {
      await pod.app.listen({ port: 0, host: '127.0.0.1' });
      const url = `ws://127.0.0.1:${(pod.app.server.address() as { port: number }).port}/ws`;
      const token = await newToken(rootSession, 'watcher');
      // Refused, and the pod still answers (a refused upgrade's socket once made it spin).
      const refusedUpgrade = WsClient.open(url, { headers: { authorization: 'Bearer flt_1_nope' } });
      await expect(refusedUpgrade).rejects.toThrow('Unexpected server response: 401');
      const tooLong = WsClient.open(`${url}?x=${'a'.repeat(9000)}`, bearer(token));
      await expect(tooLong).rejects.toThrow('Unexpected server response: 414');
      expect((await pod.get('/api/v2/builders', bearer(token))).status).toBe(200);
      const socket = await WsClient.open(url, bearer(token));
      await socket.subscribe('builds/*/*');
      await api.rpc(`/tokens/${partsOf(token).id}`, 'revoke', {}, { session: rootSession });
      await waitFor('the socket of the revoked token to close', () => socket.closed !== null, {
        everyMs: 5,
        timeoutMs: 10_000,
      });
      expect(socket.closed).toEqual({ code: 1008, reason: 'the session ended' });
    } finally {
      await pod.close();
    }
  });

  // The same fix as above's (services/api/http/request-sessions.ts), for the rate limit's
  // refusal, which is not a token's: the pod answers after a 429 upgrade.
  it('answers after a rate-limited websocket upgrade', async () => {
    const limited = await AuthApp.start(
      { ...CONFIG, www: { rate_limit: { requests: 1, window_seconds: 60 } } },
      { db },
    );
    try {
      await limited.app.listen({ port: 0, host: '127.0.0.1' });
      const origin = `127.0.0.1:${(limited.app.server.address() as { port: number }).port}`;
      await WsClient.open(`ws://${origin}/ws`).then((c) => c.close());
      await expect(WsClient.open(`ws://${origin}/ws`)).rejects.toThrow('Unexpected server response: 429');
      expect((await fetch(`http://${origin}/healthz`)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('refuses roles beyond the creator, bad expiries and names, and a second live name', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ name: 'x', expires_at: now() + 60, roles: ['admin'] }, "roles beyond your own: 'admin'"],
      [{ name: 'x', expires_at: now() + 60, roles: 'developer' }, 'roles must be a list of role names'],
      [
        { name: 'x', expires_at: now() - 60 },
        'expires_at must be a time in the future, in seconds since the epoch',
      ],
      [
        { name: 'x', expires_at: '2030-01-01' },
        'expires_at must be a time in the future, in seconds since the epoch',
      ],
      [{ name: 'x', expires_at: now() + 400 * 86_400 }, 'expires_at may be at most 366 days ahead'],
      [{ name: '', expires_at: now() + 60 }, 'name must be 1 to 100 printable characters'],
      [{ name: 'a\nb', expires_at: now() + 60 }, 'name must be 1 to 100 printable characters'],
      [{ name: 'x', expires_at: now() + 60, owner: 'root' }, "unknown parameter 'owner'"],
    ];
    for (const [params, message] of bad) {
      const a = await create(devSession, params);
      expect([a.status, a.json()]).toEqual([
        400,
        { jsonrpc: '2.0', id: 1, error: { code: -32602, message } },
      ]);
    }
    await newToken(devSession, 'twice');
    const again = await create(devSession, { name: 'twice', expires_at: now() + 60 });
    expect(again.json().error.message).toBe('you already have a token named "twice"');
  });

  it('lets only a login session manage tokens, and only its own', async () => {
    const token = await newToken(devSession, 'manager?');
    const needLogin = 'API tokens are managed after logging in, not with a token';
    const listed = await api.get('/api/v2/tokens', bearer(token));
    expect([listed.status, listed.text]).toEqual([403, `{"error": "${needLogin}"}`]);
    const made = await api.rpc('/tokens', 'create', { name: 'n', expires_at: now() + 60 }, bearer(token));
    expect([made.status, made.json().error]).toEqual([403, { code: -32600, message: needLogin }]);
    expect((await api.get('/api/v2/tokens')).status).toBe(403);
    // Root cannot revoke dev's token: it names nothing of root's.
    const id = partsOf(token).id;
    const foreign = await api.rpc(`/tokens/${id}`, 'revoke', {}, { session: rootSession });
    expect(foreign.status).toBe(404);
    expect((await api.rpc('/tokens/abc', 'revoke', {}, { session: devSession })).status).toBe(404);
    expect((await api.rpc('/tokens', 'delete', {}, { session: devSession })).status).toBe(501);
    expect((await api.get('/api/v2/builders', bearer(token))).status).toBe(200);
  });
});

describe('the audit log', () => {
  it('has a row for each creation and revocation, answered or refused, never the token; a token names itself', async () => {
    const [{ id: since }] = await db.pool.query(
      sql`SELECT coalesce(max(id), 0)::int AS id FROM flotilla.audit_log`,
    );
    const token = await newToken(devSession, 'audited');
    const id = partsOf(token).id;
    await api.rpc(`/tokens/${id}`, 'revoke', {}, { session: devSession, from: '10.0.0.5' });
    await create(devSession, { name: 'y', expires_at: now() + 60, roles: ['admin'] });
    // An action made with a token names it.
    const script = await newToken(devSession, 'stopper');
    await stopBuild(bearer(script));
    const rows = await db.pool.query(
      sql`SELECT actor, address, method, path, args, outcome, status, tokenid::int FROM flotilla.audit_log
          WHERE id > ${since} ORDER BY id`,
    );
    expect(rows).toEqual([
      {
        actor: 'dev',
        address: '127.0.0.1',
        method: 'create',
        path: '/tokens',
        args: { name: 'audited', expires_at: expect.any(Number) },
        outcome: 'success',
        status: 200,
        tokenid: null,
      },
      {
        actor: 'dev',
        address: '10.0.0.5',
        method: 'revoke',
        path: `/tokens/${id}`,
        args: {},
        outcome: 'success',
        status: 200,
        tokenid: null,
      },
      expect.objectContaining({ method: 'create', outcome: 'INVALID_PARAMS', status: 400 }),
      expect.objectContaining({ method: 'create', outcome: 'success', tokenid: null }),
      expect.objectContaining({
        actor: 'dev',
        method: 'stop',
        path: `/builds/${ctx.buildid}`,
        outcome: 'success',
        tokenid: partsOf(script).id,
      }),
    ]);
    expect(JSON.stringify(rows)).not.toContain(token);
  });
});
