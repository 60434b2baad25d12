// Redis connections: the one place every Flotilla client of Redis is built, from one
// address that is either a URL (one server: REDIS_URL) or a Redis Sentinel deployment
// (REDIS_SENTINELS + REDIS_SENTINEL_NAME), so that api and master pods follow a failover
// without any of their uses knowing which it is.
//
// Commands wait while Redis is away instead of failing at once, with a bounded queue time,
// so a short Redis restart (or a failover) costs liveness, never correctness.
//
// Under Sentinel, ioredis asks the sentinels for the primary of the named set before each
// connection, and checks with ROLE that the server it reached is the primary; a lost
// connection (the primary died) is opened again the same way, so it lands on the replica
// the sentinels promoted. A READONLY reply (a write to an old primary that the sentinels
// demoted to replica while it stayed reachable) reconnects and resends the command, as
// ioredis's own documentation advises for Sentinel.
//
// ioredis's failoverDetector (reconnect on the sentinels' +switch-master) is left off: in
// ioredis 5.11 a switch that arrives while the client is already reconnecting (the primary
// was killed) makes the connector give up, and the client ends for good ("Connection is
// closed" on every later command). It did so in 1 of 3 runs of test/core/redis-sentinel.test.ts.
// Without it, a subscriber left on a demoted but reachable old primary hears nothing until
// that connection breaks; docs/scaling.md says so.
// Every use of Redis in Flotilla works with one primary (see docs/scaling.md, "Redis"):
// streams, Lua scripts over several keys, pub/sub, BullMQ's queues; none needs Redis Cluster.
import { Redis, type RedisOptions } from 'ioredis';

export type { Redis };

export interface SentinelAddress {
  host: string;
  port: number;
}

/** A Redis Sentinel deployment: where its sentinels are and the name they know the primary by. */
export interface SentinelTarget {
  /** Any one of them that answers is enough; ioredis tries them in turn. */
  sentinels: SentinelAddress[];
  /** The master name the sentinels monitor (`sentinel monitor <name> ...`). */
  masterName: string;
  /** AUTH of the Redis servers (primary and replicas), when they require one. */
  password?: string;
  /** AUTH of the sentinels themselves (their requirepass), when they require one. */
  sentinelPassword?: string;
}

/** Where Redis is: a redis:// or rediss:// URL (one server), or a Sentinel deployment. */
export type RedisTarget = string | SentinelTarget;

// Reconnecting: 200 ms more after each failed try, never more than 2 s apart.
const RETRY_STEP_MS = 200;
const RETRY_MAX_MS = 2000;
export const retryStrategy = (times: number): number => Math.min(times * RETRY_STEP_MS, RETRY_MAX_MS);

/** How Flotilla's connections behave, whatever the target. */
const BEHAVIOUR: RedisOptions = {
  lazyConnect: false,
  maxRetriesPerRequest: 3,
  enableOfflineQueue: true,
  retryStrategy,
};

function sentinelOptions(t: SentinelTarget): RedisOptions {
  return {
    sentinels: t.sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: t.masterName,
    role: 'master',
    ...(t.password ? { password: t.password } : {}),
    ...(t.sentinelPassword ? { sentinelPassword: t.sentinelPassword } : {}),
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
  };
}

/**
 * The options a library that opens its own connections (BullMQ) is given for `target`:
 * ioredis options, with a URL under `url` as BullMQ takes it, and `overrides` (the
 * connection's own name and retry policy).
 */
export function redisConnectionOptions(
  target: RedisTarget,
  overrides: RedisOptions = {},
): RedisOptions & { url?: string } {
  const where = typeof target === 'string' ? { url: target } : sentinelOptions(target);
  return { ...where, ...overrides };
}

/** A Redis client for `target`; `name` is its CLIENT SETNAME, seen in CLIENT LIST. */
export function createRedis(target: RedisTarget, name: string): Redis {
  const { url, ...options } = redisConnectionOptions(target, { ...BEHAVIOUR, connectionName: name });
  return url ? new Redis(url, options) : new Redis(options);
}

/** Parse REDIS_SENTINELS: `host:port` separated by commas ([v6]:port for IPv6); the errors found. */
export function parseSentinelList(text: string): { sentinels: SentinelAddress[]; problems: string[] } {
  const sentinels: SentinelAddress[] = [];
  const problems: string[] = [];
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (!item) continue;
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(item);
    const port = m ? Number(m[3]) : Number.NaN;
    if (!m || port < 1 || port > 65535) {
      problems.push(`expected host:port, got ${JSON.stringify(item)}`);
      continue;
    }
    sentinels.push({ host: (m[1] ?? m[2])!, port });
  }
  if (sentinels.length === 0 && problems.length === 0) problems.push('expected at least one host:port');
  return { sentinels, problems };
}
