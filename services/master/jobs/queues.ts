// The background queues every master shares through Redis (BullMQ): their names, the key
// prefix, and how their connections behave.
//
// Connections: BullMQ opens and closes its own (a Queue one, a Worker two: commands and the
// blocking fetch), built for the same Redis (URL or Sentinel) the rest of the master uses, so stop() can close
// every one of them and never touches the master's own Redis client.
// - a Worker's connections retry each command forever (maxRetriesPerRequest: null, which
//   BullMQ requires of its blocking connection): a Redis restart pauses the jobs, nothing else;
// - a Queue's (the producer's) give up after a few retries, like services/core/redis.ts, so
//   queueing a job while Redis is away fails in bounded time instead of holding up the build
//   that finished the log. Losing such a job loses no data: the log stays readable, only larger.
import type { ConnectionOptions, JobSchedulerTemplateOptions } from 'bullmq';
import { type RedisTarget, redisConnectionOptions, retryStrategy } from '../../core/redis.js';

export type { RedisTarget };

export const QUEUES = {
  compressLog: 'compress-log',
  expireMasters: 'expire-masters',
  retention: 'retention',
  moveLog: 'move-log',
  moveArtifact: 'move-artifact',
  objectBackfill: 'object-backfill',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * The runs of a job a cluster schedules once (expire-masters, retention, object-backfill): not
 * retried (the next period runs again), and the runs of the past kept in Redis are a few
 * completed ones and enough failed ones to see a pattern.
 */
export const SCHEDULED_RUN_OPTIONS: JobSchedulerTemplateOptions = {
  attempts: 1,
  removeOnComplete: { count: 10 },
  removeOnFail: { count: 100 },
};

/** Every key of the queues starts with it; tests use their own so they share one Redis. */
export const DEFAULT_PREFIX = 'flotilla:jobs';

// The address (URL or Sentinel) and its failover handling come from core/redis.ts, as for
// every other Redis client of Flotilla; only the retry policy is the queues' own.
export function producerConnection(target: RedisTarget, name: string): ConnectionOptions {
  return redisConnectionOptions(target, { connectionName: name, maxRetriesPerRequest: 3, retryStrategy });
}

export function consumerConnection(target: RedisTarget, name: string): ConnectionOptions {
  return redisConnectionOptions(target, { connectionName: name, maxRetriesPerRequest: null, retryStrategy });
}
