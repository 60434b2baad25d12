// Brute-force protection for logins that an attacker cannot turn into the owner's lockout.
// Failed attempts are counted in Redis (across API pods), over a window:
// - per user name and client address together: guessing one user's password from one place
//   is stopped there (max_failures_per_user), and nowhere else;
// - per client address, whatever names it tries (max_failures_per_client);
// - per user name from everywhere, with a higher limit (max_failures_per_user_global): the
//   slower brake on guessing spread over many addresses. It holds back only clients without
//   a device cookie for that user (device-cookies.ts): the owner, coming back from a device
//   they logged in from before, is counted per device instead, and gets in.
// Past a limit a login answers 429 before any password is checked, so guessing gains
// nothing, until the window ends. A success takes its attempt back and clears its user's
// count at that address or device. If Redis does not answer, logins are refused (503): the
// throttle must not silently switch off. (docs/security.md; test/api/auth/login-throttle.test.ts)
import type { Redis } from 'ioredis';
import { keyPart, WindowCounter } from './counters.js';

export interface ThrottleSettings {
  /** Failures per user name from one client address (or one device). */
  maxFailuresPerUser: number;
  maxFailuresPerClient: number;
  /** Failures per user name from every client without a device cookie for it. */
  maxFailuresPerUserGlobal: number;
  windowSeconds: number;
  keyPrefix: string;
}

export type Verdict = { ok: true } | { ok: false; retryAfterSeconds: number };

/** Who is trying: where from, as whom (null: no name could be read), with which device cookie. */
export interface Attempt {
  client: string;
  username: string | null;
  /** The device id of a valid device cookie given to this user; null without one. */
  device: string | null;
}

export class LoginThrottle {
  private readonly counter: WindowCounter;

  constructor(
    redis: Redis,
    private readonly s: ThrottleSettings,
  ) {
    this.counter = new WindowCounter(redis, `${s.keyPrefix}login:`, s.windowSeconds * 1000);
  }

  private keys(a: Attempt): [string, number][] {
    if (a.username !== null && a.device !== null)
      return [[`d:${keyPart(a.device)}`, this.s.maxFailuresPerUser]];
    const k: [string, number][] = [[`c:${a.client}`, this.s.maxFailuresPerClient]];
    if (a.username !== null) {
      const user = keyPart(a.username);
      k.push([`uc:${user}:${keyPart(a.client)}`, this.s.maxFailuresPerUser]);
      k.push([`u:${user}`, this.s.maxFailuresPerUserGlobal]);
    }
    return k;
  }

  /**
   * An attempt begins: it is counted now (so parallel guesses cannot slip past a limit
   * between check and count), and refused when a count is past its limit. Throws
   * RedisUnavailable.
   */
  async begin(a: Attempt): Promise<Verdict> {
    const counts = await Promise.all(
      this.keys(a).map(async ([key, max]) => ({ max, ...(await this.counter.hit(key)) })),
    );
    let wait = 0;
    for (const c of counts) if (c.count > c.max) wait = Math.max(wait, Math.ceil(c.resetMs / 1000));
    return wait > 0 ? { ok: false, retryAfterSeconds: Math.max(1, wait) } : { ok: true };
  }

  /** The attempt succeeded: it was no failure, and its user's slate there is clean. */
  async succeeded(a: Attempt & { username: string }): Promise<void> {
    const keys = this.keys(a).map(([key]) => key);
    await Promise.all(
      keys.map((key) =>
        key.startsWith('uc:') || key.startsWith('d:') ? this.counter.reset(key) : this.counter.hit(key, -1),
      ),
    );
  }
}
