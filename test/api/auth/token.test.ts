// Token login (GET /auth/login?token=...): an OAuth 2.0 / OIDC access token, a JWT checked
// against a local key set (no network), the issuer, our audience and the time. Tokens are
// signed here with node's crypto; what verifies them is the code under test.
import { createHmac, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeySet, verifyJwt } from '../../../services/core/auth/jwt.js';
import { masterConfigSchema } from '../../../services/core/config/master-config.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { waitFor } from '../../helpers/wait.js';
import { AuthApp, claimsOf, PUBLIC_URL, sessionOf, testHash } from './lib.js';

const ISSUER = 'https://idp.example.org/realms/ci';
const AUDIENCE = 'flotilla';

interface Key {
  kid: string;
  alg: string;
  priv: KeyObject;
  pub: KeyObject;
}
function makeKey(kid: string, alg: string): Key {
  const pair =
    alg.startsWith('RS') || alg.startsWith('PS')
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : alg === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : alg === 'ES384'
          ? generateKeyPairSync('ec', { namedCurve: 'P-384' })
          : generateKeyPairSync('ed25519');
  return { kid, alg, priv: pair.privateKey, pub: pair.publicKey };
}
const jwkOf = (k: Key) => ({ ...k.pub.export({ format: 'jwk' }), kid: k.kid, use: 'sig', alg: k.alg });

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
function signJwt(claims: Record<string, unknown>, key: Key, header: Record<string, unknown> = {}): string {
  const h = { alg: key.alg, typ: 'JWT', kid: key.kid, ...header };
  const data = `${b64(h)}.${b64(claims)}`;
  const hash =
    { RS256: 'sha256', PS256: 'sha256', ES256: 'sha256', ES384: 'sha384', EdDSA: null }[key.alg] ?? null;
  const opts =
    key.alg === 'PS256'
      ? { key: key.priv, padding: 6, saltLength: 32 }
      : key.alg.startsWith('ES')
        ? { key: key.priv, dsaEncoding: 'ieee-p1363' as const }
        : key.priv;
  return `${data}.${sign(hash, Buffer.from(data), opts).toString('base64url')}`;
}

const now = () => Math.floor(Date.now() / 1000);
const good = (extra: Record<string, unknown> = {}) => ({
  iss: ISSUER,
  aud: AUDIENCE,
  sub: 'f1d2',
  preferred_username: 'erin',
  email: 'erin@example.org',
  name: 'Erin Example',
  groups: ['dev'],
  iat: now(),
  exp: now() + 300,
  ...extra,
});

let db: TestDatabase;
let api: AuthApp;
let dir: string;
let jwksFile: string;
const rs = makeKey('rs-1', 'RS256');
const ps = makeKey('ps-1', 'PS256');
const es = makeKey('es-1', 'ES256');
const ed = makeKey('ed-1', 'EdDSA');
const stranger = makeKey('rs-1', 'RS256'); // same kid, another key

beforeAll(async () => {
  db = await createDatabase('fixture');
  dir = mkdtempSync(`${tmpdir()}/flotilla-jwks-`);
  jwksFile = `${dir}/jwks.json`;
  writeFileSync(jwksFile, JSON.stringify({ keys: [rs, ps, es, ed].map(jwkOf) }));
  api = await AuthApp.start(
    { auth: { oidc: { issuer: ISSUER, audience: AUDIENCE, jwks_file: jwksFile } } },
    { db },
  );
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const login = (token: string, query = '') =>
  api.get(`/auth/login?token=${encodeURIComponent(token)}${query}`, { from: '10.7.0.1' });

function expectRefused(a: Awaited<ReturnType<typeof login>>): void {
  expect(a.status).toBe(401);
  expect(a.headers['www-authenticate']).toBe('Bearer realm="buildbot", error="invalid_token"');
  expect(a.cookies).toEqual([]);
  expect(a.text).toBe('Unauthorized');
}

describe('a valid token', () => {
  it.each([rs, ps, es, ed].map((k) => [k.alg, k] as const))(
    '%s: 302 to PUBLIC_URL and a session with the claims as user info',
    async (_alg, key) => {
      const a = await login(signJwt(good(), key));
      expect(a.status).toBe(302);
      expect(a.headers.location).toBe(PUBLIC_URL);
      expect(claimsOf(sessionOf(a)!).user_info).toEqual({
        username: 'erin',
        email: 'erin@example.org',
        full_name: 'Erin Example',
        groups: ['dev'],
      });
    },
  );

  it('with redirect: PUBLIC_URL#<redirect>; the session then works for control', async () => {
    const a = await login(signJwt(good(), rs), '&redirect=/builders');
    expect(a.headers.location).toBe(`${PUBLIC_URL}#/builders`);
    const s = sessionOf(a)!;
    expect((await api.get('/config', { session: s })).json().user.username).toBe('erin');
    expect((await api.rpc('/builds/2', 'stop', {}, { session: s })).status).toBe(200);
    expect((await api.rpc('/builds/2', 'stop')).status).toBe(403);
  });

  it('claims: sub without preferred_username, an unverified email dropped, a group string, an audience list', async () => {
    const { preferred_username: _p, ...rest } = good();
    const a = await login(
      signJwt({ ...rest, email_verified: false, groups: 'ops', aud: ['other', AUDIENCE] }, rs),
    );
    expect(a.status).toBe(302);
    expect(claimsOf(sessionOf(a)!).user_info).toEqual({
      username: 'f1d2',
      full_name: 'Erin Example',
      groups: ['ops'],
    });
  });

  it('a token expired less than the minute of leeway ago still counts', async () => {
    expect((await login(signJwt(good({ exp: now() - 20 }), rs))).status).toBe(302);
  });

  it('oversized claims are cut, so the session cookie stays small', async () => {
    const a = await login(
      signJwt(good({ groups: ['x'.repeat(400), ...Array.from({ length: 300 }, (_, i) => `g${i}`)] }), rs),
    );
    expect(a.status).toBe(302);
    const info = claimsOf(sessionOf(a)!).user_info;
    expect((info.groups as string[]).length).toBe(100);
    expect((info.groups as string[])[0]!.length).toBe(256);
  });
});

describe('refused tokens: 401, no session', () => {
  const cases: [string, () => string][] = [
    ['expired', () => signJwt(good({ exp: now() - 120 }), rs)],
    ['without exp', () => signJwt(good({ exp: undefined }), rs)],
    ['not yet valid (nbf)', () => signJwt(good({ nbf: now() + 600 }), rs)],
    ['issued in the future', () => signJwt(good({ iat: now() + 600 }), rs)],
    ['of another issuer', () => signJwt(good({ iss: 'https://evil.example.org/realms/ci' }), rs)],
    ['of an issuer that differs by a slash', () => signJwt(good({ iss: `${ISSUER}/` }), rs)],
    ['for another audience', () => signJwt(good({ aud: 'someone-else' }), rs)],
    ['for a list of other audiences', () => signJwt(good({ aud: ['a', 'b'] }), rs)],
    ['without audience', () => signJwt(good({ aud: undefined }), rs)],
    ['signed by another key with the same kid', () => signJwt(good(), stranger)],
    [
      'changed after signing',
      () => {
        const [h, , s] = signJwt(good(), rs).split('.');
        return `${h}.${b64(good({ preferred_username: 'admin' }))}.${s}`;
      },
    ],
    ['with an unknown kid', () => signJwt(good(), makeKey('nosuch', 'RS256'))],
    ['alg none', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(good())}.`],
    ['alg none with a signature', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(good())}.AAAA`],
    [
      'HS256 keyed with the public key (algorithm confusion)',
      () => {
        const data = `${b64({ alg: 'HS256', typ: 'JWT', kid: 'rs-1' })}.${b64(good())}`;
        const pem = rs.pub.export({ format: 'pem', type: 'spki' });
        return `${data}.${createHmac('sha256', pem).update(data).digest('base64url')}`;
      },
    ],
    [
      'RS256 header on an EC signature',
      () => signJwt(good(), { ...es, alg: 'ES256' }, { alg: 'RS256', kid: 'es-1' }),
    ],
    ['with a crit header', () => signJwt(good(), rs, { crit: ['exp'] })],
    [
      'without a user name or sub',
      () => signJwt(good({ sub: undefined, preferred_username: undefined }), rs),
    ],
    ['not a JWT', () => 'abc'],
    ['empty', () => ''],
    ['four parts', () => `${signJwt(good(), rs)}.x`],
    ['not base64url', () => signJwt(good(), rs).replace(/\./, '.+/')],
  ];
  it.each(cases)('%s', async (_what, make) => {
    expectRefused(await login(make()));
  });
});

describe('where the token travels', () => {
  it('in an Authorization: Bearer header (kept out of URLs and logs) as well as in ?token=', async () => {
    const a = await api.get('/auth/login', { headers: { authorization: `Bearer ${signJwt(good(), rs)}` } });
    expect(a.status).toBe(302);
    expect(claimsOf(sessionOf(a)!).user_info.username).toBe('erin');
    expectRefused(await api.get('/auth/login', { headers: { authorization: 'Bearer abc' } }));
  });
  it('a URL past the limit is 414; a token past 16 KiB is refused wherever it comes', async () => {
    const big = signJwt(good({ pad: 'x'.repeat(20_000) }), rs);
    expect((await login(big)).status).toBe(414);
    expectRefused(await api.get('/auth/login', { headers: { authorization: `Bearer ${big}` } }));
  });
});

describe('the key set file', () => {
  it('is read again when a token names a key it lacks (rotation)', async () => {
    const next = makeKey('rs-2', 'RS256');
    const token = signJwt(good(), next);
    writeFileSync(jwksFile, JSON.stringify({ keys: [rs, ps, es, ed, next].map(jwkOf) }));
    // The file is read again for an unknown key at most once a second: the login succeeds
    // once a second has passed since the last read (at once, when that was a while ago).
    await waitFor('the rotated key to be read', async () => (await login(token)).status === 302, {
      everyMs: 400,
    });
  });
  it('ignores keys that cannot verify: private parts, symmetric keys, encryption keys', () => {
    const privJwk = { ...(rs.priv.export({ format: 'jwk' }) as object), kid: 'p' };
    const set = KeySet.from({
      keys: [
        privJwk,
        { kty: 'oct', k: 'c2VjcmV0', kid: 'o' },
        { ...jwkOf(ps), use: 'enc' },
        { kty: 'RSA' },
        5,
        null,
      ],
    });
    expect(set.size).toBe(0);
    expect(() => KeySet.from({})).toThrow(/keys/);
  });
});

describe('verifyJwt directly', () => {
  it('accepts a key without kid for a token without kid, and checks the key type', () => {
    const set = KeySet.from({ keys: [{ ...rs.pub.export({ format: 'jwk' }) }] });
    const token = signJwt(good(), rs, { kid: undefined });
    expect(verifyJwt(token, set, { issuer: ISSUER, audience: AUDIENCE }).sub).toBe('f1d2');
    const es384 = makeKey('e', 'ES384');
    const set2 = KeySet.from({ keys: [jwkOf(es384)] });
    expect(verifyJwt(signJwt(good(), es384), set2, { issuer: ISSUER, audience: AUDIENCE }).sub).toBe('f1d2');
    // The same key, a token claiming ES256 (the curve does not match): refused.
    expect(() =>
      verifyJwt(signJwt(good(), { ...es384, alg: 'ES384' }, { alg: 'ES256' }), set2, {
        issuer: ISSUER,
        audience: AUDIENCE,
      }),
    ).toThrow(/no key/);
  });
});

describe('configuration', () => {
  it('token login without oidc: 400; password login without users: 401 Bearer', async () => {
    const pw = await AuthApp.start(
      { auth: { users: [{ username: 'u', password_hash: await testHash('p') }] } },
      { db },
    );
    try {
      const a = await pw.get(`/auth/login?token=${signJwt(good(), rs)}`);
      expect(a.status).toBe(400);
      expect(a.json()).toEqual({ error: 'token login is not configured' });
    } finally {
      await pw.app.close();
      pw.redis.disconnect();
    }
    const b = await api.get('/auth/login');
    expect(b.status).toBe(401);
    expect(b.headers['www-authenticate']).toBe('Bearer realm="buildbot"');
    expect((await api.get('/config')).json().auth).toMatchObject({ name: 'OIDC', oauth2: true });
  });

  it('audience is required, and exactly one key source; a jwks_url is https or loopback', () => {
    const parse = (oidc: unknown) => masterConfigSchema.shape.auth.safeParse({ oidc }).success;
    expect(parse({ issuer: ISSUER, audience: AUDIENCE, jwks_file: '/x' })).toBe(true);
    expect(parse({ issuer: ISSUER, jwks_file: '/x' })).toBe(false);
    expect(parse({ issuer: ISSUER, audience: AUDIENCE })).toBe(false);
    expect(parse({ issuer: ISSUER, audience: AUDIENCE, jwks_file: '/x', jwks_url: 'https://a/jwks' })).toBe(
      false,
    );
    expect(parse({ issuer: ISSUER, audience: AUDIENCE, jwks_url: 'https://idp.example.org/jwks' })).toBe(
      true,
    );
    expect(parse({ issuer: ISSUER, audience: AUDIENCE, jwks_url: 'http://idp.example.org/jwks' })).toBe(
      false,
    );
    expect(parse({ issuer: ISSUER, audience: AUDIENCE, jwks_url: 'http://127.0.0.1:9/jwks' })).toBe(true);
  });

  it('jwks_url: fetched once and cached', async () => {
    let fetches = 0;
    const server: Server = createServer((_req, res) => {
      fetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwkOf(es)] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const app = await AuthApp.start(
      { auth: { oidc: { issuer: ISSUER, audience: AUDIENCE, jwks_url: `http://127.0.0.1:${port}/jwks` } } },
      { db },
    );
    try {
      for (let i = 0; i < 3; i++) {
        expect((await app.get(`/auth/login?token=${signJwt(good(), es)}`)).status).toBe(302);
      }
      expect(fetches).toBe(1);
      // A key it lacks does not make it fetch again within a minute.
      expect((await app.get(`/auth/login?token=${signJwt(good(), rs)}`)).status).toBe(401);
      expect(fetches).toBe(1);
    } finally {
      await app.app.close();
      app.redis.disconnect();
      server.close();
    }
  });
});
