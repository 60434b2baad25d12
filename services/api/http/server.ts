// The API pod's Fastify application. It holds no state of its own: everything comes from
// PostgreSQL and Redis, so any number of replicas can serve behind one ingress.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { ConnectionPool } from '../../core/db/pool.js';
import { postgresCheck, readiness, redisCheck } from '../../core/health.js';
import type { Logger } from '../../core/telemetry/logger.js';

export interface AppDeps {
  db: ConnectionPool;
  redis: Redis;
  log: Logger;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    disableRequestLogging: true,
    // Buildbot matches paths exactly: /api/v2/builds/ is not /api/v2/builds.
    ignoreTrailingSlash: false,
    bodyLimit: 1024 * 1024,
    maxParamLength: 1024,
  });
  const checks = [postgresCheck(deps.db), redisCheck(deps.redis)];

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const r = await readiness(checks);
    return reply.code(r.ready ? 200 : 503).send(r);
  });
  return app;
}
