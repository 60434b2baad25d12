// GitHub deliveries already turned into changes, remembered for a day in Redis (every API pod
// sees the same): a signed delivery sent again, by the same X-GitHub-Delivery id or with the
// same signed body under another id (the signature covers only the body), makes no change
// the second time. (docs/security.md; test/api/hooks/github-replay.test.ts)
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { redisInTime } from '../auth/counters.js';

const DAY_S = 24 * 3600;
const TIMEOUT_MS = 1000;

export class Deliveries {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private keys(id: string | undefined, body: Buffer): string[] {
    const keys = [`${this.prefix}github-body:${createHash('sha256').update(body).digest('base64url')}`];
    if (id) keys.push(`${this.prefix}github-delivery:${createHash('sha256').update(id).digest('base64url')}`);
    return keys;
  }

  /**
   * Claims a delivery: true the first time it is seen, false for a replay. Throws
   * RedisUnavailable (the hook then refuses: a replay is never let through unchecked).
   */
  async claim(id: string | undefined, body: Buffer): Promise<boolean> {
    const keys = this.keys(id, body);
    const results = await redisInTime(
      Promise.all(keys.map((k) => this.redis.set(k, '1', 'EX', DAY_S, 'NX'))),
      TIMEOUT_MS,
    );
    if (results.every((r) => r === 'OK')) return true;
    // A part was new: forget it again, so that only what was seen stays remembered.
    await Promise.all(keys.filter((_, i) => results[i] === 'OK').map((k) => this.redis.del(k))).catch(
      () => {},
    );
    return false;
  }

  /** The changes of a claimed delivery could not be stored: it may come again. */
  async release(id: string | undefined, body: Buffer): Promise<void> {
    await this.redis.del(...this.keys(id, body)).catch(() => 0);
  }
}
