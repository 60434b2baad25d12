// Password login, logout, the session cookie and /config, as Buildbot's UserPasswordAuth
// behaves: GET /auth/login with HTTP Basic sets the session and redirects; anything else is
// 401 with Buildbot's challenge; the cookie is Buildbot's JWT, so a Buildbot-minted one works.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../services/core/db/pool.js';
import { AuthApp, basic, claimsOf, PUBLIC_URL, sessionOf, testHash } from './lib.js';

let api: AuthApp;
const users = async () => [
  {
    username: 'alice',
    password_hash: await testHash('wonderland'),
    email: 'alice@example.org',
    full_name: 'Alice Liddell',
    groups: ['dev', 'ops'],
  },
  { username: 'bob', password_hash: await testHash('builder') },
];

beforeAll(async () => {
  api = await AuthApp.start({ auth: { users: await users(), session_expiry_seconds: 3600 } });
});
afterAll(async () => {
  await api?.close();
});

describe('GET /auth/login with HTTP Basic', () => {
  it('good credentials: 302 to PUBLIC_URL#/ and a session holding the user info', async () => {
    const a = await api.get('/auth/login', { headers: { authorization: basic('alice', 'wonderland') } });
    expect(a.status).toBe(302);
    expect(a.headers.location).toBe(`${PUBLIC_URL}#/`);
    expect(a.text).toBe('');
    // The session, and a device cookie for the login throttle (login-throttle.test.ts).
    expect(a.cookies.map((c) => c.split('=')[0])).toEqual(['FLOTILLA_DEVICE', 'TWISTED_SESSION']);
    const claims = claimsOf(sessionOf(a)!);
    expect(claims.user_info).toEqual({
      username: 'alice',
      email: 'alice@example.org',
      full_name: 'Alice Liddell',
      groups: ['dev', 'ops'],
    });
  });

  it("a user without email gets the user name as email (Buildbot's default user info)", async () => {
    const a = await api.get('/auth/login', { headers: { authorization: basic('bob', 'builder') } });
    expect(claimsOf(sessionOf(a)!).user_info).toEqual({ username: 'bob', email: 'bob', groups: [] });
  });

  it('the redirect argument becomes the fragment, cut at a line break and encoded', async () => {
    const auth = { authorization: basic('bob', 'builder') };
    expect((await api.get('/auth/login?redirect=/builders/2', { headers: auth })).headers.location).toBe(
      `${PUBLIC_URL}#/builders/2`,
    );
    const evil = await api.get('/auth/login?redirect=%2Fx%0D%0ASet-Cookie:%20a=b', { headers: auth });
    expect(evil.headers.location).toBe(`${PUBLIC_URL}#/x`);
    const odd = await api.get('/auth/login?redirect=%2F%C3%A9%20%23x', { headers: auth });
    expect(odd.headers.location).toBe(`${PUBLIC_URL}#/%C3%A9%20%23x`);
  });

  const refused: [string, Record<string, string>][] = [
    ['a wrong password', { authorization: basic('alice', 'Wonderland') }],
    ['an unknown user', { authorization: basic('mallory', 'wonderland') }],
    ['an empty password', { authorization: basic('alice', '') }],
    ['no credentials', {}],
    ['another scheme', { authorization: 'Bearer abc' }],
    ['credentials without a colon', { authorization: `Basic ${Buffer.from('alice').toString('base64')}` }],
    ['credentials that are not base64', { authorization: 'Basic !!!!' }],
    ['a user name with the password of another', { authorization: basic('bob', 'wonderland') }],
  ];
  it.each(refused)('%s: 401 with basic realm="buildbot", no session', async (_what, headers) => {
    const a = await api.get('/auth/login', { headers, from: '10.9.0.1' });
    expect(a.status).toBe(401);
    expect(a.headers['www-authenticate']).toBe('basic realm="buildbot"');
    expect(a.text).toBe('Unauthorized');
    expect(a.cookies).toEqual([]);
  });

  it("a page's script (X-Requested-With: XMLHttpRequest) gets its 401 without the challenge, so no browser prompt", async () => {
    for (const [, headers] of refused) {
      const a = await api.get('/auth/login', {
        headers: { ...headers, 'x-requested-with': 'XMLHttpRequest' },
        from: '10.9.0.2',
      });
      expect(a.status).toBe(401);
      expect(a.headers['www-authenticate']).toBeUndefined();
      expect(a.text).toBe('Unauthorized');
    }
    const ok = await api.get('/auth/login', {
      headers: { authorization: basic('bob', 'builder'), 'x-requested-with': 'XMLHttpRequest' },
    });
    expect(ok.status).toBe(302);
  });

  it('the scheme name is case-insensitive', async () => {
    const a = await api.get('/auth/login', {
      headers: { authorization: basic('bob', 'builder').replace('Basic', 'bAsIc') },
    });
    expect(a.status).toBe(302);
  });
});

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Lax, Path=/, not Secure over http, and expires per session_expiry_seconds', async () => {
    const a = await api.get('/auth/login', { headers: { authorization: basic('alice', 'wonderland') } });
    const c = a.cookies.find((x) => x.startsWith('TWISTED_SESSION='))!;
    expect(c).toMatch(/^TWISTED_SESSION=[^;]+; Path=\/; HttpOnly; SameSite=Lax$/);
    const { exp } = claimsOf(sessionOf(a)!);
    expect(Math.abs(exp - (Date.now() / 1000 + 3600))).toBeLessThan(30);
  });

  it('a logged-in session is kept: no new cookie, and /config shows the user', async () => {
    const s = await api.login('alice', 'wonderland');
    const a = await api.get('/config', { session: s });
    expect(a.cookies).toEqual([]);
    expect(a.headers['content-type']).toMatch(/^application\/json/);
    expect(a.headers['cache-control']).toBe('no-store');
    const cfg = a.json();
    expect(cfg.user).toMatchObject({ username: 'alice', email: 'alice@example.org' });
    expect(cfg.auth).toEqual({ name: 'UserPasswordAuth' });
    expect(cfg.buildbotURL).toBe(PUBLIC_URL);
    // And the API keeps it too.
    expect((await api.get('/api/v2/builders', { session: s })).cookies).toEqual([]);
  });

  it('anonymous /config: user {anonymous: true} and an anonymous cookie', async () => {
    const a = await api.get('/config');
    expect(a.json().user).toEqual({ anonymous: true });
    // As Buildbot's: name/version pairs of what the server runs (it said [] before).
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    const [pg] = (await api.db.pool.query(sql`SHOW server_version`)) as { server_version: string }[];
    expect(a.json().versions).toEqual([
      ['Flotilla', version],
      ['Node', process.versions.node],
      ['PostgreSQL', pg!.server_version],
    ]);
    expect(claimsOf(sessionOf(a)!).user_info).toEqual({ anonymous: true });
  });

  it('an expired session counts as anonymous and is replaced', async () => {
    const secret = await api.secret();
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const data = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ user_info: { username: 'alice' }, exp: Math.floor(Date.now() / 1000) - 5 })}`;
    const token = `${data}.${createHmac('sha256', secret).update(data).digest('base64url')}`;
    const a = await api.get('/config', { session: token });
    expect(a.json().user).toEqual({ anonymous: true });
    expect(claimsOf(sessionOf(a)!).user_info).toEqual({ anonymous: true });
  });

  it('over https (PUBLIC_URL https://): TWISTED_SECURE_SESSION, Secure', async () => {
    const tls = await AuthApp.start(
      { auth: { users: await users() } },
      { db: api.db, publicUrl: 'https://ci.example.org/' },
    );
    try {
      const a = await tls.get('/auth/login', { headers: { authorization: basic('bob', 'builder') } });
      expect(a.headers.location).toBe('https://ci.example.org/#/');
      expect(a.cookies.find((x) => x.startsWith('TWISTED_'))).toMatch(
        /^TWISTED_SECURE_SESSION=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
      );
      // Default expiry: a day (Buildbot's is a week: docs/security.md).
      expect(Math.abs(claimsOf(sessionOf(a)!).exp - (Date.now() / 1000 + 86400))).toBeLessThan(30);
      // The plain cookie name is not read over https.
      const s = sessionOf(a)!;
      expect((await tls.get('/config', { session: s })).json().user).toEqual({ anonymous: true });
      expect(
        (await tls.get('/config', { headers: { cookie: `TWISTED_SECURE_SESSION=${s}` } })).json().user
          .username,
      ).toBe('bob');
    } finally {
      await tls.close();
    }
  });
});

describe('a session minted by Buildbot', () => {
  // Minted by PyJWT 2.6.0 (Debian 12's, what Buildbot 3.7 uses) exactly as BuildbotSession.uid
  // does: jwt.encode({'user_info': {...}, 'exp': ...}, session_secret, algorithm='HS256'),
  // with session_secret 0123456789abcdef0123456789abcdef. The first expires in 2100, the
  // second expired in 2023.
  const SECRET = '0123456789abcdef0123456789abcdef';
  const VALID =
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1c2VyX2luZm8iOnsidXNlcm5hbWUiOiJhbGljZSIsImVtYWlsIjoiYWxpY2VAZXhhbXBsZS5vcmciLCJncm91cHMiOlsiZGV2Iiwib3BzIl19LCJleHAiOjQxMDI0NDQ4MDB9.7lCO7t80SqCUXNdvR_w9R9tHuTMuMsgL92EWmnsQVHE';
  const EXPIRED =
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1c2VyX2luZm8iOnsidXNlcm5hbWUiOiJhbGljZSIsImVtYWlsIjoiYWxpY2VAZXhhbXBsZS5vcmciLCJncm91cHMiOlsiZGV2Iiwib3BzIl19LCJleHAiOjE3MDAwMDAwMDB9.F4m0QNLaGIJjIj-bYjmOU_zUtkMo-IqUTVaF72jGt98';
  let other: AuthApp;
  beforeAll(async () => {
    other = await AuthApp.start({ auth: { users: await users() } });
    // The secret a Buildbot master created in object_state.
    await other.get('/config');
    await other.db.pool.query(sql`
      UPDATE object_state SET value_json = ${JSON.stringify(SECRET)}
      WHERE name = 'session_secret' AND objectid = (SELECT id FROM objects WHERE name = 'www')`);
    await other.app.close();
    other.redis.disconnect();
    other = await AuthApp.start({ auth: { users: await users() } }, { db: other.db });
  });
  afterAll(async () => {
    await other?.close();
    await other?.db.drop();
  });

  it('verifies, but is not honoured: a session without an id cannot be ended (test/api/auth/sessions.test.ts)', async () => {
    const a = await other.get('/config', { session: VALID });
    expect(a.json().user).toEqual({ anonymous: true });
    expect(claimsOf(sessionOf(a)!).user_info).toEqual({ anonymous: true });
    expect((await other.rpc('/builds/2', 'stop', {}, { session: VALID })).status).toBe(403);
  });

  it('an expired one is not', async () => {
    expect((await other.get('/config', { session: EXPIRED })).json().user).toEqual({ anonymous: true });
    expect((await other.rpc('/builds/2', 'stop', {}, { session: EXPIRED })).status).toBe(403);
  });

  it('ours are the same tokens: what we mint for the same claims is byte for byte what PyJWT mints', async () => {
    const [h, c] = VALID.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(c, 'base64url').toString());
    const { Sessions } = await import('../../../services/api/auth/session.js');
    const exp = claims.exp as number;
    const ours = new Sessions(SECRET, exp - 1_000_000).mint(claims.user_info, 1_000_000_000);
    expect(ours).toBe(VALID);
    expect(ours.split('.')[0]).toBe(h);
  });
});

describe('SESSION_SECRET', () => {
  it('signs the cookies and replaces the secret in object_state, for every pod and Buildbot', async () => {
    const secret = 'a'.repeat(40);
    // Both pods with the same configuration (the same hashes: another hash is another password).
    const same = await users();
    const app = await AuthApp.start({ auth: { users: same } }, { sessionSecret: secret });
    try {
      const s = await app.login('bob', 'builder');
      const [h, c, sig] = s.split('.') as [string, string, string];
      expect(sig).toBe(createHmac('sha256', secret).update(`${h}.${c}`).digest('base64url'));
      expect(await app.secret()).toBe(secret);
      // Another pod without it reads the same secret from the database and accepts the cookie.
      const other = await AuthApp.start({ auth: { users: same } }, { db: app.db, keyPrefix: app.keyPrefix });
      try {
        expect((await other.get('/config', { session: s })).json().user.username).toBe('bob');
      } finally {
        await other.app.close();
        other.redis.disconnect();
      }
    } finally {
      await app.close();
    }
  });
  it('shorter than 32 characters is a configuration error', async () => {
    const { loadApiEnv } = await import('../../../services/core/config/env.js');
    expect(() => loadApiEnv({ SESSION_SECRET: 'short' })).toThrow(/invalid environment/);
    expect(loadApiEnv({ SESSION_SECRET: 'x'.repeat(32) }).sessionSecret).toBe('x'.repeat(32));
    expect(loadApiEnv({}).sessionSecret).toBeNull();
  });
});

describe('GET /auth/logout', () => {
  it('resets the session to anonymous and redirects', async () => {
    const s = await api.login('alice', 'wonderland');
    const a = await api.get('/auth/logout?redirect=/about', { session: s });
    expect(a.status).toBe(302);
    expect(a.headers.location).toBe(`${PUBLIC_URL}#/about`);
    const anon = sessionOf(a)!;
    expect(claimsOf(anon).user_info).toEqual({ anonymous: true });
    expect((await api.get('/config', { session: anon })).json().user).toEqual({ anonymous: true });
  });
});

describe('the owner of what a logged-in user forces', () => {
  it("is the user's email (else user name), as Buildbot records it", async () => {
    const s = await api.login('alice', 'wonderland');
    const a = await api.rpc('/forceschedulers/force-runtests', 'force', { builderid: 4 }, { session: s });
    expect(a.status).toBe(200);
    const [bsid] = a.json().result;
    const [row] = await api.db.pool.query(
      sql`SELECT property_value FROM buildset_properties WHERE buildsetid = ${bsid} AND property_name = 'owner'`,
    );
    expect(JSON.parse(row.property_value)[0]).toBe('alice@example.org');
  });
});

describe('without users or oidc', () => {
  it("/auth/login is 501 (Buildbot's NoAuth has no login), /config says NoAuth", async () => {
    const none = await AuthApp.start({}, { db: api.db });
    try {
      const a = await none.get('/auth/login', { headers: { authorization: basic('alice', 'wonderland') } });
      expect(a.status).toBe(501);
      expect(a.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(a.json()).toEqual({ error: 'no login is configured' });
      expect((await none.get('/config')).json().auth).toEqual({ name: 'NoAuth' });
    } finally {
      await none.app.close();
      none.redis.disconnect();
    }
  });
});

describe('users from auth.users_file', () => {
  it('are read at start and again when the file changes', async () => {
    const { mkdtempSync, writeFileSync, utimesSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(`${tmpdir()}/flotilla-users-`);
    const file = `${dir}/users.yaml`;
    writeFileSync(file, `users:\n  - username: carol\n    password_hash: "${await testHash('c1')}"\n`);
    const { UserDirectory } = await import('../../../services/core/auth/users.js');
    const errors: Error[] = [];
    const dir1 = new UserDirectory([], file, (e) => errors.push(e), 0);
    expect(dir1.find('carol')).toBeDefined();
    writeFileSync(file, `users:\n  - username: dave\n    password_hash: "${await testHash('d1')}"\n`);
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(dir1.find('carol', Date.now() + 1)).toBeUndefined();
    expect(dir1.find('dave', Date.now() + 2)).toBeDefined();
    // A broken file keeps the last good users and is reported.
    writeFileSync(file, 'users: [ { username: eve, password_hash: plain } ]\n');
    utimesSync(file, new Date(), new Date(Date.now() + 10000));
    expect(dir1.find('dave', Date.now() + 3)).toBeDefined();
    expect(errors.map((e) => e.message).join()).toMatch(/users_file is invalid/);

    writeFileSync(file, `users:\n  - username: dave\n    password_hash: "${await testHash('d1')}"\n`);
    const app = await AuthApp.start({ auth: { users_file: file } }, { db: api.db });
    try {
      expect((await app.get('/auth/login', { headers: { authorization: basic('dave', 'd1') } })).status).toBe(
        302,
      );
    } finally {
      await app.app.close();
      app.redis.disconnect();
    }
  });

  it('a users file that is missing or invalid stops the app from starting', async () => {
    await expect(
      AuthApp.start({ auth: { users_file: '/nonexistent/users.yaml' } }, { db: api.db }),
    ).rejects.toThrow(/cannot read auth.users_file/);
  });
});
