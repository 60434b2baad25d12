// The audit log of control actions (issue 33, section 4): every JSON-RPC call through the API
// leaves a row with who asked, from where, what (method, path, arguments without secrets) and
// the answer, refused and invalid calls included; only administrators read it, at
// /api/v2/audit; each row is also one `audit` log line; retention deletes rows past
// audit_horizon. One API with login rules on one copy of the fixture.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Auditor, auditArgs } from '../../services/api/control/audit.js';
import { retention } from '../../services/core/config/master-config/retention.js';
import { recordAudit } from '../../services/core/data/audit.js';
import { sql } from '../../services/core/db/pool.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { runRetention } from '../../services/master/jobs/retention.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { AuthApp, type Reply, testHash } from './auth/lib.js';
import { type Context, fixtureContext } from './lib/registry-paths.js';

const RULES = [{ match: 'any-control', roles: ['admin'] }];
const ROLES = [
  { role: 'admin', groups: ['admins'] },
  { role: 'developer', groups: ['developers'] },
];

let db: TestDatabase;
let api: AuthApp;
let ctx: Context;
const sessions: Record<'admin' | 'developer', string> = { admin: '', developer: '' };

beforeAll(async () => {
  db = await createDatabase('fixture');
  ctx = await fixtureContext(db.pool);
  const users = [
    { username: 'root', email: 'root@example.test', password_hash: await testHash('a'), groups: ['admins'] },
    { username: 'dev', password_hash: await testHash('d'), groups: ['developers'] },
  ];
  api = await AuthApp.start({ auth: { users, role_matchers: ROLES, allow_rules: RULES } }, { db });
  sessions.admin = await api.login('root', 'a');
  sessions.developer = await api.login('dev', 'd');
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

interface Row {
  auditid: number;
  at: number;
  actor: string;
  address: string | null;
  method: string | null;
  path: string;
  args: Record<string, unknown>;
  outcome: string;
  status: number;
}

/** The audit rows after `since` (an auditid), as an admin reads them through the API. */
async function rowsAfter(since: number): Promise<Row[]> {
  const a = await api.get(`/api/v2/audit?auditid__gt=${since}&order=auditid`, { session: sessions.admin });
  expect(a.status, a.text).toBe(200);
  return a.json().audit;
}

async function lastId(): Promise<number> {
  const [r] = await db.pool.query(sql`SELECT coalesce(max(id), 0)::int AS id FROM flotilla.audit_log`);
  return r.id;
}

const asAdmin = (path: string, method: string, params: Record<string, unknown> = {}, from = '10.0.0.7') =>
  api.rpc(path, method, params, { session: sessions.admin, from });

describe('every control action leaves its row', () => {
  it('force, stop, rebuild, cancel, priority, scheduler enable, worker pause/unpause/stop/kill', async () => {
    const since = await lastId();
    const calls: [string, string, Record<string, unknown>][] = [
      [
        `/forceschedulers/${ctx.schedulername}`,
        'force',
        { builderNames: [ctx.buildername], reason: 'audited' },
      ],
      [`/builds/${ctx.buildid}`, 'stop', { reason: 'enough' }],
      [`/builds/${ctx.buildid}`, 'rebuild', {}],
      ['/buildrequests/101', 'set_priority', { priority: 3 }],
      ['/buildrequests/101', 'cancel', { reason: 'not needed' }],
      [`/schedulers/${ctx.schedulerid}`, 'enable', { enabled: true }],
      ...(['pause', 'unpause', 'stop', 'kill'] as const).map(
        (m): [string, string, Record<string, unknown>] => [
          `/workers/${ctx.workerid}`,
          m,
          { reason: 'upkeep' },
        ],
      ),
    ];
    const answers: Reply[] = [];
    for (const [path, method, params] of calls) answers.push(await asAdmin(path, method, params));
    for (const [i, a] of answers.entries()) expect(a.status, `${calls[i]![1]}: ${a.text}`).toBe(200);
    const rows = await rowsAfter(since);
    expect(rows.map((r) => [r.method, r.path, r.args, r.outcome, r.status])).toEqual(
      calls.map(([path, method, params]) => [method, path, params, 'success', 200]),
    );
    const now = Math.floor(Date.now() / 1000);
    for (const r of rows) {
      expect(r.actor).toBe('root@example.test');
      expect(r.address).toBe('10.0.0.7');
      expect(Math.abs(r.at - now)).toBeLessThan(600);
    }
  });

  it('a refused call, an invalid one and one that names nothing are rows too', async () => {
    const since = await lastId();
    const refused = await api.rpc(
      `/builds/${ctx.buildid}`,
      'stop',
      {},
      { session: sessions.developer, from: '10.0.0.8' },
    );
    expect(refused.status).toBe(403);
    const anonymous = await api.rpc(`/builds/${ctx.buildid}`, 'rebuild', {}, { from: '10.0.0.9' });
    expect(anonymous.status).toBe(403);
    const invalid = await asAdmin('/buildrequests/101', 'set_priority', { priority: 'high' });
    expect(invalid.status).toBe(400);
    const garbled = await api.request('POST', `/api/v2/builds/${ctx.buildid}`, {
      session: sessions.admin,
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(garbled.status).toBe(400);
    const missing = await asAdmin('/builds/999999', 'stop');
    expect(missing.status).toBe(404);
    const rows = await rowsAfter(since);
    expect(rows.map((r) => [r.actor, r.address, r.method, r.path, r.outcome, r.status])).toEqual([
      ['dev', '10.0.0.8', 'stop', `/builds/${ctx.buildid}`, 'FORBIDDEN', 403],
      ['anonymous', '10.0.0.9', 'rebuild', `/builds/${ctx.buildid}`, 'FORBIDDEN', 403],
      ['root@example.test', '10.0.0.7', 'set_priority', '/buildrequests/101', 'INVALID_PARAMS', 400],
      ['root@example.test', '127.0.0.1', null, `/builds/${ctx.buildid}`, 'RPC_PARSE_ERROR', 400],
      ['root@example.test', '10.0.0.7', 'stop', '/builds/999999', 'NOT_FOUND', 404],
    ]);
  });

  it('keeps user input bounded and never a secret-looking argument', async () => {
    const since = await lastId();
    const a = await asAdmin(`/forceschedulers/${ctx.schedulername}`, 'force', {
      builderNames: [ctx.buildername],
      reason: 'x'.repeat(5000),
      password: 'hunter2',
      nested: { api_key: 'k', note: 'n' },
    });
    expect(a.status).toBe(400);
    const [row] = await rowsAfter(since);
    expect(row!.args).toMatchObject({ password: '***', nested: { api_key: '***', note: 'n' } });
    expect((row!.args.reason as string).length).toBe(1001);
    const [raw] = await db.pool.query(
      sql`SELECT args::text AS t FROM flotilla.audit_log WHERE id = ${row!.auditid}`,
    );
    expect(raw.t).not.toContain('hunter2');
    // Keys JSON.parse keeps as own keys, and an escape PostgreSQL's jsonb refuses.
    const since2 = await lastId();
    const odd = await api.request('POST', `/api/v2/builds/${ctx.buildid}`, {
      session: sessions.admin,
      headers: { 'content-type': 'application/json' },
      payload:
        '{"jsonrpc": "2.0", "method": "nosuch", "id": 1, "params": {"__proto__": {"x": 1}, "s": "\\ud800"}}',
    });
    expect(odd.status).toBe(501);
    const [oddRow] = await rowsAfter(since2);
    expect([oddRow!.outcome, oddRow!.args]).toEqual([
      'UNSUPPORTED_ACTION',
      { ['__proto__']: { x: 1 }, s: '\uFFFD' },
    ]);
    // A method with NUL (params are checked for it, the method is not): still a row, the NUL replaced.
    const since3 = await lastId();
    const nul = await api.request('POST', `/api/v2/builds/${ctx.buildid}`, {
      session: sessions.admin,
      headers: { 'content-type': 'application/json' },
      payload: '{"jsonrpc": "2.0", "method": "no\\u0000such", "id": 1, "params": {}}',
    });
    expect(nul.status).toBe(501);
    const [nulRow] = await rowsAfter(since3);
    expect([nulRow!.outcome, nulRow!.method]).toEqual(['UNSUPPORTED_ACTION', 'no\uFFFDsuch']);
    // What PostgreSQL's jsonb cannot hold (a call with NUL is refused before it is decoded).
    expect(auditArgs({ 'k\0': 'n\0ul', s: '\uD800' })).toEqual({ 'k\uFFFD': 'n\uFFFDul', s: '\uFFFD' });
  });
});

describe('from where: the address as www.trust_proxy decides', () => {
  it('ignores X-Forwarded-For from an untrusted peer and follows it from a trusted proxy', async () => {
    const since = await lastId();
    const headers = { 'x-forwarded-for': '192.0.2.44' };
    expect((await api.rpc(`/builds/${ctx.buildid}`, 'stop', {}, { from: '10.0.0.7', headers })).status).toBe(
      403,
    );
    const proxied = await AuthApp.start(
      { auth: { users: [], allow_rules: RULES }, www: { trust_proxy: ['10.0.0.0/8'] } },
      { db },
    );
    try {
      const a = await proxied.rpc(`/builds/${ctx.buildid}`, 'stop', {}, { from: '10.0.0.7', headers });
      expect(a.status).toBe(403);
    } finally {
      await proxied.close();
    }
    expect((await rowsAfter(since)).map((r) => [r.actor, r.address, r.outcome])).toEqual([
      ['anonymous', '10.0.0.7', 'FORBIDDEN'],
      ['anonymous', '192.0.2.44', 'FORBIDDEN'],
    ]);
  });
});

describe('reading the audit log', () => {
  it('is for administrators only', async () => {
    for (const [who, session] of [
      ['anonymous', undefined],
      ['developer', sessions.developer],
    ] as const) {
      const a = await api.get('/api/v2/audit', session ? { session } : {});
      expect([who, a.status, a.text]).toEqual([who, 403, `{"error": "you need to have role 'admin'"}`]);
    }
    expect((await api.get('/api/v2/audit?limit=1', { session: sessions.admin })).status).toBe(200);
  });
});

describe('the log line', () => {
  it('is one pino line per action, msg audit, with the row fields', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    const auditor = new Auditor(db.pool, createLogger('api', 'info', sink));
    const entry = {
      at: 1_700_000_000,
      actor: 'someone',
      address: '10.0.0.1',
      method: 'stop',
      path: '/builds/1',
      args: { reason: 'r' },
      outcome: 'success',
      status: 200,
    };
    await auditor.record(entry);
    expect(lines.filter((l) => l.msg === 'audit')).toEqual([expect.objectContaining(entry)]);
    const [row] = await db.pool.query(
      sql`SELECT actor, path FROM flotilla.audit_log WHERE at = ${entry.at} AND actor = 'someone'`,
    );
    expect(row).toEqual({ actor: 'someone', path: '/builds/1' });
  });
});

describe('audit_horizon', () => {
  it('deletes the rows older than the horizon and keeps the others', async () => {
    const now = Math.floor(Date.now() / 1000);
    const day = 86_400;
    const entry = (at: number) => ({
      at,
      actor: 'horizon',
      address: null,
      method: 'stop',
      path: '/builds/1',
      args: {},
      outcome: 'success',
      status: 200,
    });
    for (const age of [400, 370, 366, 10]) await recordAudit(db.pool, entry(now - age * day));
    const kept = async () =>
      (await db.pool.query(sql`SELECT at FROM flotilla.audit_log WHERE actor = 'horizon' ORDER BY at`)).map(
        (r: { at: number }) => Math.round((now - r.at) / day),
      );
    // Unset, nothing goes.
    await runRetention(db.pool, retention.parse({}), { now: () => now });
    expect(await kept()).toEqual([400, 370, 366, 10]);
    const run = await runRetention(db.pool, retention.parse({ audit_horizon: '365d', batch_size: 10 }), {
      now: () => now,
    });
    expect(await kept()).toEqual([10]);
    expect(run.deleted.audit).toBeGreaterThanOrEqual(3);
    expect(run.finished).toBe(true);
  });
});
