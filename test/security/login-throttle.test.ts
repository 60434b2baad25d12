// Finding 7 (medium): throttling must not lock the owner out. Ten wrong passwords from
// anywhere gave the real user 429 for 15 minutes, with the right password. Now failures are
// counted per user and client address together (and per address), so a guesser stops only
// themselves; and per user from everywhere, with a higher limit, which holds back only
// clients without a device cookie from an earlier login of that user: guessing spread over
// many addresses is slowed, and the owner still gets in from a device they used before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, PASSWORDS, type Reply, ReviewStack } from './lib.js';

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
  it('is slowed for clients the user never logged in from; the owner gets in from their own device', async () => {
    const before = await login('dev', PASSWORDS.dev, '10.9.1.5');
    expect(before.status).toBe(302);
    const device = deviceOf(before);
    const spread: number[] = [];
    for (let i = 10; i < 35; i++) spread.push((await login('dev', 'wrong', `10.9.1.${i}`)).status);
    expect(spread).toEqual([...Array(20).fill(401), ...Array(5).fill(429)]);
    // Past the user's limit from everywhere: an unknown client waits, right password or not.
    const stranger = await login('dev', PASSWORDS.dev, '10.9.1.99');
    expect(stranger.status).toBe(429);
    expect(Number(stranger.headers['retry-after'])).toBeGreaterThan(0);
    // The owner, with the device cookie of an earlier login, from anywhere.
    expect((await login('dev', PASSWORDS.dev, '10.9.1.5', device)).status).toBe(302);
    expect((await login('dev', PASSWORDS.dev, '10.9.1.200', device)).status).toBe(302);
  });

  it('a device cookie counts only for its user, only as signed, and bounds guessing with it', async () => {
    const guest = await login('guest', PASSWORDS.guest, '10.9.2.5');
    const device = deviceOf(guest);
    for (let i = 10; i < 35; i++) await login('guest', 'wrong', `10.9.2.${i}`);
    // Another user's cookie, or a tampered one, is no cookie.
    const adminDevice = deviceOf(await login('admin', PASSWORDS.admin, '10.9.2.6'));
    expect((await login('guest', PASSWORDS.guest, '10.9.2.7', adminDevice)).status).toBe(429);
    const [data, sig] = device.split('.') as [string, string];
    const tampered = `${data.slice(0, -2)}AA.${sig}`;
    expect((await login('guest', PASSWORDS.guest, '10.9.2.8', tampered)).status).toBe(429);
    // A stolen device cookie allows its device's share of guesses, no more.
    for (let i = 0; i < 3; i++) expect((await login('guest', 'wrong', '10.9.2.9', device)).status).toBe(401);
    expect((await login('guest', PASSWORDS.guest, '10.9.2.9', device)).status).toBe(429);
  });
});
