// Brute-force protection for logins: failed attempts counted in Redis (across API pods) per
// user name and per client, over a window. Past either limit, a login answers 429 before any
// password is checked, so guessing gains nothing, until the window ends. A successful login
// is not counted as a failure and clears its user name's count. If Redis does not answer, logins are
// refused (503): the throttle must not silently switch off.
import type { Redis } from 'ioredis';
import { keyPart, WindowCounter } from './counters.js';

export interface ThrottleSettings {
  maxFailuresPerUser: number;
  maxFailuresPerClient: number;
  windowSeconds: number;
  keyPrefix: string;
}

export type Verdict = { ok: true } | { ok: false; retryAfterSeconds: number };

export class LoginThrottle {
  private readonly counter: WindowCounter;

  constructor(
    redis: Redis,
    private readonly s: ThrottleSettings,
  ) {
    this.counter = new WindowCounter(redis, `${s.keyPrefix}login:`, s.windowSeconds * 1000);
  }

  private keys(client: string, username: string | null): [string, number][] {
    const k: [string, number][] = [[`c:${client}`, this.s.maxFailuresPerClient]];
    if (username !== null) k.push([`u:${keyPart(username)}`, this.s.maxFailuresPerUser]);
    return k;
  }

  /**
   * An attempt begins: it is counted now (so parallel guesses cannot slip past the limit
   * between check and count), and refused when a count is past its limit. Throws
   * RedisUnavailable.
   */
  async begin(client: string, username: string | null): Promise<Verdict> {
    const counts = await Promise.all(
      this.keys(client, username).map(async ([key, max]) => ({ max, ...(await this.counter.hit(key)) })),
    );
    const wait = Math.max(
      0,
      ...counts.filter((c) => c.count > c.max).map((c) => Math.ceil(c.resetMs / 1000)),
    );
    return wait > 0 ? { ok: false, retryAfterSeconds: Math.max(1, wait) } : { ok: true };
  }

  /** The attempt succeeded: it was no failure (the client's count) and the user's slate is clean. */
  async succeeded(client: string, username: string): Promise<void> {
    await Promise.all([this.counter.hit(`c:${client}`, -1), this.counter.reset(`u:${keyPart(username)}`)]);
  }
}
