// The API pod's Fastify application. It holds no state of its own: everything comes from
// PostgreSQL and Redis, so any number of replicas can serve behind one ingress.
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Redis } from 'ioredis';
import type { ConnectionPool } from '../../core/db/pool.js';
import { type ForceScheduler, forceSchedulerSpec } from '../../core/force/parameters.js';
import { postgresCheck, readiness, redisCheck } from '../../core/health.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { controlHandlers } from '../control/index.js';
import { eventsPlugin } from '../events/plugin.js';
import { pyErrorBody } from '../query/pyjson.js';
import { plainReader, ReadPool } from '../query/read-pool.js';
import { buildRegistry } from '../registry/index.js';
import { corsPolicy } from './cors.js';
import { jsonRpcHandler } from './jsonrpc.js';
import { LogReader } from './logs.js';
import { restHandler } from './rest.js';
import { loadSessionSecret, Sessions } from './session.js';
import { SessionCookies } from './session-cookies.js';

export interface AppDeps {
  db: ConnectionPool;
  redis: Redis;
  log: Logger;
  publicUrl: string;
  /** Force schedulers of the master configuration. */
  forceSchedulers?: readonly ForceScheduler[];
  allowedOrigins?: readonly string[];
  bodyLimit?: number;
  /** Reads go through their own connections with prepared statements (query/read-pool.ts). */
  databaseUrl?: string;
}

const API_METHODS = ['GET', 'HEAD', 'POST', 'OPTIONS', 'PUT', 'DELETE', 'PATCH'] as const;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Buildbot matches paths exactly: /api/v2/builds/ is not /api/v2/builds.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 4096 },
    bodyLimit: deps.bodyLimit ?? 1024 * 1024,
    // A URL that cannot be decoded names nothing: Buildbot's plain 404, not Fastify's JSON.
    frameworkErrors: (err, _req, res) => {
      const reply = res as unknown as FastifyReply;
      if ((err as { code?: string }).code === 'FST_ERR_BAD_URL') {
        reply.code(404).type('text/plain; charset=utf-8').send('not found');
        return;
      }
      const status = (err as { statusCode?: number }).statusCode ?? 400;
      reply.code(status).type('text/plain; charset=utf-8').send(pyErrorBody(err.message));
    },
    return503OnClosing: true,
  });
  const checks = [postgresCheck(deps.db), redisCheck(deps.redis)];
  const forceSchedulers = deps.forceSchedulers ?? [];
  const registry = buildRegistry(forceSchedulers.map(forceSchedulerSpec));
  const readPool = deps.databaseUrl ? new ReadPool(deps.databaseUrl) : null;
  const reads = readPool ?? plainReader(deps.db);

  // The session secret lives in the database, which may come up after us: read it on first use.
  let sessions: Sessions | null = null;
  app.addHook('onRequest', async () => {
    sessions ??= new Sessions(await loadSessionSecret(deps.db));
  });
  const secure = new URL(deps.publicUrl).protocol === 'https:';
  const cookies = new SessionCookies(() => sessions!, secure);

  // JSON-RPC bodies are decoded by the API itself, with Buildbot's error messages.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.setErrorHandler((err: Error & { statusCode?: number }, req: FastifyRequest, reply: FastifyReply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err, url: req.raw.url }, 'request failed');
    const message = status === 500 ? 'internal error' : err.message;
    return reply.code(status).type('text/plain; charset=utf-8').send(pyErrorBody(message));
  });
  app.setNotFoundHandler((_req, reply) =>
    reply.code(404).type('text/plain; charset=utf-8').send('not found'),
  );

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const r = await readiness(checks);
    return reply.code(r.ready ? 200 : 503).send(r);
  });

  const base = new URL(deps.publicUrl);
  app.get('/api', async (_req, reply) =>
    reply
      .type('application/json')
      .send(JSON.stringify({ api_versions: { v2: new URL('api/v2', base).toString() } })),
  );

  const rest = restHandler({
    reads,
    registry: () => registry,
    cors: corsPolicy(deps.publicUrl, deps.allowedOrigins),
    sessions: cookies,
    logs: new LogReader(reads, deps.db, deps.redis),
    jsonRpc: jsonRpcHandler(
      controlHandlers({
        db: deps.db,
        redis: deps.redis,
        forceSchedulers: new Map(forceSchedulers.map((f) => [f.name, f])),
        onPublishError: (err) => deps.log.warn({ err: err.message }, 'events not published'),
      }),
    ),
    log: deps.log,
  });
  app.addHook('onClose', async () => readPool?.end());
  app.route({ method: [...API_METHODS], url: '/api/v2', handler: rest });
  app.route({ method: [...API_METHODS], url: '/api/v2/*', handler: rest });
  await app.register(eventsPlugin, { redis: deps.redis });
  return app;
}
