// The API process, started by main.ts once telemetry is on.
import { loadApiEnv, redact } from '../core/config/env.js';
import { ConfigError } from '../core/config/errors.js';
import { exitOnConfigError } from '../core/config/fatal.js';
import { loadMasterConfig, type MasterConfig, masterConfigSchema } from '../core/config/master-config.js';
import { holdEarlySighup, readText, watchConfigFile } from '../core/config/reload.js';
import { type ConfigVersion, configVersion } from '../core/config/version.js';
import { startCountCompaction } from '../core/data/counts.js';
import { ensureMigratedOrExit } from '../core/db/migrate.js';
import { createPool } from '../core/db/pool.js';
import { EVENTS_FLUSH_MS, flushEvents } from '../core/events/publisher.js';
import { forceScheduler } from '../core/force/parameters.js';
import { probeDatabase } from '../core/health.js';
import { listenAt } from '../core/http/listen-error.js';
import { startProbeServer } from '../core/http/probe-server.js';
import { onShutdown } from '../core/lifecycle.js';
import { objectStoreOf } from '../core/objstore/from-config.js';
import { createRedis } from '../core/redis.js';
import { createLogger } from '../core/telemetry/logger.js';
import { startTelemetry } from '../core/telemetry/tracing.js';
import { changeHooks } from './hooks/index.js';
import { AppSwitch } from './http/app-switch.js';
import { buildApp } from './http/server.js';
import { loadWebUi } from './http/web-ui.js';

const env = loadApiEnv();
const log = createLogger('api', env.logLevel);
const earlySighup = holdEarlySighup(log);
let config: MasterConfig | null = null;
// Read before the load: a change between the two is what the watch's first look reloads.
const startText = env.masterConfigPath ? readText(env.masterConfigPath) : null;
try {
  config = env.masterConfigPath ? loadMasterConfig(env.masterConfigPath) : null;
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  log.fatal({ code: err.code, problems: err.problems }, err.message);
  process.exit(2);
}
const telemetry = await startTelemetry('flotilla-api');
// An API's transactions are a few statements sent back to back, with no wait between two of
// them. A session left idle inside one belongs to an API that stopped (a frozen VM, a long
// pause): the server ends it after this long, and with it the row locks it holds. Otherwise a
// master's claim of a request it locked (claimBuildRequests locks the request's row) would
// wait, and that master's whole claim pass with it, as would the masters' writes to what it
// locked, for as long as it is away. A master bounds its own by its lease
// (services/master/service.ts); an API holds no lease, so a fixed bound, far above any pause of
// a live process.
const IDLE_IN_TRANSACTION_MS = 10_000;
const db = createPool(env.databaseUrl, {
  applicationName: 'flotilla-api',
  idleInTransactionTimeoutMs: IDLE_IN_TRANSACTION_MS,
  poolSize: env.databasePoolSize,
  // Its writes and control reads prepared as the masters' are (core/db/prepared-statements.ts);
  // the reads of pages have their own pools, prepared their own way (db-routing/read-pool.ts).
  prepare: {},
});
// The readiness checks' own connection (core/health.ts): a pod busy on every connection of its
// pool is busy, not unready, and Kubernetes must not take it out of service for that.
const probeDb = probeDatabase(env.databaseUrl, 'flotilla-api probes');
await ensureMigratedOrExit(db, env.migrateOnStart, log);
const redis = createRedis(env.redis, 'flotilla-api');
redis.on('error', (err) => log.warn({ err: err.message }, 'redis error'));

const webUi = loadWebUi();
if (!webUi) log.warn('the web UI is not built (npm run build:web): / answers 404');
// The application a configuration makes (http/server.ts), change hooks included: built at
// start, and again for each reloaded configuration (reload.ts), which http/app-switch.ts swaps
// in. A ConfigError (a GitHub secret that cannot be read) is thrown once what was built is closed.
let stopping = false;
async function composeApp(config: MasterConfig | null, version: ConfigVersion | undefined) {
  const app = await buildApp({
    db,
    probeDb,
    redis,
    log,
    publicUrl: env.publicUrl,
    databaseUrl: env.databaseUrl,
    forceSchedulers: (config?.force_schedulers ?? []).map(forceScheduler),
    ...(version ? { configVersion: version } : {}),
    // Without a configuration: no logins (everything allowed, as Buildbot without auth) and
    // the default www settings (rate limit on).
    auth: config?.auth,
    www: config?.www ?? masterConfigSchema.shape.www.parse(undefined),
    title: config?.title,
    sessionSecret: env.sessionSecret ?? undefined,
    webUi,
    // Unset credentials are a ConfigError: at start the process exits, on a reload the old
    // configuration stays.
    objectStore: objectStoreOf(config?.object_store),
    readReplicas: {
      urls: env.readReplicas.urls,
      waitMs: env.readReplicas.waitSeconds * 1000,
      maxLagMs: env.readReplicas.maxLagSeconds * 1000,
    },
    stopping: () => stopping,
  });
  try {
    await app.register(changeHooks, {
      ctx: { db, redis, onPublishError: (err) => log.warn({ err: err.message }, 'events not published') },
      config: config?.change_hooks,
      log,
    });
    await app.ready();
  } catch (err) {
    await app.close().catch(() => {});
    throw err;
  }
  return app;
}

let version = config ? configVersion(config) : undefined;
// An unreadable GitHub secret is a configuration error, as fatal as a bad file.
const front = new AppSwitch(await exitOnConfigError(log, () => composeApp(config, version)));
// A port that cannot be had ends the start with the setting that moves it (core/http/listen-error.ts).
await exitOnConfigError(log, () =>
  listenAt(
    { what: 'the public port', host: env.host, port: env.port, portSetting: 'PORT', hostSetting: 'HOST' },
    () => front.listen(env.port, env.host),
  ),
);
// /metrics and the readiness details on a port of their own (PROBE_PORT), as the masters
// have them: nothing a client of the public port should see (docs/security.md). Both from
// the application serving now: after a reload, the new configuration's hash.
const probes = await exitOnConfigError(log, () =>
  startProbeServer({
    host: env.host,
    port: env.probePort,
    checks: front.app.probes.checks,
    metrics: () => front.app.probes.metrics(),
    details: () => front.app.probes.details(),
  }),
);
// Only a process started with a configuration file has one to re-read.
const reloader = env.masterConfigPath
  ? watchConfigFile({
      path: env.masterConfigPath,
      log,
      db,
      current: () => version ?? { hash: '', loaded_at: 0 },
      startedFrom: startText,
      async apply(next, nextVersion) {
        const app = await composeApp(next, nextVersion);
        version = nextVersion;
        // Serving the new one from now; the old one closes once its answers are sent.
        front.swap(app).catch((err) => log.error({ err }, 'the replaced configuration did not close'));
        return undefined;
      },
    })
  : null;
earlySighup.handOver(reloader);
log.info(
  {
    url: env.publicUrl,
    probePort: probes.port,
    database: redact(env.databaseUrl),
    readReplicas: env.readReplicas.urls.map(redact),
  },
  'api listening',
);

const stopCompaction = startCountCompaction(db, log);

onShutdown(log, () => [
  { name: 'config reloads', run: async () => reloader?.stop() },
  { name: 'count compaction', run: async () => stopCompaction() },
  {
    name: 'http',
    run: () => {
      stopping = true;
      return front.close();
    },
  },
  { name: 'probes', run: () => probes.close() },
  { name: 'postgres', run: () => Promise.all([db.dispose(), probeDb.dispose()]).then(() => {}) },
  { name: 'events', run: async () => void (await flushEvents(redis, EVENTS_FLUSH_MS)) },
  { name: 'redis', run: () => redis.quit() },
  { name: 'telemetry', run: () => telemetry.shutdown() },
]);
