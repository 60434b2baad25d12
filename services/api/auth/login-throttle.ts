// Brute-force protection for logins that an attacker cannot turn into the owner's lockout.
// Failed attempts draw on token buckets in Redis (login-buckets.ts: a burst of `cap`, then one
// attempt per window/cap), shared by every API pod:
// - per user name and client address together (max_failures_per_user): guessing one user's
//   password from one place is slowed there, and nowhere else;
// - per client address, whatever names it tries (max_failures_per_client);
// - per user name from everywhere (max_failures_per_user_global), for guessing spread over
//   many addresses. It never holds back an address that has not failed for that user: the
//   owner's new browser or script, elsewhere, gets in with the right password whatever the
//   guessers do. Once it is empty, an address that has failed for the user gets no burst:
//   one attempt per window/max_failures_per_user.
// - A client with a device cookie for the user (device-cookies.ts) is counted per device
//   instead, with max_failures_per_user: the owner's own browser gets in from anywhere, even
//   from an address that guessers share.
// Past a limit a login answers 429 before any password is checked, with the wait (at most
// window/cap, 90 s by default, never the whole window). A refused attempt is not counted:
// hammering a refused login fills no bucket but the one already empty. A success gives its
// attempt back and fills its user's bucket at that address or device. If Redis does not
// answer, logins are refused (503): the throttle must not silently switch off. An operator
// fills a user's or an address's buckets with `npm run auth -- unblock` (login-unblock.ts).
// (docs/security.md, "Login throttling"; test/api/auth/login-throttle.test.ts)
import type { Redis } from 'ioredis';
import { keyPart } from './counters.js';
import { type Bucket, LoginBuckets } from './login-buckets.js';

export interface ThrottleSettings {
  /** Failures per user name from one client address (or one device), per window. */
  maxFailuresPerUser: number;
  maxFailuresPerClient: number;
  /** Failures per user name from every client without a device cookie for it, per window. */
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

/**
 * The buckets' Redis keys, under `<prefix>lb:` (not the `login:` of the counters before
 * them, whose string values a bucket's script could not read). User names, addresses and
 * devices are hashed (keyPart): any string is a safe key, and a user's or an address's keys
 * can be found by pattern (login-unblock.ts).
 */
export class LoginKeys {
  readonly base: string;
  constructor(keyPrefix: string) {
    this.base = `${keyPrefix}lb:`;
  }
  user(username: string): string {
    return `${this.base}u:${keyPart(username)}`;
  }
  userAt(username: string, client: string): string {
    return `${this.base}uc:${keyPart(username)}:${keyPart(client)}`;
  }
  device(username: string, device: string): string {
    return `${this.base}d:${keyPart(username)}:${keyPart(device)}`;
  }
  client(client: string): string {
    return `${this.base}c:${keyPart(client)}`;
  }
}

export class LoginThrottle {
  private readonly buckets: LoginBuckets;
  private readonly keys: LoginKeys;

  constructor(
    redis: Redis,
    private readonly s: ThrottleSettings,
  ) {
    this.buckets = new LoginBuckets(redis, s.windowSeconds * 1000);
    this.keys = new LoginKeys(s.keyPrefix);
  }

  /** The attempt's buckets; with a user and no device, [client, user at client, user]. */
  private bucketsOf(a: Attempt): Bucket[] {
    if (a.username !== null && a.device !== null)
      return [{ key: this.keys.device(a.username, a.device), cap: this.s.maxFailuresPerUser }];
    const b: Bucket[] = [{ key: this.keys.client(a.client), cap: this.s.maxFailuresPerClient }];
    if (a.username !== null) {
      b.push({ key: this.keys.userAt(a.username, a.client), cap: this.s.maxFailuresPerUser });
      b.push({ key: this.keys.user(a.username), cap: this.s.maxFailuresPerUserGlobal });
    }
    return b;
  }

  /**
   * An attempt begins: it takes its attempt from its buckets now (so parallel guesses cannot
   * slip past a limit between check and count), or is refused with the wait. Throws
   * RedisUnavailable.
   */
  async begin(a: Attempt): Promise<Verdict> {
    const b = this.bucketsOf(a);
    const rule = b.length === 3 ? { everywhere: 2, pair: 1 } : undefined;
    const waitMs = await this.buckets.take(b, rule);
    return waitMs > 0
      ? { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) }
      : { ok: true };
  }

  /** The attempt (as it began) succeeded: it was no failure, and its user's slate there is clean. */
  async succeeded(a: Attempt): Promise<void> {
    const [first, userAt, user] = this.bucketsOf(a);
    // With a device, its bucket is the only one; without a user name, the client's.
    if (userAt === undefined || user === undefined) {
      if (a.device !== null) return this.buckets.fill([first!.key]);
      return this.buckets.give([first!]);
    }
    await Promise.all([this.buckets.fill([userAt.key]), this.buckets.give([first!, user])]);
  }
}
