// The API pod's Fastify application. It holds no state of its own: everything comes from
// PostgreSQL and Redis, so any number of replicas can serve behind one ingress.
//
// Every request, in order: size limits (headers by Node's parser: 431; URL: 414; body: 413),
// the session (its user known from the cookie), the per-client rate limit (429), then the
// route: /api/v2 (authorized per endpoint and action, 403), /auth/*, /config, probes.
//
// buildApp is the list of the pod's parts (core/lifecycle/parts.ts), in the order they start:
// what opens connections or files has a stop, and the app's close stops them all in reverse.
// A part that fails to start stops those before it, so a failed build leaves nothing open.

import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { AuthConfig, WwwConfig } from '../../core/config/master-config.js';
import { type ConfigVersion, configMetrics } from '../../core/config/version.js';
import type { ConnectionPool, Queryable } from '../../core/db/pool.js';
import { collectEventMetrics } from '../../core/events/metrics.js';
import { type ForceScheduler, forceSchedulerSpec } from '../../core/force/parameters.js';
import { postgresCheck, redisCheck, schemaCheck } from '../../core/health.js';
import { Parts } from '../../core/lifecycle/parts.js';
import type { ObjectStore } from '../../core/objstore/client.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { clientKey } from '../auth/client.js';
import { rateLimitHook } from '../auth/rate-limit.js';
import { authRoutes } from '../auth/routes.js';
import { runtimeVersions } from '../auth/runtime-versions.js';
import { plainReader, type RowReader } from '../db-routing/read-pool.js';
import type { ReplicaSettings } from '../db-routing/replicas.js';
import type { EventHub } from '../events/hub.js';
import { eventsPlugin } from '../events/plugin.js';
import { buildRegistry } from '../registry/index.js';
import { securityHeaders } from '../reply/security-headers.js';
import { apiRoutes } from './api-routes.js';
import { corsPolicy, originAllowed } from './cors.js';
import { createFastify } from './fastify-app.js';
import { loginsOf } from './logins.js';
import { ApiMetrics } from './metrics.js';
import { probeRoutes } from './probes.js';
import { pageCacheOf, rawLogCachePart, readPoolPart, replicasPart, writeNoticesPart } from './read-parts.js';
import { REDIS_KEY_PREFIX } from './redis-prefix.js';
import { requestSessions } from './request-sessions.js';
import { type WebUiFiles, webUiRoutes } from './web-ui.js';

export interface AppDeps {
  db: ConnectionPool;
  /** What the readiness checks query PostgreSQL through (core/health.ts probeDatabase); absent: `db`. */
  probeDb?: Queryable;
  redis: Redis;
  log: Logger;
  publicUrl: string;
  /** Force schedulers of the master configuration. */
  forceSchedulers?: readonly ForceScheduler[];
  allowedOrigins?: readonly string[];
  bodyLimit?: number;
  /** Reads go through their own connections with prepared statements (query/read-pool.ts). */
  databaseUrl?: string;
  /** The configuration's auth section; without users or oidc (or absent) nobody logs in. */
  auth?: AuthConfig;
  /**
   * The configuration's www section (CORS, proxies, rate limit, size limits). Absent: the
   * default limits and no rate limit (main.ts always passes the configuration's, whose rate
   * limit is on by default).
   */
  www?: WwwConfig;
  /** The configuration's title, for /config. */
  title?: string;
  /** Prefix of the Redis keys of rate limits and login throttling (tests use their own). */
  redisKeyPrefix?: string;
  /** SESSION_SECRET (see loadSessionSecret); absent: object_state's, as Buildbot. */
  sessionSecret?: string;
  /** The built web UI (web-ui.ts's loadWebUi), served at `/`; absent: no UI, `/` is a 404. */
  webUi?: WebUiFiles | null;
  /** Streaming replicas the REST API reads from (query/replicas.ts); absent or none: the primary. */
  readReplicas?: ReplicaSettings;
  /** Which configuration the pod runs (core/config/version.ts); absent: none. */
  configVersion?: ConfigVersion;
  /** Where moved logs are read from (the configuration's object_store); absent: none. */
  objectStore?: ObjectStore | null;
  /**
   * Bytes of moved logs' spans this pod keeps for line-range reads (read/object-spans.ts);
   * absent: its default. 0 keeps none: every range read is a first read (the benchmark's).
   */
  objectSpansBytes?: number;
  /**
   * The process is stopping: /readyz answers 503 while the last requests are answered. The
   * application's own close says so too, but it closes only once they are (service.ts).
   */
  stopping?: () => boolean;
  /** Tests only: the build fails right after the part of this name started (core/lifecycle/parts.ts). */
  failAt?: string;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { app, limits } = createFastify(deps);
  const parts = new Parts({ log: deps.log, failAt: deps.failAt });
  // The app's close (SIGTERM, a test) stops the parts, after the last request has been answered.
  app.addHook('onClose', () => parts.stop());
  const forceSchedulers = deps.forceSchedulers ?? [];
  const forceByName = new Map(forceSchedulers.map((f) => [f.name, f]));
  const keyPrefix = deps.redisKeyPrefix ?? REDIS_KEY_PREFIX;
  const www = deps.www;

  // The read path (read-parts.ts).
  const readPool = await parts.start(readPoolPart(deps.databaseUrl));
  // The primary's read path: what control actions read, and where the REST API's reads go
  // when no replica may take them.
  const primaryReads = readPool ?? plainReader(deps.db);
  const router = await parts.start(
    replicasPart({ settings: deps.readReplicas, db: deps.db, primaryReads, log: deps.log }),
  );
  const reads: RowReader = router ?? primaryReads;
  const notices = await parts.start(
    writeNoticesPart({ config: www?.page_cache, databaseUrl: deps.databaseUrl, router, log: deps.log }),
  );
  const pages = pageCacheOf({ config: www?.page_cache, primaryReads, notices, router });
  const rawLogs = await parts.start(rawLogCachePart(www?.raw_log_cache, deps.log));

  // What every request goes through, in this order (hooks run in the order they are added).
  const metrics = new ApiMetrics();
  collectEventMetrics(metrics.registry, deps.redis);
  metrics.install(app);
  const version = deps.configVersion;
  if (version) configMetrics(metrics.registry, () => version);
  securityHeaders(app);
  const logins = loginsOf({
    auth: deps.auth,
    db: deps.db,
    redis: deps.redis,
    forceByName,
    keyPrefix,
    log: deps.log,
    publicUrl: deps.publicUrl,
  });
  const sessions = await parts.start({
    name: 'sessions',
    start: () =>
      requestSessions(app, {
        db: deps.db,
        redis: deps.redis,
        log: deps.log,
        publicUrl: deps.publicUrl,
        sessionSecret: deps.sessionSecret,
        auth: deps.auth,
        users: logins.users,
        keyPrefix,
        urlBytes: limits.url_bytes,
      }),
  });
  const rl = www?.rate_limit;
  if (rl?.enabled) {
    const settings = { requests: rl.requests, windowSeconds: rl.window_seconds, keyPrefix };
    app.addHook('onRequest', rateLimitHook(deps.redis, settings, deps.log));
  }

  // The routes.
  await parts.start({
    name: 'probes',
    start: () =>
      probeRoutes(app, {
        checks: [
          postgresCheck(deps.probeDb ?? deps.db),
          schemaCheck(deps.probeDb ?? deps.db),
          redisCheck(deps.redis),
        ],
        router,
        metrics: () => metrics.render(),
        config: version ?? null,
        stopping: deps.stopping,
      }),
  });
  await parts.start({
    name: 'auth routes',
    start: () =>
      authRoutes(app, {
        publicUrl: deps.publicUrl,
        title: deps.title ?? 'Flotilla',
        cookies: sessions.cookies,
        users: logins.users,
        tokens: logins.tokens,
        remoteUser: logins.remoteUser,
        oauth2: logins.oauth2,
        throttle: logins.throttle,
        devices: sessions.devices,
        log: deps.log,
        authz: logins.authz,
        versions: runtimeVersions(deps.db, deps.log),
      }),
  });
  const cors = corsPolicy(deps.publicUrl, deps.allowedOrigins ?? www?.allowed_origins);
  await parts.start({
    name: 'api routes',
    start: () =>
      apiRoutes(app, {
        publicUrl: deps.publicUrl,
        db: deps.db,
        redis: deps.redis,
        log: deps.log,
        registry: buildRegistry(forceSchedulers.map(forceSchedulerSpec)),
        reads,
        primaryReads,
        router,
        pages,
        rawLogs,
        objectStore: deps.objectStore ?? null,
        objectSpansBytes: deps.objectSpansBytes,
        cors,
        cookies: sessions.cookies,
        secure: sessions.secure,
        authz: logins.authz,
        forceByName,
        users: logins.users,
      }),
  });
  if (deps.webUi) webUiRoutes(app, deps.webUi);
  // /ws and /sse, after the hooks above (a plugin's routes get the hooks added before it).
  const hub = await parts.start({
    name: 'events',
    start: async () => {
      let hub: EventHub | undefined;
      const eventLimits = www?.events;
      await app.register(eventsPlugin, {
        redis: deps.redis,
        authorize: logins.authz.authorize,
        allowOrigin: (origin) => originAllowed(cors, origin),
        clientKey,
        sessionAlive: sessions.alive,
        ...(eventLimits
          ? {
              maxConnectionsPerClient: eventLimits.max_connections_per_client,
              maxSubscriptions: eventLimits.max_subscriptions_per_connection,
              maxLogSubscriptions: eventLimits.max_log_subscriptions_per_connection,
              sessionCheckIntervalMs: eventLimits.session_check_seconds * 1000,
            }
          : {}),
        onHub: (h) => {
          hub = h;
        },
      });
      return hub!;
    },
    // Also stopped by the plugin's own onClose; a second stop does nothing.
    stop: (h) => h.stop(),
  });
  await parts.start({
    name: 'metrics',
    start: () =>
      metrics.watch({
        readPool: () => readPool?.stats() ?? null,
        downloadPool: () => readPool?.downloadStats() ?? null,
        pageCache: () => pages?.stats() ?? null,
        rawLogCache: () => rawLogs?.stats() ?? null,
        writeNotices: () => notices?.stats() ?? null,
        events: () => ({
          clients: hub.consumers.size,
          subscriptions: hub.subscriptionCount(),
          dispatched: hub.dispatched,
        }),
      }),
  });
  await parts.complete();
  return app;
}
