// What an operator runs when a user or an address waits on the login throttle and should not
// (`npm run auth -- unblock <user|address>`, services/api/auth-cli.ts): their buckets are
// deleted, which is a full bucket, on every API pod at once. A user's: from everywhere, at
// every address and every device. An address's: its own, and every user's at it.
import { isIP } from 'node:net';
import type { Redis } from 'ioredis';
import { addressKey } from './client.js';
import { keyPart, redisInTime } from './counters.js';
import { LoginKeys } from './login-throttle.js';

const TIMEOUT_MS = 5000;

export interface Unblocked {
  /** Buckets of the user of that name that were cleared. */
  user: number;
  /** Buckets of the address that were cleared; null: the name is no address. */
  address: number | null;
}

/** Glob characters in a key prefix are matched as themselves. */
function literal(s: string): string {
  return s.replace(/[*?[\]\\]/g, '\\$&');
}

async function keysMatching(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redisInTime(redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000), TIMEOUT_MS);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

async function remove(redis: Redis, keys: string[]): Promise<number> {
  return keys.length === 0 ? 0 : redisInTime(redis.del(...keys), TIMEOUT_MS);
}

/**
 * Clears the throttle of the user named `who` and, when `who` is an IP address, of that
 * address (IPv6: its /64). Throws RedisUnavailable.
 */
export async function unblockLogins(redis: Redis, keyPrefix: string, who: string): Promise<Unblocked> {
  const keys = new LoginKeys(keyPrefix);
  const base = literal(keys.base);
  const u = keyPart(who);
  const user = await remove(redis, [
    keys.user(who),
    ...(await keysMatching(redis, `${base}uc:${u}:*`)),
    ...(await keysMatching(redis, `${base}d:${u}:*`)),
  ]);
  if (isIP(who) === 0) return { user, address: null };
  const client = addressKey(who);
  const address = await remove(redis, [
    keys.client(client),
    ...(await keysMatching(redis, `${base}uc:*:${keyPart(client)}`)),
  ]);
  return { user, address };
}
