// The API pod's Fastify application. It holds no state of its own: everything comes from
// PostgreSQL and Redis, so any number of replicas can serve behind one ingress.
//
// Every request, in order: size limits (headers by Node's parser: 431; URL: 414; body: 413),
// the session (its user known from the cookie), the per-client rate limit (429), then the
// route: /api/v2 (authorized per endpoint and action, 403), /auth/*, /config, probes.

import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Redis } from 'ioredis';
import { type AuthzPolicy, DEFAULT_RULES } from '../../core/auth/authz.js';
import { fingerprintOf, UserDirectory } from '../../core/auth/users.js';
import type { AuthConfig, WwwConfig } from '../../core/config/master-config.js';
import type { ConnectionPool } from '../../core/db/pool.js';
import { collectEventMetrics } from '../../core/events/metrics.js';
import { type ForceScheduler, forceSchedulerSpec } from '../../core/force/parameters.js';
import {
  type Check,
  postgresCheck,
  type Readiness,
  readiness,
  redisCheck,
  schemaCheck,
} from '../../core/health.js';
import { PLATFORM_PATHS } from '../../core/http/platform-paths.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { Authorizer } from '../auth/authorizer.js';
import { clientKey } from '../auth/client.js';
import { DeviceCookies } from '../auth/device-cookies.js';
import { LoginThrottle } from '../auth/login-throttle.js';
import { TokenVerifier } from '../auth/oidc.js';
import { rateLimitHook } from '../auth/rate-limit.js';
import { authRoutes } from '../auth/routes.js';
import { loadSessionSecret, Sessions } from '../auth/session.js';
import { SessionCookies } from '../auth/session-cookies.js';
import { SessionStore } from '../auth/session-store.js';
import { Targets } from '../auth/targets.js';
import { PageCache } from '../cache/page-cache.js';
import { replicaPagePolicy } from '../cache/replica-policy.js';
import { WriteVersionsSource } from '../cache/versions.js';
import { WriteNotices } from '../cache/write-notices.js';
import { controlHandlers } from '../control/index.js';
import { plainReader, ReadPool, type RowReader } from '../db-routing/read-pool.js';
import { readsSummary, sendWritePositions, withWritePosition } from '../db-routing/read-your-writes.js';
import { type ReplicaSettings, readRouter } from '../db-routing/replicas.js';
import { notFound, uriTooLong } from '../errors/catalogue.js';
import { clientError, errorHandler, frameworkErrors, sendError } from '../errors/reply.js';
import type { EventHub } from '../events/hub.js';
import { eventsPlugin } from '../events/plugin.js';
import { ArtifactReader } from '../read/artifacts.js';
import { LogReader } from '../read/logs.js';
import { defaultRawLogDir, RawLogCache } from '../read/raw-log-cache.js';
import { buildRegistry } from '../registry/index.js';
import { securityHeaders } from '../reply/security-headers.js';
import { corsPolicy, originAllowed } from './cors.js';
import { jsonRpcHandler } from './jsonrpc.js';
import { ApiMetrics } from './metrics.js';
import { restHandler } from './rest.js';
import { type WebUiFiles, webUiRoutes } from './web-ui.js';

export interface AppDeps {
  db: ConnectionPool;
  redis: Redis;
  log: Logger;
  publicUrl: string;
  /** Force schedulers of the master configuration. */
  forceSchedulers?: readonly ForceScheduler[];
  allowedOrigins?: readonly string[];
  bodyLimit?: number;
  /** Reads go through their own connections with prepared statements (db-routing/read-pool.ts). */
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
  /** Streaming replicas the REST API reads from (db-routing/replicas.ts); absent or none: the primary. */
  readReplicas?: ReplicaSettings;
}

const API_METHODS = ['GET', 'HEAD', 'POST', 'OPTIONS', 'PUT', 'DELETE', 'PATCH'] as const;
// Kubernetes and Prometheus call these; they need no session and must answer while PostgreSQL is away.
const DEFAULT_LIMITS = { body_bytes: 1024 * 1024, header_bytes: 16 * 1024, url_bytes: 8 * 1024 };
const DEFAULT_THROTTLE = {
  max_failures_per_user: 10,
  max_failures_per_client: 30,
  max_failures_per_user_global: 100,
  window_seconds: 900,
};
// A request (headers and body) must arrive within this; slow senders are cut off.
const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 20_000;

const READINESS_CACHE_MS = 1000;

declare module 'fastify' {
  interface FastifyInstance {
    /** What the probe port serves (services/api/service.ts): readiness checks and /metrics. */
    probes: {
      checks: readonly Check[];
      metrics: () => Promise<{ contentType: string; body: string }>;
      /** Where reads go, with read replicas: the probe port's /readyz shows it beside the checks. */
      details: () => Record<string, unknown>;
    };
  }
}

/** Readiness asked at most once per `ms`; concurrent asks share one answer. */
function cachedReadiness(checks: readonly Check[], ms: number): () => Promise<Readiness> {
  let last: { at: number; answer: Promise<Readiness> } | null = null;
  return () => {
    const now = Date.now();
    if (!last || now - last.at >= ms) last = { at: now, answer: readiness(checks) };
    return last.answer;
  };
}

/** The authorization rules in force, Buildbot's way (see core/config/master-config/auth.ts). */
export function authzPolicy(auth: AuthConfig | undefined): AuthzPolicy {
  const loginsExist = !!auth && (auth.users.length > 0 || auth.users_file !== undefined || !!auth.oidc);
  return {
    rules: auth?.allow_rules ?? (loginsExist ? DEFAULT_RULES : []),
    roleMatchers: auth?.role_matchers ?? [],
  };
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const limits = { ...DEFAULT_LIMITS, ...deps.www?.limits };
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Buildbot matches paths exactly: /api/v2/builds/ is not /api/v2/builds.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 4096 },
    bodyLimit: deps.bodyLimit ?? limits.body_bytes,
    http: { maxHeaderSize: limits.header_bytes, headersTimeout: HEADERS_TIMEOUT_MS },
    requestTimeout: REQUEST_TIMEOUT_MS,
    trustProxy: (deps.www?.trust_proxy ?? false) as boolean,
    clientErrorHandler: clientError,
    // What Fastify refuses before it has a route, answered in our shapes.
    frameworkErrors,
    // While it stops (SIGTERM), a pod still answers what reaches it on connections already
    // open, as a proxy that has not yet seen the pod leave sends it: a 503 there would be a
    // failed request. New connections are refused, idle ones closed, and /readyz says 503.
    return503OnClosing: false,
  });
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  const checks = [postgresCheck(deps.db), schemaCheck(deps.db), redisCheck(deps.redis)];
  const forceSchedulers = deps.forceSchedulers ?? [];
  const forceByName = new Map(forceSchedulers.map((f) => [f.name, f]));
  const registry = buildRegistry(forceSchedulers.map(forceSchedulerSpec));
  const readPool = deps.databaseUrl ? new ReadPool(deps.databaseUrl) : null;
  // The primary's read path: what control actions read, and where the REST API's reads go
  // when no replica may take them.
  const primaryReads = readPool ?? plainReader(deps.db);
  const router = readRouter(deps.readReplicas, deps.db, primaryReads, deps.log);
  router?.start();
  const reads: RowReader = router ?? primaryReads;
  // Without a configuration (tests, embedders) kept pages are checked on every request: a
  // caller that writes and reads back at once must see its write.
  const pageCacheCfg = deps.www?.page_cache ?? { enabled: true, max_mb: 64, max_staleness_ms: 0 };
  const notices =
    pageCacheCfg.enabled && deps.databaseUrl && pageCacheCfg.max_staleness_ms > 0
      ? new WriteNotices({
          url: deps.databaseUrl,
          maxStalenessMs: pageCacheCfg.max_staleness_ms,
          onError: (err) => deps.log.warn({ err: err.message }, 'write notices interrupted'),
          positions: router !== null,
        })
      : null;
  notices?.start();
  // Versions are read on the primary: a replica's answer could be as old as its pages.
  const pageCache = pageCacheCfg.enabled
    ? new PageCache(
        primaryReads,
        new WriteVersionsSource(primaryReads),
        pageCacheCfg.max_mb * 1024 * 1024,
        notices,
        router ? replicaPagePolicy(router, notices) : null,
      )
    : null;
  const rawCfg = deps.www?.raw_log_cache ?? { enabled: true, max_mb: 256 };
  // Without a folder to write to, downloads are still served, each from the database.
  const rawCache = rawCfg.enabled
    ? await RawLogCache.open(
        rawCfg.dir ?? defaultRawLogDir(),
        rawCfg.max_mb * 1024 * 1024,
        rawCfg.dir === undefined,
      ).catch((err) => {
        deps.log.warn({ err: (err as Error).message }, 'raw log cache off: its folder cannot be used');
        return null;
      })
    : null;
  let hub: EventHub | null = null;
  const metrics = new ApiMetrics({
    readPool: () => readPool?.stats() ?? null,
    downloadPool: () => readPool?.downloadStats() ?? null,
    pageCache: () => pageCache?.stats() ?? null,
    rawLogCache: () => rawCache?.stats() ?? null,
    writeNotices: () => notices?.stats() ?? null,
    events: () =>
      hub && {
        clients: hub.consumers.size,
        subscriptions: hub.subscriptionCount(),
        dispatched: hub.dispatched,
      },
  });
  collectEventMetrics(metrics.registry, deps.redis);
  metrics.install(app);
  const keyPrefix = deps.redisKeyPrefix ?? 'flotilla:';

  // Who may log in, and what each user may do.
  const auth = deps.auth;
  const users =
    auth && (auth.users.length > 0 || auth.users_file !== undefined)
      ? new UserDirectory(auth.users, auth.users_file, (err) =>
          deps.log.error({ err: err.message }, 'users file not reloaded; the previous users stay'),
        )
      : null;
  const tokens = auth?.oidc ? TokenVerifier.fromConfig(auth.oidc) : null;
  // The events plugin asks it too (authorize), of req.userInfo, which every request carries.
  const authz = new Authorizer(authzPolicy(auth), new Targets(deps.db), forceByName);
  const throttleCfg = { ...DEFAULT_THROTTLE, ...auth?.login_throttle };
  const throttle = new LoginThrottle(deps.redis, {
    maxFailuresPerUser: throttleCfg.max_failures_per_user,
    maxFailuresPerClient: throttleCfg.max_failures_per_client,
    maxFailuresPerUserGlobal: throttleCfg.max_failures_per_user_global,
    windowSeconds: throttleCfg.window_seconds,
    keyPrefix,
  });

  // The session secret lives in the database, which may come up after us: read it on first use.
  let sessions: Sessions | null = null;
  const secure = new URL(deps.publicUrl).protocol === 'https:';
  let storeWarnedAt = 0;
  const cookies = new SessionCookies(() => sessions!, secure, {
    store: new SessionStore(deps.redis, keyPrefix),
    // A password login's session lasts while its user's entry is the same (users files are
    // read again when they change, within UserDirectory's recheck interval).
    current: (record) => {
      if (record.via !== 'password') return true;
      const entry = users?.find(record.user);
      return entry !== undefined && fingerprintOf(entry) === record.fingerprint;
    },
    onError: (err) => {
      if (Date.now() - storeWarnedAt < 10_000) return;
      storeWarnedAt = Date.now();
      deps.log.warn({ err: err.message }, 'sessions not checked (redis unavailable): requests are anonymous');
    },
  });
  // Callback style: once the secret is known, only a logged-in cookie waits (for the store).
  securityHeaders(app);
  app.addHook('onRequest', (req, reply, done) => {
    // Longer URLs than this are refused before anything reads them (answered: no done()).
    if ((req.raw.url ?? '').length > limits.url_bytes) {
      sendError(req, reply, uriTooLong());
      return;
    }
    // The probes must answer while PostgreSQL is away: they need no session.
    if (PLATFORM_PATHS.has(req.url)) return done();
    const resolve = () =>
      cookies.resolve(req).then(
        () => done(),
        (err: Error) => done(err),
      );
    if (sessions) return void resolve();
    loadSessionSecret(deps.db, deps.sessionSecret).then((secret) => {
      sessions ??= new Sessions(secret, auth?.session_expiry_seconds);
      resolve();
    }, done);
  });
  if (deps.www?.rate_limit.enabled) {
    const rl = deps.www.rate_limit;
    app.addHook(
      'onRequest',
      rateLimitHook(
        deps.redis,
        { requests: rl.requests, windowSeconds: rl.window_seconds, keyPrefix: keyPrefix },
        deps.log,
      ),
    );
  }

  // JSON-RPC bodies are decoded by the API itself, with Buildbot's error messages.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.setErrorHandler(errorHandler('api'));
  app.setNotFoundHandler((req, reply) => sendError(req, reply, notFound()));

  // The public port answers liveness, and readiness cheaply: one check of the stores a
  // second whatever the number of asks, and no detail. The details and /metrics are on the
  // probe port (service.ts), as the masters have them.
  app.get('/healthz', async () => ({ status: 'ok' }));
  const ready = cachedReadiness(checks, READINESS_CACHE_MS);
  app.get('/readyz', async (_req, reply) => {
    // A stopping pod leaves the rotation at once, whatever the cached answer says.
    const r = closing ? { ready: false } : await ready();
    // With replicas: where reads go, and how many replicas take them (their names and
    // states are on the probe port).
    const reads = router && readsSummary(router);
    return reply
      .code(r.ready ? 200 : 503)
      .send({ status: r.ready ? 'ready' : 'unavailable', ...(reads ? { reads } : {}) });
  });
  app.decorate('probes', {
    checks,
    metrics: () => metrics.render(),
    details: () => (router ? { reads: router.status() } : {}),
  });

  const base = new URL(deps.publicUrl);
  app.get('/api', async (_req, reply) =>
    reply
      .type('application/json')
      .send(JSON.stringify({ api_versions: { v2: new URL('api/v2', base).toString() } })),
  );

  authRoutes(app, {
    publicUrl: deps.publicUrl,
    title: deps.title ?? 'Flotilla',
    cookies,
    users,
    tokens,
    throttle,
    devices: new DeviceCookies(() => sessions!.derivedKey('device-cookie'), secure),
    log: deps.log,
    authz,
  });

  const cors = corsPolicy(deps.publicUrl, deps.allowedOrigins ?? deps.www?.allowed_origins);
  const rest = restHandler({
    reads,
    registry,
    cors,
    sessions: cookies,
    authz,
    logs: new LogReader(reads, deps.db, deps.redis, rawCache),
    artifacts: new ArtifactReader(reads),
    pages: pageCache,
    jsonRpc: jsonRpcHandler(
      controlHandlers({
        db: deps.db,
        reads: primaryReads,
        redis: deps.redis,
        forceSchedulers: forceByName,
        onPublishError: (err) => deps.log.warn({ err: err.message }, 'events not published'),
      }),
      authz,
    ),
  });
  if (router) sendWritePositions(app, deps.db, secure, deps.log);
  app.addHook('onClose', async () => {
    await notices?.close();
    await router?.end();
    await readPool?.end();
    await rawCache?.close();
  });
  if (deps.webUi) webUiRoutes(app, deps.webUi);
  const api = router ? withWritePosition(router, rest) : rest;
  app.route({ method: [...API_METHODS], url: '/api/v2', handler: api });
  app.route({ method: [...API_METHODS], url: '/api/v2/*', handler: api });
  const eventLimits = deps.www?.events;
  await app.register(eventsPlugin, {
    redis: deps.redis,
    authorize: authz.authorize,
    allowOrigin: (origin) => originAllowed(cors, origin),
    clientKey,
    sessionAlive: (id, user) => cookies.live(id, user),
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
  return app;
}
