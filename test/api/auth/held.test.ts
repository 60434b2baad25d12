// Review issue 13, what held: authorization and sessions as the hostile review attacked them,
// and must keep holding, on the review's stack (api/lib/review.yaml: admins do everything,
// developers force the test builders, guests are logged in with no role, deploy is for admins'
// eyes only): control refused to anonymous and unprivileged users in every path form, path
// variants that leak nothing, forged session cookies, JSON-RPC bodies a foreign page can send,
// a spoofed X-Forwarded-For, user enumeration. docs/security.md lists the other tests of each.
import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { BUILDERS, basic, PASSWORDS, type Reply, useReviewStack } from '../lib/review-stack.js';
import { claimsOf } from './lib.js';

const review = useReviewStack({ login: ['admin', 'dev', 'guest'] });

/** What a control action would change, to show that a refused one changed nothing. */
async function state(): Promise<unknown> {
  const q = (s: ReturnType<typeof sql>) => review.stack.db.pool.query(s);
  return {
    buildsets: await q(sql`SELECT count(*)::int AS n FROM buildsets`),
    builds: await q(sql`SELECT id, complete_at, results FROM builds ORDER BY id`),
    requests: await q(sql`SELECT id, complete, results, priority FROM buildrequests ORDER BY id`),
    claims: await q(sql`SELECT brid, masterid FROM buildrequest_claims ORDER BY brid`),
    workers: await q(sql`SELECT id, paused, graceful FROM workers ORDER BY id`),
    schedulers: await q(sql`SELECT id, enabled FROM schedulers ORDER BY id`),
  };
}

const who = async (session: string) => (await review.stack.get('/config', { session })).json().user;

describe('control actions', () => {
  // Build 2 is runtests' build number 1; request 101 waits on deploy; worker 2 is worker1;
  // scheduler 1 runs on master 1.
  const calls: [string, string, Record<string, unknown>][] = [
    ['/builds/2', 'stop', {}],
    ['/builders/4/builds/1', 'stop', {}],
    ['/builders/runtests/builds/1', 'stop', {}],
    ['/builds/2', 'rebuild', {}],
    ['/builders/4/builds/1', 'rebuild', {}],
    ['/builders/runtests/builds/1', 'rebuild', {}],
    ['/buildrequests/101', 'cancel', {}],
    ['/buildrequests/101', 'set_priority', { priority: 50 }],
    ['/workers/2', 'pause', {}],
    ['/workers/worker1', 'pause', {}],
    ['/masters/1/workers/2', 'pause', {}],
    ['/builders/4/workers/2', 'pause', {}],
    ['/workers/2', 'stop', {}],
    ['/workers/2', 'kill', {}],
    ['/workers/2', 'unpause', {}],
    ['/schedulers/1', 'enable', { enabled: false }],
    ['/masters/1/schedulers/1', 'enable', { enabled: false }],
    ['/forceschedulers/force-multi', 'force', { builderNames: ['deploy'] }],
    ['/builders/2/forceschedulers/force-multi', 'force', { builderNames: ['deploy'] }],
  ];
  const unprivileged = ['anonymous', 'guest', 'dev'] as const;

  it.each(calls)(
    '%s %s: refused to anonymous, guest and developer, in Buildbot shape',
    async (path, method, params) => {
      const before = await state();
      for (const u of unprivileged) {
        const session = u === 'anonymous' ? {} : { session: review.sessions[u] };
        const a = await review.stack.rpc(path, method, params, session);
        expect([403, 404], `${u} ${method} ${path}: ${a.text}`).toContain(a.status);
        if (a.status === 403) expect(a.json().error.code, `${u} ${method} ${path}`).toBe(-32600);
        // At <path>/actions/<method> (where the API description places actions) too.
        const b = await review.stack.request('POST', `/api/v2${path}/actions/${method}`, {
          ...session,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ jsonrpc: '2.0', method, id: 1, params }),
        });
        expect([403, 404], `${u} ${path}/actions/${method}`).toContain(b.status);
      }
      expect(await state()).toEqual(before);
    },
  );

  it('the same calls are the admin’s to make: the refusals above were decisions, not broken paths', async () => {
    const a = await review.stack.rpc('/workers/2', 'pause', {}, { session: review.sessions.admin });
    expect(a.status, a.text).toBe(200);
    const b = await review.stack.rpc('/workers/2', 'unpause', {}, { session: review.sessions.admin });
    expect(b.status, b.text).toBe(200);
  });
});

describe('path variants', () => {
  // deploy's waiting request: a developer may not read it, an admin may.
  const canonical = '/api/v2/buildrequests/101';
  const variants: [string, string, Record<string, string>?][] = [
    ['GET', '//api/v2/buildrequests/101'],
    ['GET', '/api/v2//buildrequests/101'],
    ['GET', '/api/v2/buildrequests//101'],
    ['GET', '/api/v2/buildrequests%2F101'],
    ['GET', '/api/v2%2Fbuildrequests%2F101'],
    ['GET', '/api/v2/x/../buildrequests/101'],
    ['GET', '/api/v2/./buildrequests/101'],
    ['GET', '/api/v2/builds/../buildrequests/101'],
    ['GET', '/api/v2/%2e%2e/v2/buildrequests/101'],
    ['GET', '/API/V2/buildrequests/101'],
    ['GET', '/api/v2/BuildRequests/101'],
    ['GET', '/api/v2/buildrequests/101;x=1'],
    ['GET', '/api/v2/buildrequests;/101'],
    ['GET', '/api/v2/buildrequests/101%00'],
    ['GET', '/api/v2/buildrequests/101%00.json'],
    ['GET', '/api/v2/buildrequests/101/'],
    ['GET', '/api/v2/buildrequests/0101'],
    ['GET', '/api/v2/buildrequests/101?buildrequestid=101'],
    ['GET', '/api/v2/builders/2/buildrequests'],
    ['GET', '/api/v2/builders/deploy/builds'],
    ['GET', '/api/v2/buildrequests?builderid=2'],
    ['GET', '/api/v2/buildsets/76'],
    ['HEAD', canonical],
    ['GET', canonical, { 'x-http-method-override': 'HEAD' }],
    ['POST', canonical, { 'x-http-method-override': 'GET', 'content-type': 'application/json' }],
    ['POST', canonical, { 'x-method-override': 'GET', 'content-type': 'application/json' }],
    ['GET', `${canonical}?_method=HEAD`],
  ];

  it('the canonical path: an admin reads it, a developer is refused', async () => {
    expect((await review.stack.get(canonical, { session: review.sessions.admin })).status).toBe(200);
    expect((await review.stack.get(canonical, { session: review.sessions.dev })).status).toBe(403);
  });

  it.each(variants)(
    '%s %s never hands deploy’s request to a developer',
    async (method, url, headers = {}) => {
      for (const session of [review.sessions.dev, review.sessions.guest, undefined]) {
        const a = await review.stack.request(method, url, {
          headers,
          ...(session ? { session } : {}),
          ...(method === 'POST' ? { payload: '{}' } : {}),
        });
        expect(a.status, `${method} ${url}: ${a.text.slice(0, 200)}`).not.toBe(200);
        expect(a.status).toBeLessThan(500);
        expect(a.text).not.toMatch(/"buildrequestid"|"builderid"|"bsid"/);
      }
    },
  );
});

describe('forged session cookies', () => {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const sign = (alg: 'sha256' | 'sha512', key: string, data: string) =>
    createHmac(alg, key).update(data).digest('base64url');
  let secret: string;
  let claims: Record<string, unknown>;
  beforeAll(async () => {
    const [row] = await review.stack.db.pool.query(sql`
      SELECT s.value_json FROM object_state s JOIN objects o ON o.id = s.objectid
      WHERE o.name = 'www' AND s.name = 'session_secret'`);
    secret = JSON.parse(row.value_json as string);
    claims = claimsOf(review.sessions.admin) as unknown as Record<string, unknown>;
    // The admin's own cookie, resigned the honest way, works: the forgeries below fail for
    // what they change, not for a detail of how this test builds them.
    const data = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
    expect((await who(`${data}.${sign('sha256', secret, data)}`)).username).toBe('admin');
  });

  const forgeries: [string, () => string][] = [
    ['alg none', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`],
    ['alg none, no dot', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}`],
    [
      'an empty secret',
      () => {
        const data = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
        return `${data}.${sign('sha256', '', data)}`;
      },
    ],
    [
      'HS512 with the real secret',
      () => {
        const data = `${b64({ alg: 'HS512', typ: 'JWT' })}.${b64(claims)}`;
        return `${data}.${sign('sha512', secret, data)}`;
      },
    ],
    [
      'expired, signed with the real secret',
      () => {
        const data = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ ...claims, exp: Math.floor(Date.now() / 1000) - 60 })}`;
        return `${data}.${sign('sha256', secret, data)}`;
      },
    ],
    [
      "a developer's cookie with the admin's claims",
      () => {
        const [h, , s] = review.sessions.dev.split('.') as [string, string, string];
        return `${h}.${b64(claims)}.${s}`;
      },
    ],
    [
      "a developer's cookie whose user info says admin",
      () => {
        const [h, c, s] = review.sessions.dev.split('.') as [string, string, string];
        const dev = JSON.parse(Buffer.from(c, 'base64url').toString());
        return `${h}.${b64({ ...dev, user_info: { ...dev.user_info, username: 'admin', groups: ['admins'] } })}.${s}`;
      },
    ],
    ['a signature cut short', () => review.sessions.admin.slice(0, -4)],
    [
      'a header claiming a key id',
      () => `${b64({ alg: 'HS256', typ: 'JWT', kid: '../../x' })}.${b64(claims)}.x`,
    ],
  ];

  it.each(forgeries)('%s: anonymous, and may not force', async (_what, forge) => {
    const cookie = forge();
    expect(await who(cookie)).toEqual({ anonymous: true });
    const a = await review.stack.rpc('/forceschedulers/force-runtests', 'force', {}, { session: cookie });
    expect(a.status).toBe(403);
  });
});

describe('JSON-RPC bodies a foreign page can send', () => {
  const call = JSON.stringify({ jsonrpc: '2.0', method: 'pause', id: 1, params: {} });
  const bodies: [string, string, string][] = [
    ['text/plain', 'text/plain', call],
    ['text/plain with a charset', 'text/plain;charset=UTF-8', call],
    ['a form', 'application/x-www-form-urlencoded', `${encodeURIComponent(call)}=`],
    [
      'multipart',
      'multipart/form-data; boundary=b',
      `--b\r\nContent-Disposition: form-data; name="x"\r\n\r\n${call}\r\n--b--\r\n`,
    ],
    ['no content type', '', call],
  ];

  it.each(bodies)('%s: refused even with an admin’s cookie, nothing done', async (_what, type, payload) => {
    const before = await state();
    const a = await review.stack.request('POST', '/api/v2/workers/2', {
      session: review.sessions.admin,
      headers: type ? { 'content-type': type } : {},
      payload,
    });
    // 415 without a content type, 400 with one that is not JSON (Buildbot's answers).
    expect([400, 415], a.text).toContain(a.status);
    expect(await state()).toEqual(before);
  });

  it('a foreign Origin: refused with an admin’s cookie, even as application/json', async () => {
    const before = await state();
    for (const origin of ['https://evil.example', 'null', 'http://flotilla.test:8010.evil.example']) {
      const a = await review.stack.rpc(
        '/workers/2',
        'pause',
        {},
        { session: review.sessions.admin, headers: { origin } },
      );
      expect(a.status, origin).toBe(400);
      expect(a.json()).toEqual({ error: { message: 'invalid origin' } });
    }
    expect(await state()).toEqual(before);
  });
});

describe('X-Forwarded-For from a client', () => {
  it('is not believed: guessing from one address with a new forwarded address each time is still throttled', async () => {
    const from = '10.77.0.1';
    let throttled = false;
    for (let i = 0; i < 15 && !throttled; i++) {
      const a = await review.stack.get('/auth/login', {
        from,
        headers: { authorization: basic('guest', 'wrong'), 'x-forwarded-for': `198.51.100.${i + 1}` },
      });
      throttled = a.status === 429;
    }
    expect(throttled).toBe(true);
    // The throttle is that address's: the owner from elsewhere is not shut out.
    const owner = await review.stack.get('/auth/login', {
      from: '10.77.0.2',
      headers: { authorization: basic('guest', PASSWORDS.guest) },
    });
    expect(owner.status).toBe(302);
  });
});

describe('user enumeration', () => {
  const strip = (a: Reply) => {
    const { date, 'x-request-id': _id, ...rest } = a.headers;
    return { status: a.status, headers: rest, body: a.text, cookies: a.cookies };
  };

  it('an unknown user and a wrong password get the same answer, header for header', async () => {
    const known = await review.stack.get('/auth/login', {
      from: '10.78.0.1',
      headers: { authorization: basic('admin', 'nope') },
    });
    const unknown = await review.stack.get('/auth/login', {
      from: '10.78.0.2',
      headers: { authorization: basic('nosuchuser', 'nope') },
    });
    expect(known.status).toBe(401);
    expect(strip(unknown)).toEqual(strip(known));
  });

  it('and the throttle counts them alike', async () => {
    const count = async (user: string, from: string) => {
      for (let i = 1; i <= 40; i++) {
        const a = await review.stack.get('/auth/login', {
          from,
          headers: { authorization: basic(user, 'nope') },
        });
        if (a.status === 429) return i;
      }
      return 0;
    };
    const known = await count('dev', '10.78.1.1');
    expect(known).toBeGreaterThan(0);
    expect(await count('nobody-here', '10.78.1.2')).toBe(known);
  });
});

it('the review review.stack refuses what it should because of its rules: deploy exists and an admin reads it', async () => {
  const a = await review.stack.get(`/api/v2/builders/${BUILDERS.deploy}`, { session: review.sessions.admin });
  expect(a.status).toBe(200);
});
