// Authorization as Buildbot's authz decides it: allow rules (endpoint matchers with roles and
// default_deny) tried in order, roles from role matchers (groups, emails, domains, user
// names, group prefixes, owners), refusals as 403 in Buildbot's REST and JSON-RPC shapes,
// and the defaults: nothing configured allows everything; users configured leave reads open
// and make control need a login.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authorizer } from '../../../services/api/auth/authorizer.js';
import { Targets } from '../../../services/api/auth/targets.js';
import { authzPolicy } from '../../../services/api/http/logins.js';
import { masterConfigSchema } from '../../../services/core/config/master-config.js';
import { sql } from '../../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { oracleForceSchedulers } from '../lib/harness.js';
import { AuthApp, type Reply, testHash } from './lib.js';

let db: TestDatabase;
let USERS: unknown[];
beforeAll(async () => {
  db = await createDatabase('fixture');
  USERS = [
    {
      username: 'alice',
      password_hash: await testHash('a'),
      email: 'alice@example.org',
      groups: ['dev', 'ops'],
    },
    { username: 'bob', password_hash: await testHash('b'), email: 'bob@corp.example' },
    { username: 'carol', password_hash: await testHash('c'), groups: ['ci-admins'] },
    { username: 'dave', password_hash: await testHash('d') },
  ];
});
afterAll(async () => {
  await db?.drop();
});

async function withApp(auth: Record<string, unknown>, fn: (api: AuthApp) => Promise<void>): Promise<void> {
  const api = await AuthApp.start({ auth: { users: USERS, ...auth } }, { db });
  try {
    await fn(api);
  } finally {
    await api.app.close();
    api.redis.disconnect();
  }
}

/** Buildbot's JSON-RPC refusal, byte for byte. */
function expectRpc403(a: Reply, message: string): void {
  expect(a.status).toBe(403);
  expect(String(a.headers['content-type']).split(';')[0]).toBe('application/json');
  expect(a.text).toBe(`{"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "${message}"}}`);
}

/** Buildbot's REST refusal: text/plain, Python's json.dumps of {"error": message}. */
function expectRest403(a: Reply, message: string): void {
  expect(a.status).toBe(403);
  expect(a.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(a.text).toBe(`{"error": "${message}"}`);
}

describe('without users or oidc (Buildbot without auth)', () => {
  it('everything is allowed, anonymous control included', async () => {
    const api = await AuthApp.start({}, { db });
    try {
      expect((await api.rpc('/builds/2', 'stop')).status).toBe(200);
      expect((await api.get('/api/v2/builders')).status).toBe(200);
    } finally {
      await api.app.close();
      api.redis.disconnect();
    }
  });
});

describe('the default rules, once users exist: reads open, control needs a login', () => {
  it('anonymous reads', async () => {
    await withApp({}, async (api) => {
      expect((await api.get('/api/v2/builders')).status).toBe(200);
      expect((await api.request('HEAD', '/api/v2/builds/2')).status).toBe(200);
      expect((await api.get('/api/v2/nosuch')).status).toBe(404);
    });
  });
  it('anonymous control: 403 -32600 in Buildbot shape; a logged-in user may', async () => {
    await withApp({}, async (api) => {
      expectRpc403(await api.rpc('/builds/2', 'stop'), "you need to have role '@authenticated'");
      expectRpc403(await api.rpc('/workers/1', 'pause'), "you need to have role '@authenticated'");
      // Refused before the endpoint is looked up, as Buildbot: no probing what exists.
      expectRpc403(await api.rpc('/builds/999999', 'stop'), "you need to have role '@authenticated'");
      expectRpc403(await api.rpc('/nosuch', 'stop'), "you need to have role '@authenticated'");
      // A call that does not decode is refused for that first.
      const bad = await api.request('POST', '/api/v2/builds/2', {
        headers: { 'content-type': 'application/json' },
        payload: '{',
      });
      expect(bad.status).toBe(400);
      expect(bad.json().error.code).toBe(-32700);
      const s = await api.login('dave', 'd');
      const ok = await api.rpc('/builds/2', 'stop', {}, { session: s });
      expect(ok.status).toBe(200);
      expect(ok.json()).toEqual({ id: 1, jsonrpc: '2.0', result: null });
      expect((await api.rpc('/builds/999999', 'stop', {}, { session: s })).status).toBe(404);
    });
  });
  it('nothing was changed by the refused calls', async () => {
    const [row] = await db.pool.query(sql`SELECT count(*)::int AS n FROM buildsets`);
    expect(row.n).toBe(79);
  });
});

describe('any: every request, reads included', () => {
  const auth = {
    role_matchers: [{ role: 'dev', groups: ['dev'] }],
    allow_rules: [{ match: 'any', roles: ['dev'] }],
  };
  it('refuses reads with 403 text/plain {"error": ...}, before looking anything up', async () => {
    await withApp(auth, async (api) => {
      expectRest403(await api.get('/api/v2/builders'), "you need to have role 'dev'");
      expectRest403(await api.get('/api/v2/nosuch/path'), "you need to have role 'dev'");
      expectRest403(await api.get('/api/v2/builds/2/steps?limit=abc'), "you need to have role 'dev'");
      const head = await api.request('HEAD', '/api/v2/builders');
      expect(head.status).toBe(403);
      expect(head.text).toBe('');
      const bob = await api.login('bob', 'b');
      expectRest403(await api.get('/api/v2/builders', { session: bob }), "you need to have role 'dev'");
      const alice = await api.login('alice', 'a');
      expect((await api.get('/api/v2/builders', { session: alice })).status).toBe(200);
      expect((await api.get('/api/v2/nosuch/path', { session: alice })).status).toBe(404);
    });
  });
  it('patterns in roles: `*` any role, `d?v`, `[cd]ev`', async () => {
    for (const pattern of ['*', 'd?v', '[cd]ev']) {
      await withApp({ ...auth, allow_rules: [{ match: 'any', roles: [pattern] }] }, async (api) => {
        const alice = await api.login('alice', 'a');
        expect((await api.get('/api/v2/builders', { session: alice })).status).toBe(200);
        expect((await api.get('/api/v2/builders')).status).toBe(403);
      });
    }
  });
});

describe('the endpoint matchers and role matchers', () => {
  const auth = {
    role_matchers: [
      { role: 'testers', emails: ['bob@corp.example'] },
      { role: 'forcers', usernames: ['dave'] },
      { role: 'rebuilders', domains: ['example.org'] },
      { group_prefix: 'ci-' },
      { role: 'owner', owner: true },
    ],
    allow_rules: [
      { match: 'force', builders: ['runtests'], roles: ['testers', 'forcers'] },
      { match: 'stop', builders: ['run*'], roles: ['testers', 'owner'] },
      { match: 'rebuild', roles: ['rebuilders'] },
      { match: 'enable-scheduler', roles: ['admins'] },
      { match: 'any-control', roles: ['@authenticated'] },
    ],
  };
  let api: AuthApp;
  let s: Record<string, string>;
  beforeAll(async () => {
    api = await AuthApp.start({ auth: { users: USERS, ...auth } }, { db });
    s = {};
    for (const [u, p] of [
      ['alice', 'a'],
      ['bob', 'b'],
      ['carol', 'c'],
      ['dave', 'd'],
    ])
      s[u!] = await api.login(u!, p!);
  });
  afterAll(async () => {
    await api.app.close();
    api.redis.disconnect();
  });

  it('force: only for the builders named, whichever way the call names them', async () => {
    const refuse = "you need to have one of the roles 'testers', 'forcers'";
    expectRpc403(await api.rpc('/forceschedulers/force-runtests', 'force', {}, { session: s.alice }), refuse);
    expectRpc403(
      await api.rpc(
        '/forceschedulers/force-runtests',
        'force',
        { builderNames: ['runtests'] },
        { session: s.alice },
      ),
      refuse,
    );
    // A builder that is not the scheduler's is started for no one: the force rule does not
    // match (the next rules let alice through), and the action refuses it.
    const foreign = await api.rpc(
      '/forceschedulers/force-flaky',
      'force',
      { builderid: 4 },
      { session: s.alice },
    );
    expect([foreign.status, foreign.json().error.code]).toEqual([400, -32602]);
    expect((await api.rpc('/forceschedulers/force-runtests', 'force', {}, { session: s.bob })).status).toBe(
      200,
    );
    // Another builder: the force rule does not match, any-control decides.
    expect(
      (await api.rpc('/forceschedulers/force-flaky', 'force', { builderid: 5 }, { session: s.alice })).status,
    ).toBe(200);
    expectRpc403(
      await api.rpc('/forceschedulers/force-flaky', 'force', { builderid: 5 }),
      "you need to have role '@authenticated'",
    );
  });

  it('stop: builds of the builders named (run* is runtests)', async () => {
    // Build 2 is runtests' (builder 4); build 1 is build's.
    const refuse = "you need to have one of the roles 'testers', 'owner'";
    expectRpc403(await api.rpc('/builds/2', 'stop', {}, { session: s.alice }), refuse);
    expectRpc403(await api.rpc('/builders/runtests/builds/1', 'stop', {}, { session: s.alice }), refuse);
    expectRpc403(await api.rpc('/builders/4/builds/1', 'stop', {}, { session: s.alice }), refuse);
    expect((await api.rpc('/builds/2', 'stop', {}, { session: s.bob })).status).toBe(200);
    expect((await api.rpc('/builds/1', 'stop', {}, { session: s.alice })).status).toBe(200);
    // A build that does not exist matches no builder: the next rules decide, then 404.
    expect((await api.rpc('/builds/999999', 'stop', {}, { session: s.alice })).status).toBe(404);
  });

  it("stop also guards a build request's cancel, and owners may cancel their own", async () => {
    const forced = await api.rpc('/forceschedulers/force-runtests', 'force', {}, { session: s.dave });
    expect(forced.status).toBe(200);
    const [bsid, brids] = forced.json().result;
    const brid = Object.values(brids)[0] as number;
    const [owner] = await db.pool.query(
      sql`SELECT property_value FROM buildset_properties WHERE buildsetid = ${bsid} AND property_name = 'owner'`,
    );
    expect(JSON.parse(owner.property_value)[0]).toBe('dave');
    const refuse = "you need to have one of the roles 'testers', 'owner'";
    expectRpc403(await api.rpc(`/buildrequests/${brid}`, 'cancel', {}, { session: s.carol }), refuse);
    expectRpc403(await api.rpc(`/buildrequests/${brid}`, 'cancel', {}, { session: s.alice }), refuse);
    expect((await api.rpc(`/buildrequests/${brid}`, 'cancel', {}, { session: s.dave })).status).toBe(200);
    // Owning one request says nothing about another's.
    const other = await api.rpc('/forceschedulers/force-runtests', 'force', {}, { session: s.bob });
    const brid2 = Object.values(other.json().result[1])[0] as number;
    expectRpc403(await api.rpc(`/buildrequests/${brid2}`, 'cancel', {}, { session: s.dave }), refuse);
    expect((await api.rpc(`/buildrequests/${brid2}`, 'cancel', {}, { session: s.bob })).status).toBe(200);
  });

  it('rebuild: the domain of the email gives the role', async () => {
    expectRpc403(
      await api.rpc('/builds/2', 'rebuild', {}, { session: s.bob }),
      "you need to have role 'rebuilders'",
    );
    const a = await api.rpc('/builds/2', 'rebuild', {}, { session: s.alice });
    expect(a.status).toBe(200);
    expect(a.json().result).toHaveLength(2);
  });

  it('enable-scheduler: refused without the role; with it, the scheduler is disabled', async () => {
    expectRpc403(
      await api.rpc('/schedulers/1', 'enable', { enabled: false }, { session: s.bob }),
      "you need to have role 'admins'",
    );
    // carol's group ci-admins is role admins (group_prefix ci-).
    const enabled = async () =>
      (await api.get('/api/v2/schedulers/1?field=enabled')).json().schedulers[0].enabled as boolean;
    expect(await enabled()).toBe(true);
    expect((await api.rpc('/schedulers/1', 'enable', { enabled: false }, { session: s.carol })).status).toBe(
      200,
    );
    expect(await enabled()).toBe(false);
    await api.rpc('/schedulers/1', 'enable', { enabled: true }, { session: s.carol });
  });

  it('other actions fall to any-control', async () => {
    expect((await api.rpc('/workers/1', 'pause', {}, { session: s.alice })).status).toBe(200);
    expectRpc403(await api.rpc('/workers/1', 'unpause'), "you need to have role '@authenticated'");
  });

  it('reads are not control: all open', async () => {
    expect((await api.get('/api/v2/builds/2')).status).toBe(200);
    expect((await api.get('/api/v2/forceschedulers/force-runtests')).status).toBe(200);
  });
});

describe('default_deny: false passes the decision on', () => {
  it('a matching rule without the role lets later rules decide', async () => {
    await withApp(
      {
        role_matchers: [{ role: 'testers', emails: ['bob@corp.example'] }],
        allow_rules: [
          { match: 'stop', roles: ['testers'], default_deny: false },
          { match: 'any-control', roles: ['@authenticated'] },
        ],
      },
      async (api) => {
        const alice = await api.login('alice', 'a');
        expect((await api.rpc('/builds/2', 'stop', {}, { session: alice })).status).toBe(200);
        expectRpc403(await api.rpc('/builds/2', 'stop'), "you need to have role '@authenticated'");
      },
    );
  });
  it('with default_deny and no roles nobody may', async () => {
    await withApp({ allow_rules: [{ match: 'rebuild' }] }, async (api) => {
      const alice = await api.login('alice', 'a');
      expectRpc403(await api.rpc('/builds/2', 'rebuild', {}, { session: alice }), 'no role may do this');
      expect((await api.rpc('/builds/2', 'stop')).status).toBe(200);
    });
  });
});

describe('view-builders: reads of some builders for some roles', () => {
  const auth = {
    role_matchers: [{ role: 'ops', groups: ['ops'] }],
    allow_rules: [{ match: 'view-builders', builders: ['deploy'], roles: ['ops'] }],
  };
  // deploy is builder 2; build request 101 is deploy's, 104 flaky's.
  const refused = [
    '/builders/2',
    '/builders/deploy',
    '/builders/deploy/builds',
    '/builders/2/buildrequests',
    '/buildrequests/101',
    // Lists that mix builders could show deploy's rows.
    '/builds',
    '/buildrequests',
    '/builders',
    // A worker's configured_on names deploy's id (as /builders, any builder's).
    '/workers',
  ];
  const open = [
    '/builders/4',
    '/builders/runtests/builds',
    '/buildrequests/104',
    '/builds/2/steps',
    '/changes',
    '/masters',
  ];
  it('refused for others, allowed for the role; other builders and other data stay open', async () => {
    await withApp(auth, async (api) => {
      const alice = await api.login('alice', 'a');
      for (const p of refused) {
        expectRest403(await api.get(`/api/v2${p}`), "you need to have role 'ops'");
        expect((await api.get(`/api/v2${p}`, { session: alice })).status, p).toBe(200);
      }
      for (const p of open) expect((await api.get(`/api/v2${p}`)).status, p).toBe(200);
    });
  });

  it('events: the same rules decide which routing keys a user receives', async () => {
    const parsed = masterConfigSchema.shape.auth.parse({ users: USERS, ...auth });
    const authz = new Authorizer(
      authzPolicy(parsed),
      new Targets(db.pool),
      new Map(oracleForceSchedulers().map((f) => [f.name, f])),
    );
    const anon = { anonymous: true };
    const ops = { username: 'alice', groups: ['ops'] };
    const key = (k: string) => k.split('/');
    // The builders' names are read once at start: keys that name a builder are decided at once.
    await authz.primed;
    expect(authz.authorize(anon, key('builders/2/builds/1/new'))).toBe(false);
    expect(authz.authorize(anon, key('builders/4/builds/1/new'))).toBe(true);
    expect(authz.authorize(ops, key('builders/2/builds/1/new'))).toBe(true);
    expect(authz.authorize(anon, key('changes/5/new'))).toBe(true);
    // A worker's events carry its configured_on (builder ids, deploy's too): as /workers.
    expect(await authz.authorize(anon, key('workers/1/connected'))).toBe(false);
    expect(await authz.authorize(ops, key('workers/1/connected'))).toBe(true);
    // The first key naming a builder through something the builder owns neither assumes nor
    // waits for a guess: the event waits for the facts, which are then kept.
    const first = authz.authorize(anon, key('builds/2/finished'));
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBe(true);
    expect(authz.authorize(anon, key('builds/2/finished'))).toBe(true);
    expect(await authz.authorize(anon, key('buildrequests/101/new'))).toBe(false);
    expect(authz.authorize(anon, key('buildrequests/101/new'))).toBe(false);
    expect(await authz.authorize(ops, key('buildrequests/101/new'))).toBe(true);
    expect(await authz.authorize(anon, key('buildrequests/104/new'))).toBe(true);
    expect(await authz.authorize(anon, key('buildsets/79/builders/2/buildrequests/101/new'))).toBe(false);
    // A key spanning builders is decided for every builder, as REST decides a list.
    expect(await authz.authorize(anon, key('buildsets/79/new'))).toBe(false);
    expect(await authz.authorize(ops, key('buildsets/79/new'))).toBe(true);
    // No rules: everything, at once.
    const open = new Authorizer(authzPolicy(undefined), new Targets(db.pool), new Map());
    expect(open.authorize(anon, key('builds/2/finished'))).toBe(true);
  });
});
