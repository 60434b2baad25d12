// auth.remote_user (Buildbot's RemoteUserAuth): the user an authenticating proxy names in a
// header logs in at /auth/login and as the web UI loads /config, with the regex's named groups
// as the user info; a trusted proxy that names nobody is refused 403 with Buildbot's words.
// Header spoofing: the header, and X-Forwarded-For, from any TCP peer not in trusted_proxies
// names nobody, even with www.trust_proxy believing every X-Forwarded-For.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { masterConfigSchema } from '../../../services/core/config/master-config.js';
import { AuthApp, claimsOf, PUBLIC_URL, sessionOf } from './lib.js';

const PROXY = '10.1.2.3';
const PROXY_RANGE_MEMBER = '192.168.40.7';
const OUTSIDER = '203.0.113.9';

let api: AuthApp;
beforeAll(async () => {
  api = await AuthApp.start({
    auth: {
      remote_user: { trusted_proxies: [PROXY, '192.168.0.0/16'] },
      role_matchers: [{ role: 'admins', usernames: ['alice'] }],
    },
    www: { trust_proxy: true },
  });
});
afterAll(() => api?.close());

const login = (from: string, headers: Record<string, string> = {}) =>
  api.get('/auth/login?redirect=/builders', { from, headers });

describe('from a trusted proxy', () => {
  it('the header logs its user in, the named groups as user info', async () => {
    for (const from of [PROXY, PROXY_RANGE_MEMBER]) {
      const a = await login(from, { remote_user: 'alice@EXAMPLE.ORG' });
      expect([a.status, a.headers.location]).toEqual([302, `${PUBLIC_URL}#/builders`]);
      expect(claimsOf(sessionOf(a)!).user_info).toEqual({
        username: 'alice',
        realm: 'EXAMPLE.ORG',
        email: 'alice',
        groups: [],
      });
    }
  });

  it('/config logs the user in too, and the role matchers see the name', async () => {
    const c = await api.get('/config', { from: PROXY, headers: { remote_user: 'alice@EXAMPLE.ORG' } });
    const body = c.json();
    expect(body.auth).toEqual({ name: 'RemoteUserAuth' });
    expect(body.user).toMatchObject({ username: 'alice', realm: 'EXAMPLE.ORG' });
    expect(body.roles).toContain('admins');
    expect(sessionOf(c)).toBeDefined();
  });

  it('no header, or one the regex does not match: 403 with Buildbot’s words, no session', async () => {
    const none = await login(PROXY);
    expect(none.status).toBe(403);
    expect(none.text).toContain('missing http header REMOTE_USER. Check your reverse proxy config!');
    const bad = await login(PROXY, { remote_user: 'alice' });
    expect(bad.status).toBe(403);
    expect(bad.text).toContain('does not match regex');
    expect([sessionOf(none), sessionOf(bad)].map((s) => s && claimsOf(s).user_info.username)).toEqual([
      undefined,
      undefined,
    ]);
  });
});

describe('header spoofing', () => {
  it('from another address the header names nobody, whatever X-Forwarded-For says', async () => {
    const spoofs: Record<string, string>[] = [
      { remote_user: 'alice@EXAMPLE.ORG' },
      { remote_user: 'alice@EXAMPLE.ORG', 'x-forwarded-for': PROXY },
    ];
    for (const headers of spoofs) {
      const a = await login(OUTSIDER, headers);
      expect(a.status).toBe(403);
      expect(a.text).toContain('believed only from the trusted proxies');
      expect(sessionOf(a) && claimsOf(sessionOf(a)!).user_info.username).toBeFalsy();
      const c = (await api.get('/config', { from: OUTSIDER, headers })).json();
      expect(c.user).toEqual({ anonymous: true });
    }
  });
});

describe('the configuration', () => {
  it("takes another header and a regex in Python's syntax", async () => {
    const other = await AuthApp.start(
      {
        auth: {
          remote_user: {
            header: 'X-Forwarded-User',
            headerRegex: '(?P<username>[a-z]+)$',
            trusted_proxies: ['::1'],
          },
        },
      },
      { db: api.db, redis: api.redis },
    );
    const a = await other.get('/auth/login', { from: '::1', headers: { 'x-forwarded-user': 'bob' } });
    expect(claimsOf(sessionOf(a)!).user_info).toMatchObject({ username: 'bob', email: 'bob' });
    expect(
      (await other.get('/auth/login', { from: '::1', headers: { 'x-forwarded-user': 'Bob' } })).status,
    ).toBe(403);
    await other.app.close();
  });

  it('refuses a regex without a username group, and what is not an address or range', () => {
    const parse = (remote_user: unknown) => () => masterConfigSchema.parse({ auth: { remote_user } });
    expect(parse({ headerRegex: '(?P<user>.+)', trusted_proxies: [PROXY] })).toThrow(/named group username/);
    expect(parse({ trusted_proxies: ['10.0.0.0/33'] })).toThrow(/addresses or CIDR ranges/);
    expect(parse({ trusted_proxies: ['proxy.example.org'] })).toThrow(/addresses or CIDR ranges/);
    expect(parse({})).toThrow(/trusted_proxies/);
  });
});
