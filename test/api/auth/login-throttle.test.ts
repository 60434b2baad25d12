// Login brute-force throttling: failed logins draw on token buckets in Redis across API
// instances, per user name and client address together, per client address, and per user
// name from every client without a device cookie (a higher limit); past a limit, logins
// answer 429 with Retry-After and the wait in the message before any password is checked (a
// right password included), until the bucket has an attempt again (window/limit). A success
// gives its attempt back and fills its user's bucket at that address. If Redis is away,
// logins are refused (503) rather than unthrottled.
//
// The last block, review issue 13, finding 7 (medium): throttling must not lock the owner
// out. Ten wrong passwords from anywhere gave the real user 429 for 15 minutes, with the
// right password. Now failures are counted per user and client address together (and per
// address), so a guesser stops only themselves; and per user from everywhere, with a higher
// limit, which holds back only clients without a device cookie from an earlier login of that
// user: guessing spread over many addresses is slowed, and the owner still gets in from a
// device they used before.
//
// Issue 34, section 2, bug 3: ten wrong passwords still locked the right one out of every new
// browser and every script for 15 minutes. Refused attempts were counted too, so one address
// hammering a refused login filled the user's count from everywhere, and then every client
// without a device cookie, anywhere, waited out the window; at the guesser's own address (the
// owner's machine, for `npm start`'s login command) the wait was the whole window, and the 429
// did not say how long. Now a refused attempt costs nothing, the user's limit from everywhere
// never holds back an address that has not failed for the user, a wait is at most
// window/limit (90 s by default) and the 429 names it, and `npm run auth -- unblock` clears it.
// Changed for it: "per user name from everywhere" and the review's "guessing spread over
// many addresses" (a clean address now gets in), "many attempts at once" (from one address:
// spread ones now each get their own try), "the window" (6 s: the wait is window/limit).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAuthCommand, USAGE } from '../../../services/api/auth/command.js';
import { RedisUnavailable, redisInTime } from '../../../services/api/auth/counters.js';
import { createRedis } from '../../../services/core/redis.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { testEnv } from '../../helpers/env.js';
import { waitFor } from '../../helpers/wait.js';
import { PASSWORDS, ReviewStack } from '../lib/review-stack.js';
import { AuthApp, basic, type Reply, testHash } from './lib.js';

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

/** A 429 that names its wait, in seconds, as its Retry-After does; answers the wait. */
function expectThrottled(r: Reply, window = 60): number {
  expect(r.status).toBe(429);
  const retry = Number(r.headers['retry-after']);
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(window);
  expect(r.json()).toEqual({
    error: `too many failed logins: try again in ${retry} second${retry === 1 ? '' : 's'}`,
  });
  expect(r.cookies).toEqual([]);
  return retry;
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
  it('after 6 failures spread over addresses, an address that failed waits; a new one gets in', async () => {
    const { a, b, close } = await pair();
    try {
      for (let i = 0; i < 6; i++)
        expect((await attempt(i % 2 ? a : b, 'alice', 'w', `10.7.0.${i}`)).status).toBe(401);
      // Each of those addresses failed once, far below its own limit (3): past the user's
      // limit from everywhere, no address gets a burst: one try per window/limit (60/3 s).
      expectThrottled(await attempt(a, 'alice', 'w', '10.7.0.1'), 20);
      expectThrottled(await attempt(b, 'alice', 'right', '10.7.0.2'), 20);
      // A new browser or a script elsewhere, with the right password, is not held back.
      expect((await attempt(a, 'alice', 'right', '10.7.1.1')).status).toBe(302);
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
        Array.from({ length: 20 }, (_, i) => attempt(i % 2 ? a : b, 'alice', `w${i}`, '10.4.0.1')),
      );
      const statuses = all.map((r) => r.status);
      // The limit of the user at that address (3): no more get a password checked.
      expect(statuses.filter((s) => s === 401)).toHaveLength(3);
      expect(statuses.filter((s) => s === 429)).toHaveLength(17);
    } finally {
      await close();
    }
  });
});

describe('the window', () => {
  it('ends, and attempts are allowed again', async () => {
    const { a, close } = await pair({ ...throttle, window_seconds: 6 });
    try {
      for (let i = 0; i < 3; i++) await attempt(a, 'alice', 'w', '10.5.0.1');
      // An attempt comes back every window/limit: 2 s.
      expectThrottled(await attempt(a, 'alice', 'right', '10.5.0.1'), 2);
      // It comes back: the right password is let in again.
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

  // CI at load 15 answered a right-password login 503: the API process, held off the CPU past
  // the 500 ms deadline, found its timer before Redis's answer waiting in the socket.
  it('an answer already waiting when a starved process wakes past its deadline still counts', async () => {
    const redis = createRedis(testEnv().redisUrl, 'flotilla-deadline-test');
    try {
      await redis.set('flotilla-deadline-test', 'answered');
      const answer = redisInTime(redis.get('flotilla-deadline-test'), 50);
      const until = Date.now() + 1000; // long past the deadline, and long enough for any Redis to answer
      while (Date.now() < until) {} // the process off the CPU, as a loaded machine holds it
      await expect(answer).resolves.toBe('answered');
      await expect(redisInTime(new Promise(() => {}), 50)).rejects.toThrow(RedisUnavailable);
    } finally {
      redis.disconnect();
    }
  });
});

describe('the owner is never locked out (review issue 13, finding 7)', () => {
  let stack: ReviewStack;
  beforeAll(async () => {
    stack = await ReviewStack.start({
      patch: (c) => {
        c.auth.login_throttle = {
          max_failures_per_user: 3,
          max_failures_per_client: 5,
          max_failures_per_user_global: 20,
          window_seconds: 60,
        };
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const login = (user: string, password: string, from: string, device?: string) =>
    stack.get('/auth/login', {
      headers: {
        authorization: basic(user, password),
        ...(device ? { cookie: `FLOTILLA_DEVICE=${device}` } : {}),
      },
      from,
    });

  function deviceOf(a: Reply): string {
    const c = a.cookies.find((x) => x.startsWith('FLOTILLA_DEVICE='));
    expect(c).toMatch(/; Path=\/auth; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
    return c!.split(';')[0]!.slice('FLOTILLA_DEVICE='.length);
  }

  describe('a guesser stops only themselves', () => {
    it("the review's case: ten wrong passwords from elsewhere, and the owner logs in", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await login('admin', 'wrong', '10.9.0.66')).status);
      expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
      expect(statuses.slice(3).every((s) => s === 429)).toBe(true);
      // The guesser's own address is held back, even with the right password...
      expect((await login('admin', PASSWORDS.admin, '10.9.0.66')).status).toBe(429);
      // ...the owner, elsewhere, is not.
      expect((await login('admin', PASSWORDS.admin, '10.9.0.5')).status).toBe(302);
    });
  });

  describe('guessing spread over many addresses', () => {
    it('is slowed for addresses that guessed; the owner gets in from a new address and from their own device', async () => {
      const before = await login('dev', PASSWORDS.dev, '10.9.1.5');
      expect(before.status).toBe(302);
      const device = deviceOf(before);
      const spread: number[] = [];
      for (let i = 10; i < 35; i++) spread.push((await login('dev', 'wrong', `10.9.1.${i}`)).status);
      // Each address guesses once: each gets its try (issue 34: a new address is never held
      // back by the others' failures; those that failed are, test "per user name from everywhere").
      expect(spread).toEqual(Array(25).fill(401));
      // Past the user's limit from everywhere: a new browser or script elsewhere gets in.
      expect((await login('dev', PASSWORDS.dev, '10.9.1.99')).status).toBe(302);
      // The owner, with the device cookie of an earlier login, from anywhere.
      expect((await login('dev', PASSWORDS.dev, '10.9.1.5', device)).status).toBe(302);
      expect((await login('dev', PASSWORDS.dev, '10.9.1.200', device)).status).toBe(302);
    });

    it('a device cookie counts only for its user, only as signed, and bounds guessing with it', async () => {
      const guest = await login('guest', PASSWORDS.guest, '10.9.2.5');
      const device = deviceOf(guest);
      const adminDevice = deviceOf(await login('admin', PASSWORDS.admin, '10.9.2.6'));
      // Guesses from two addresses, each past its own limit (3): both wait there.
      for (let i = 0; i < 4; i++) await login('guest', 'wrong', '10.9.2.7');
      for (let i = 0; i < 4; i++) await login('guest', 'wrong', '10.9.2.8');
      // Another user's cookie, or a tampered one, is no cookie: the address still waits.
      expect((await login('guest', PASSWORDS.guest, '10.9.2.7', adminDevice)).status).toBe(429);
      const [data, sig] = device.split('.') as [string, string];
      const tampered = `${data.slice(0, -2)}AA.${sig}`;
      expect((await login('guest', PASSWORDS.guest, '10.9.2.8', tampered)).status).toBe(429);
      // A stolen device cookie allows its device's share of guesses, no more.
      for (let i = 0; i < 3; i++)
        expect((await login('guest', 'wrong', '10.9.2.9', device)).status).toBe(401);
      expect((await login('guest', PASSWORDS.guest, '10.9.2.9', device)).status).toBe(429);
    });
  });
});

describe('ten wrong passwords lock nobody else out (issue 34, section 2, bug 3)', () => {
  // The defaults (services/api/http/logins.ts): 10 per user and address, 30 per address, 100
  // per user from everywhere, over 900 s.
  let app: AuthApp;
  beforeAll(async () => {
    app = await AuthApp.start({ auth: { users } }, { db });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('the right password from a new browser or a script elsewhere gets in, however long the guesser goes on', async () => {
    for (let i = 0; i < 10; i++)
      expect((await attempt(app, 'alice', 'wrong', '10.34.0.66')).status).toBe(401);
    // The guesser keeps at it, refused: that costs nobody but them.
    for (let i = 0; i < 100; i++)
      expect((await attempt(app, 'alice', 'wrong', '10.34.0.66')).status).toBe(429);
    // Neither a browser nor a script brings a device cookie here.
    const fresh = await attempt(app, 'alice', 'right', '10.34.0.5');
    expect(fresh.status).toBe(302);
    expect(fresh.cookies.some((c) => c.startsWith('FLOTILLA_DEVICE='))).toBe(true);
  });

  it("at the guesser's own address (npm start's login command, on the owner's machine) the 429 names a short wait", async () => {
    for (let i = 0; i < 10; i++) expect((await attempt(app, 'bob', 'wrong', '127.0.0.1')).status).toBe(401);
    const r = await attempt(app, 'bob', 'right', '127.0.0.1');
    // One attempt comes back every 900/10 s, not the whole window.
    const wait = expectThrottled(r, 90);
    expect(r.json().error).toMatch(new RegExp(`try again in ${wait} seconds?$`));
  });

  describe('npm run auth -- unblock', () => {
    const run = async (...argv: string[]) => {
      const lines: string[] = [];
      const code = await runAuthCommand(argv, {
        redis: app.redis,
        keyPrefix: app.keyPrefix,
        print: (l) => lines.push(l),
      });
      return { code, lines };
    };

    it("clears a user's throttle, at every address", async () => {
      for (const from of ['10.34.1.1', '10.34.1.2'])
        for (let i = 0; i < 10; i++) await attempt(app, 'alice', 'wrong', from);
      expectThrottled(await attempt(app, 'alice', 'right', '10.34.1.1'), 90);
      expectThrottled(await attempt(app, 'alice', 'right', '10.34.1.2'), 90);
      const { code, lines } = await run('unblock', 'alice');
      expect(code).toBe(0);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^user "alice": [1-9]\d* throttle bucket\(s\) cleared$/);
      expect((await attempt(app, 'alice', 'right', '10.34.1.1')).status).toBe(302);
      expect((await attempt(app, 'alice', 'right', '10.34.1.2')).status).toBe(302);
    });

    it("clears an address's throttle, for every user", async () => {
      for (let i = 0; i < 30; i++) await attempt(app, `nobody${i}`, 'wrong', '10.34.2.1');
      for (let i = 0; i < 10; i++) await attempt(app, 'bob', 'wrong', '10.34.2.1');
      expectThrottled(await attempt(app, 'bob', 'right', '10.34.2.1'), 90);
      const { code, lines } = await run('unblock', '10.34.2.1');
      expect(code).toBe(0);
      // Its own bucket, and each name's at it (30 names).
      expect(lines[1]).toBe('address 10.34.2.1: 31 throttle bucket(s) cleared');
      expect((await attempt(app, 'bob', 'right', '10.34.2.1')).status).toBe(302);
    });

    it('says how it is used when it is not', async () => {
      for (const argv of [[], ['unblock'], ['unblock', ''], ['unblock', 'a', 'b'], ['block', 'alice']])
        expect(await run(...argv)).toEqual({ code: 2, lines: [USAGE] });
    });
  });
});
