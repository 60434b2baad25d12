// Counters over a time window, kept in Redis so every API pod sees the same counts: the
// first hit of a key starts its window (Redis expires the key when it ends), so no pod's
// clock matters. One Lua script per hit makes increment and expiry atomic. A Redis that
// does not answer within `timeoutMs` is an error the caller decides about (open or closed).
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { withinDeadline } from '../../core/lifecycle/within.js';

const HIT = `
local c = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {c, ttl}
`;

export interface Count {
  count: number;
  /** Milliseconds until the window ends (0 when the key does not exist). */
  resetMs: number;
}

type WithScripts = Redis & {
  flotillaWindowHit(key: string, windowMs: number, by: number): Promise<[number, number]>;
};

export class RedisUnavailable extends Error {
  override name = 'RedisUnavailable';
}

/** A Redis answer within `timeoutMs`; RedisUnavailable otherwise, or for any Redis error. */
export async function redisInTime<T>(p: Promise<T>, timeoutMs: number): Promise<T> {
  try {
    return await withinDeadline(p, timeoutMs, () => new RedisUnavailable('redis did not answer in time'));
  } catch (err) {
    if (err instanceof RedisUnavailable) throw err;
    throw new RedisUnavailable((err as Error).message);
  }
}

/** A short, safe key part for any string (user names can hold anything). */
export function keyPart(s: string): string {
  return createHash('sha256').update(s).digest('base64url').slice(0, 22);
}

export class WindowCounter {
  private readonly redis: WithScripts;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly windowMs: number,
    private readonly timeoutMs = 500,
  ) {
    const r = redis as WithScripts;
    if (typeof r.flotillaWindowHit !== 'function') {
      redis.defineCommand('flotillaWindowHit', { numberOfKeys: 1, lua: HIT });
    }
    this.redis = r;
  }

  private timed<T>(p: Promise<T>): Promise<T> {
    return redisInTime(p, this.timeoutMs);
  }

  async hit(key: string, by = 1): Promise<Count> {
    const [count, ttl] = await this.timed(this.redis.flotillaWindowHit(this.prefix + key, this.windowMs, by));
    return { count: Number(count), resetMs: Math.max(0, Number(ttl)) };
  }

  async reset(key: string): Promise<void> {
    await this.timed(this.redis.del(this.prefix + key));
  }
}
