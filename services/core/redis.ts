// Redis connections. Commands wait while Redis is away instead of failing at once, with a
// bounded queue time, so a short Redis restart costs liveness, never correctness.
import { Redis } from 'ioredis';

export type { Redis };

export function createRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    lazyConnect: false,
    maxRetriesPerRequest: 3,
    enableOfflineQueue: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}
