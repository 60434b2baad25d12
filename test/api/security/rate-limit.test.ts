// Per-client rate limiting, counted in Redis so that two API instances share each client's
// window: RateLimit headers on every answer, 429 with Retry-After past the limit, clients
// told apart by user (when logged in) or address (IPv6 by /64), X-Forwarded-For believed
// only from trusted proxies, probes never limited, and a Redis outage never an API outage.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis } from '../../../services/core/redis.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { waitFor } from '../../helpers/wait.js';
import { AuthApp, type Reply, testHash } from '../auth/lib.js';

let db: TestDatabase;
let users: unknown[];
beforeAll(async () => {
  db = await createDatabase('fixture');
  users = [{ username: 'alice', password_hash: await testHash('a') }];
});
afterAll(async () => {
  await db?.drop();
});

const www = (requests: number, window_seconds = 60, extra: Record<string, unknown> = {}) => ({
  rate_limit: { requests, window_seconds },
  ...extra,
});

async function pair(requests: number, window = 60, extra: Record<string, unknown> = {}) {
  const keyPrefix = `t:${randomBytes(6).toString('hex')}:`;
  const a = await AuthApp.start({ auth: { users }, www: www(requests, window, extra) }, { db, keyPrefix });
  const b = await AuthApp.start({ auth: { users }, www: www(requests, window, extra) }, { db, keyPrefix });
  return {
    a,
    b,
    close: async () => {
      for (const x of [a, b]) {
        await x.app.close();
        x.redis.disconnect();
      }
    },
  };
}

const remaining = (r: Reply) => Number(r.headers['ratelimit-remaining']);

function expect429(r: Reply, window: number): void {
  expect(r.status).toBe(429);
  expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(r.json()).toEqual({ error: 'too many requests' });
  const retry = Number(r.headers['retry-after']);
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(window);
  expect(r.headers['ratelimit-remaining']).toBe('0');
}

describe('two API instances sharing Redis', () => {
  it("count one client's requests together, then refuse with 429 and Retry-After", async () => {
    const { a, b, close } = await pair(10);
    try {
      const seen: number[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await (i % 2 ? b : a).get('/api/v2/builders');
        expect(r.status).toBe(200);
        expect(r.headers['ratelimit-limit']).toBe('10');
        expect(r.headers['ratelimit-policy']).toBe('10;w=60');
        const reset = Number(r.headers['ratelimit-reset']);
        expect(reset).toBeGreaterThanOrEqual(1);
        expect(reset).toBeLessThanOrEqual(60);
        seen.push(remaining(r));
      }
      expect(seen).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      expect429(await a.get('/api/v2/builders'), 60);
      expect429(await b.rpc('/builds/2', 'stop'), 60);
      expect429(await b.get('/auth/login'), 60);
      // Another client is counted on its own; the probes are never limited.
      expect((await b.get('/api/v2/builders', { from: '10.1.2.3' })).status).toBe(200);
      const probe = await a.get('/healthz');
      expect(probe.status).toBe(200);
      expect(probe.headers['ratelimit-limit']).toBeUndefined();
    } finally {
      await close();
    }
  });

  it('the window ends and the client may come back', async () => {
    const { a, b, close } = await pair(2, 1);
    try {
      // Two requests a window pass and the third is refused. The window is one second from
      // its first request, and on a loaded machine (CI, 15:40 on 2026-11-29) it ended between
      // the second and the third, which then began a window of its own: so requests go on,
      // from both pods in turn, until one is refused, and every answer before it is a 200.
      let refused: Reply | undefined;
      for (let i = 0; i < 20 && !refused; i++) {
        const r = await (i % 2 ? b : a).get('/api/v2/builders');
        if (r.status === 200) continue;
        refused = r;
        expect(i).toBeGreaterThanOrEqual(2);
      }
      if (!refused) throw new Error('20 requests in a row went through a limit of 2 a second');
      expect429(refused, 1);
      // The one-second window ends: a request is let through again.
      await waitFor('the window to end', async () => (await b.get('/api/v2/builders')).status === 200, {
        everyMs: 250,
      });
    } finally {
      await close();
    }
  });
});

describe('who a client is', () => {
  it('a logged-in user wherever they come from; anyone else by address', async () => {
    const { a, b, close } = await pair(5);
    try {
      const s = await a.login('alice', 'a', '10.0.0.1');
      const from = ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6'];
      for (const f of from)
        expect((await b.get('/api/v2/builders', { session: s, from: f })).status).toBe(200);
      expect429(await a.get('/api/v2/builders', { session: s, from: '10.0.0.7' }), 60);
      // The login's own address still has its window (one request used).
      expect(remaining(await a.get('/api/v2/builders', { from: '10.0.0.1' }))).toBe(3);
    } finally {
      await close();
    }
  });

  it('IPv6 clients by their /64', async () => {
    const { a, close } = await pair(3);
    try {
      for (const f of ['2001:db8:1:2::1', '2001:db8:1:2::ffff', '2001:db8:1:2:aaaa:bbbb:cccc:dddd']) {
        expect((await a.get('/api/v2/builders', { from: f })).status).toBe(200);
      }
      expect429(await a.get('/api/v2/builders', { from: '2001:0db8:0001:0002::9' }), 60);
      expect((await a.get('/api/v2/builders', { from: '2001:db8:1:3::1' })).status).toBe(200);
    } finally {
      await close();
    }
  });

  it('X-Forwarded-For counts only from a trusted proxy', async () => {
    const spoofed = await pair(2);
    try {
      for (let i = 0; i < 2; i++) {
        const r = await spoofed.a.get('/api/v2/builders', { headers: { 'x-forwarded-for': `192.0.2.${i}` } });
        expect(r.status).toBe(200);
      }
      expect429(
        await spoofed.a.get('/api/v2/builders', { headers: { 'x-forwarded-for': '192.0.2.99' } }),
        60,
      );
    } finally {
      await spoofed.close();
    }
    const proxied = await pair(2, 60, { trust_proxy: ['10.0.0.0/8'] });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await proxied.a.get('/api/v2/builders', {
          from: '10.9.9.9',
          headers: { 'x-forwarded-for': `192.0.2.${i}` },
        });
        expect(r.status).toBe(200);
      }
    } finally {
      await proxied.close();
    }
  });
});

describe('configuration', () => {
  it('enabled: false, or no www section at all (the in-process default): no limit, no headers', async () => {
    const off = await AuthApp.start({ www: { rate_limit: { enabled: false, requests: 1 } } }, { db });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await off.get('/api/v2/builders');
        expect(r.status).toBe(200);
        expect(r.headers['ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await off.app.close();
      off.redis.disconnect();
    }
  });

  it('a Redis that does not answer lets requests through (after at most half a second)', async () => {
    const dead = createRedis('redis://127.0.0.1:1', 'dead');
    dead.on('error', () => {});
    const app = await AuthApp.start({ www: www(1) }, { db, redis: dead });
    try {
      for (let i = 0; i < 3; i++) {
        const t = Date.now();
        const r = await app.get('/api/v2/builders');
        expect(r.status).toBe(200);
        // It does not wait for Redis, which would never answer: a bound on hanging, wide
        // enough for a loaded machine (how soon is the half-second timeout's business).
        expect(Date.now() - t).toBeLessThan(10_000);
      }
    } finally {
      await app.app.close();
      dead.disconnect();
    }
  });
});
