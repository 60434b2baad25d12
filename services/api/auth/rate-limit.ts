// Per-client rate limiting across API pods: each request counts against its client's window
// in Redis; answers carry the IETF draft's RateLimit-Limit, -Remaining, -Reset and -Policy
// headers, and a client past its limit gets 429 with Retry-After. If Redis does not answer
// in time the request goes through (a limit is not worth an outage) and a warning is logged.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { PLATFORM_PATHS } from '../../core/http/platform-paths.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { tooManyRequests } from '../errors/catalogue.js';
import { sendError } from '../errors/reply.js';
import { clientKey } from './client.js';
import { RedisUnavailable, WindowCounter } from './counters.js';

export interface RateLimitSettings {
  requests: number;
  windowSeconds: number;
  /** Redis key prefix (tests give each app its own). */
  keyPrefix: string;
}

export function rateLimitHook(redis: Redis, s: RateLimitSettings, log: Logger) {
  const counter = new WindowCounter(redis, `${s.keyPrefix}rl:`, s.windowSeconds * 1000);
  const policy = `${s.requests};w=${s.windowSeconds}`;
  let warnedAt = 0;
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const path = (req.raw.url ?? '').split('?')[0]!;
    if (PLATFORM_PATHS.has(path)) return;
    let count: number;
    let resetMs: number;
    try {
      ({ count, resetMs } = await counter.hit(clientKey(req)));
    } catch (err) {
      if (!(err instanceof RedisUnavailable)) throw err;
      if (Date.now() - warnedAt > 10_000) {
        warnedAt = Date.now();
        log.warn({ err: err.message }, 'rate limit not applied: redis unavailable');
      }
      return;
    }
    const reset = Math.max(1, Math.ceil(resetMs / 1000));
    reply
      .header('ratelimit-limit', String(s.requests))
      .header('ratelimit-remaining', String(Math.max(0, s.requests - count)))
      .header('ratelimit-reset', String(reset))
      .header('ratelimit-policy', policy);
    if (count > s.requests) {
      reply.header('retry-after', String(reset));
      sendError(req, reply, tooManyRequests());
      return reply;
    }
  };
}
