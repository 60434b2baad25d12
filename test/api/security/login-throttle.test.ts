// Login brute-force throttling: failed logins are counted in Redis across API instances per
// user name and client address together, per client address, and per user name from every
// client without a device cookie (a higher limit); past a limit, logins answer 429 with
// Retry-After before any password is checked (a right password included), until the window
// ends. A success takes its attempt back and clears its user's count at that address. If
// Redis is away, logins are refused (503) rather than unthrottled. (How the owner is never
// locked out: test/security/login-throttle.test.ts.)
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis } from '../../../services/core/redis.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { waitFor } from '../../helpers/wait.js';
import { AuthApp, basic, type Reply, testHash } from '../auth/lib.js';

let db: TestDatabase;
let users: unknown[];
beforeAll(async () => {
  db = await createDatabase('fixture');
  users = [
    { username: 'alice', password_hash: await testHash('right') },
    { username: 'bob', password_hash: await testHash('right') },
  ];
});
afterAll(async () => {
  await db?.drop();
});

const throttle = {
  max_failures_per_user: 3,
  max_failures_per_client: 5,
  max_failures_per_user_global: 6,
  window_seconds: 60,
};

async function pair(t: Record<string, number> = throttle) {
  const keyPrefix = `t:${randomBytes(6).toString('hex')}:`;
  const start = () => AuthApp.start({ auth: { users, login_throttle: t } }, { db, keyPrefix });
  const a = await start();
  const b = await start();
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

const attempt = (app: AuthApp, user: string, password: string, from: string) =>
  app.get('/auth/login', { headers: { authorization: basic(user, password) }, from });

function expectThrottled(r: Reply, window = 60): void {
  expect(r.status).toBe(429);
  expect(r.json()).toEqual({ error: 'too many failed logins: try again later' });
  const retry = Number(r.headers['retry-after']);
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(window);
  expect(r.cookies).toEqual([]);
}

describe('per user name and address', () => {
  it('after 3 failures from one address (on either instance) even the right password waits there', async () => {
    const { a, b, close } = await pair();
    try {
      expect((await attempt(a, 'alice', 'w1', '10.0.0.1')).status).toBe(401);
      expect((await attempt(b, 'alice', 'w2', '10.0.0.1')).status).toBe(401);
      expect((await attempt(a, 'alice', 'w3', '10.0.0.1')).status).toBe(401);
      expectThrottled(await attempt(b, 'alice', 'right', '10.0.0.1'));
      expectThrottled(await attempt(a, 'alice', 'w4', '10.0.0.1'));
      // Elsewhere, and for other users, nothing is held up.
      expect((await attempt(a, 'alice', 'right', '10.0.0.2')).status).toBe(302);
      expect((await attempt(a, 'bob', 'right', '10.0.0.3')).status).toBe(302);
    } finally {
      await close();
    }
  });

  it('a success clears the count at that address', async () => {
    // (The address's own count, of every name it tries, goes on: a limit it does not reach here.)
    const { a, b, close } = await pair({
      ...throttle,
      max_failures_per_client: 20,
      max_failures_per_user_global: 20,
    });
    try {
      for (let round = 0; round < 3; round++) {
        expect((await attempt(a, 'alice', 'wrong', '10.1.0.1')).status).toBe(401);
        expect((await attempt(b, 'alice', 'wrong', '10.1.0.1')).status).toBe(401);
        expect((await attempt(a, 'alice', 'right', '10.1.0.1')).status).toBe(302);
      }
    } finally {
      await close();
    }
  });
});

describe('per user name from everywhere', () => {
  it('after 6 failures spread over addresses, a client without a device cookie waits', async () => {
    const { a, b, close } = await pair();
    try {
      for (let i = 0; i < 6; i++)
        expect((await attempt(i % 2 ? a : b, 'alice', 'w', `10.7.0.${i}`)).status).toBe(401);
      expectThrottled(await attempt(a, 'alice', 'right', '10.7.1.1'));
      expect((await attempt(b, 'bob', 'right', '10.7.1.1')).status).toBe(302);
    } finally {
      await close();
    }
  });
});

describe('per client', () => {
  it('after 5 failures from one address, whatever the user names, that address waits', async () => {
    const { a, b, close } = await pair();
    try {
      for (const u of ['u1', 'u2', 'u3', 'u4', 'u5']) {
        expect((await attempt(u === 'u3' ? b : a, u, 'x', '10.2.0.1')).status).toBe(401);
      }
      expectThrottled(await attempt(a, 'bob', 'right', '10.2.0.1'));
      expect((await attempt(b, 'bob', 'right', '10.2.0.2')).status).toBe(302);
    } finally {
      await close();
    }
  });

  it('token logins count too; malformed credentials count', async () => {
    const { a, close } = await pair({ ...throttle, max_failures_per_client: 2 });
    try {
      expect(
        (await a.get('/auth/login', { headers: { authorization: 'Basic !!' }, from: '10.3.0.1' })).status,
      ).toBe(401);
      expect((await attempt(a, 'nobody', 'x', '10.3.0.1')).status).toBe(401);
      expectThrottled(
        await a.get('/auth/login', { headers: { authorization: basic('bob', 'right') }, from: '10.3.0.1' }),
      );
    } finally {
      await close();
    }
  });

  it('many attempts at once cannot slip past the limit', async () => {
    const { a, b, close } = await pair();
    try {
      const all = await Promise.all(
        Array.from({ length: 20 }, (_, i) => attempt(i % 2 ? a : b, 'alice', `w${i}`, `10.4.0.${i}`)),
      );
      const statuses = all.map((r) => r.status);
      // The per-user limit from everywhere (6): no more get a password checked.
      expect(statuses.filter((s) => s === 401)).toHaveLength(6);
      expect(statuses.filter((s) => s === 429)).toHaveLength(14);
    } finally {
      await close();
    }
  });
});

describe('the window', () => {
  it('ends, and attempts are allowed again', async () => {
    const { a, close } = await pair({ ...throttle, window_seconds: 1 });
    try {
      for (let i = 0; i < 3; i++) await attempt(a, 'alice', 'w', '10.5.0.1');
      expectThrottled(await attempt(a, 'alice', 'right', '10.5.0.1'), 1);
      // The one-second window ends: the right password is let in again.
      await waitFor(
        'the window to end',
        async () => (await attempt(a, 'alice', 'right', '10.5.0.1')).status === 302,
        { everyMs: 250 },
      );
    } finally {
      await close();
    }
  });
});

describe('without Redis', () => {
  it('logins are refused with 503, not let through unthrottled', async () => {
    const dead = createRedis('redis://127.0.0.1:1', 'dead');
    dead.on('error', () => {});
    const app = await AuthApp.start({ auth: { users } }, { db, redis: dead });
    try {
      const r = await attempt(app, 'alice', 'right', '10.6.0.1');
      expect(r.status).toBe(503);
      expect(r.json()).toEqual({ error: 'login is unavailable for a moment: try again later' });
    } finally {
      await app.app.close();
      dead.disconnect();
    }
  });
});
