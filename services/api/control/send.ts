// Control messages (a build's stop, a worker's stop, pause, unpause or kill) travel on the
// event bus to the master that acts on them. While Redis is away nothing can carry them, so
// the action is refused with 503 and Retry-After: not answered 200 and silently dropped, and
// not a 500 (what the bus's own error became before).
import type { Redis } from 'ioredis';
import { publish, type RoutingKey } from '../../core/events/bus.js';
import { RedisUnavailable, redisInTime } from '../auth/counters.js';
import { controlUnavailable } from '../errors/catalogue.js';

// Longer than a Sentinel failover here (3.5 s, load/results/sentinel-failover.md), so that a stop
// sent during one waits in the client's queue and goes through; a Redis that is really gone fails
// sooner, when the client gives the command up (services/core/redis.ts).
const SEND_TIMEOUT_MS = 5_000;

export async function sendControl(redis: Redis, key: RoutingKey, message: unknown): Promise<void> {
  try {
    await redisInTime(publish(redis, key, message), SEND_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof RedisUnavailable) throw controlUnavailable();
    throw err;
  }
}
