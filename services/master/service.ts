// The master process, run by main.ts once telemetry is on: the environment and the YAML
// configuration become a database pool, Redis connections and worker listeners, which
// startMaster (master.ts) runs on; its probes answer beside it, and SIGTERM stops it all.
import { readFileSync } from 'node:fs';
import { type MasterEnv, redact } from '../core/config/env.js';
import { ConfigError } from '../core/config/errors.js';
import { exitOnConfigError } from '../core/config/fatal.js';
import { ignoredKeys, type MasterConfig } from '../core/config/master-config.js';
import { holdEarlySighup, readText, watchConfigFile } from '../core/config/reload.js';
import { ensureMigratedOrExit } from '../core/db/migrate.js';
import { createPool, openConnections } from '../core/db/pool.js';
import { busSubscription } from '../core/events/bus.js';
import { EVENTS_FLUSH_MS, flushEvents } from '../core/events/publisher.js';
import { postgresCheck, probeDatabase, redisCheck, schemaCheck } from '../core/health.js';
import { startProbeServer } from '../core/http/probe-server.js';
import { onShutdown } from '../core/lifecycle.js';
import { createRedis } from '../core/redis.js';
import { createLogger, type Logger } from '../core/telemetry/logger.js';
import { startTelemetry } from '../core/telemetry/tracing.js';
import { checkMasterConfig } from './config-check.js';
import { livenessOf } from './liveness.js';
import { type Master, startMaster } from './master.js';
import { listenForWorkers, type WorkerListeners, workerPortProblems } from './workers/listen.js';

/**
 * Connections a master opens as it starts (with migrate's check, 5 of its pool's 10); the rest
 * open as statements need them. A connection costs PostgreSQL 26-30 ms of CPU on the
 * benchmark's machine, and the whole pool was opened in the seconds the master registers and
 * its workers log in, on cores they share. Spawn to first build started, one master, 1,000
 * builders and workers, 25,000 pending, ten starts each way in turns (2026-11-30 05:06-05:15,
 * load 1.1-3.7): 4 opened at the start 1.50-2.02 s (median 1.64, 9 of 10 under 2 s), the whole
 * pool 1.69-2.81 s (1.89, 7 of 10); 1,000 builds then started at 135-175 a second against
 * 117-167 (`MASTERS=1 STOP_AFTER=A load/fleet/run.sh`, load/results/fleet.md).
 */
const START_CONNECTIONS = 4;

// Beyond the drain, the steps after it (jobs, schedulers, closing connections) get this long.
const SHUTDOWN_MARGIN_MS = 30_000;

/** Read and check the file as a start does; a reload reads it the same way (a ConfigError refuses it). */
function checkedConfig(
  env: MasterEnv,
  processEnv: Readonly<Record<string, string | undefined>>,
  log: Logger,
): MasterConfig {
  const config = checkMasterConfig(env.configPath, processEnv, (c) =>
    workerPortProblems(c, {
      workerPort: env.workerPort,
      msgpackPort: env.msgpackWorkerPort,
      pbPort: env.pbWorkerPort,
    }),
  );
  // Buildbot keys that mean nothing here are accepted, and named so that nobody thinks they work.
  for (const { key, reason } of ignoredKeys(config))
    log.warn({ code: 'CONFIG_KEY_IGNORED', key, reason }, `${key} is ignored: ${reason}`);
  return config;
}

function loadConfig(
  env: MasterEnv,
  processEnv: Readonly<Record<string, string | undefined>>,
  log: Logger,
): MasterConfig {
  try {
    return checkedConfig(env, processEnv, log);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    log.fatal({ code: err.code, problems: err.problems }, err.message);
    process.exit(2);
  }
}

/**
 * Run a master process. `env` is the typed environment; `processEnv` the raw one, which
 * only goes where a secret or a child process needs it (password_env, git).
 */
export async function runMasterProcess(
  env: MasterEnv,
  processEnv: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  const log = createLogger('master', env.logLevel);
  const earlySighup = holdEarlySighup(log);
  // Read before the load: a change between the two is what the watch's first look reloads.
  const startText = readText(env.configPath);
  const config = loadConfig(env, processEnv, log);
  const telemetry = await startTelemetry('flotilla-master');
  const db = createPool(env.databaseUrl, {
    applicationName: `flotilla-master ${env.masterName}`,
    poolSize: env.databasePoolSize,
    // A master stopped inside a transaction (a frozen VM, a long pause) would otherwise keep
    // its row locks for as long as it is away: the master that expires it waits on them (its
    // masters row, its builds and logs) and the cluster's expiry stalls with it (seen: the
    // frozen-master small form, stopped during a log append, never had its build rerun). A
    // transaction idle for the outage limit belongs to a master whose lease has run out by
    // then (liveness.ts), so it is ended before the master can be expired; a live master
    // never waits between two statements of its own transaction that long.
    idleInTransactionTimeoutMs: livenessOf(config).outageLimitMs,
    // Parsed and planned once per connection (core/db/prepared-statements.ts): a third to a
    // half of PostgreSQL's time on a build start's statements was their planning.
    prepare: {},
  });
  // Connections opened while the master starts, not by its first builds on their way to
  // their first commands. From a master's first build started to its first command took
  // 0.29-0.63 s with the pool opened as statements came to need it and 0.17-0.33 s with it
  // opened here; from ready to the first command 0.68-1.18 s and 0.33-0.62 s (one master,
  // 1,000 workers, 25,000 pending, phases A and A2 of five runs each way in turns, the first
  // three of a first form of this that held each connection 10 ms, load 1.7-4.6: `MASTERS=1
  // STOP_AFTER=A load/fleet/run.sh`, load/results/fleet.md, 2026-11-29 13:37-13:47).
  // Not waited for: a connection that cannot open fails the statement that needs it. Not the
  // whole pool: START_CONNECTIONS says why.
  void openConnections(db, Math.min(START_CONNECTIONS, env.databasePoolSize)).catch(() => undefined);
  await ensureMigratedOrExit(db, env.migrateOnStart, log);
  // The readiness checks' own connection (core/health.ts): a master busy on every connection
  // of its pool is busy, not unready.
  const probeDb = probeDatabase(env.databaseUrl, `flotilla-master ${env.masterName} probes`);
  const redis = createRedis(env.redis, 'flotilla-master');
  const subscriber = createRedis(env.redis, 'flotilla-master-events');
  for (const r of [redis, subscriber]) r.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
  const events = busSubscription(subscriber, (err) =>
    log.warn({ err: err.message }, 'could not subscribe to events'),
  );
  const tls = env.workerTls
    ? { cert: readFileSync(env.workerTls.certFile), key: readFileSync(env.workerTls.keyFile) }
    : undefined;
  let workerPorts: WorkerListeners['ports'] | null = null;
  let master: Master | null = null;

  // The probe port first: a port that cannot be had ends the start before the master joins
  // the cluster. Ready once the master has started.
  const probes = await exitOnConfigError(log, () =>
    startProbeServer({
      host: env.host,
      port: env.probePort,
      checks: [
        postgresCheck(probeDb),
        schemaCheck(probeDb),
        redisCheck(redis),
        {
          name: 'master',
          run: async () => {
            if (!master) throw new Error('starting');
          },
        },
      ],
      metrics: () => (master ? master.metrics() : Promise.reject(new Error('starting'))),
      details: () => (master ? { config: master.config } : {}),
    }),
  );
  // A worker port that cannot be had (workers/listen.ts), or a secret that cannot be read,
  // ends the start as a bad configuration does.
  master = await exitOnConfigError(log, () =>
    startMaster({
      db,
      redis,
      jobsRedis: env.redis,
      events,
      config,
      name: env.masterName,
      log,
      workdir: env.workdir,
      env: processEnv,
      drainMs: env.drainSeconds * 1000,
      listenForWorkers: async (workerEvents) => {
        const listeners = await listenForWorkers({
          config,
          host: env.host,
          workerPort: env.workerPort,
          msgpackPort: env.msgpackWorkerPort,
          pbPort: env.pbWorkerPort,
          ...(tls ? { tls } : {}),
          masterName: env.masterName,
          env: processEnv,
          log,
          events: workerEvents,
        });
        workerPorts = listeners.ports;
        return listeners;
      },
    }),
  );
  const started = master;
  log.info(
    {
      master: env.masterName,
      masterid: started.masterid,
      builders: config.builders.length,
      workerPorts,
      workerTls: env.workerTls !== null,
      probePort: probes.port,
      database: redact(env.databaseUrl),
    },
    'master started',
  );

  // SIGHUP and changes of the file's folder reload it (core/config/reload.ts, reconfigure.ts).
  const reloader = watchConfigFile({
    path: env.configPath,
    log,
    db,
    load: () => checkedConfig(env, processEnv, log),
    current: () => started.config,
    startedFrom: startText,
    apply: (next, version) => started.reconfigure(next, version),
  });
  earlySighup.handOver(reloader);

  onShutdown(
    log,
    () => [
      { name: 'config reloads', run: async () => reloader.stop() },
      ...started.shutdownSteps(),
      { name: 'probes', run: () => probes.close() },
      { name: 'postgres', run: () => Promise.all([db.dispose(), probeDb.dispose()]).then(() => {}) },
      // The last events (builds handed back, the master stopped) go out if Redis is there.
      { name: 'events', run: async () => void (await flushEvents(redis, EVENTS_FLUSH_MS)) },
      { name: 'redis', run: async () => Promise.all([redis.quit(), subscriber.quit()]) },
      { name: 'telemetry', run: () => telemetry.shutdown() },
    ],
    env.drainSeconds * 1000 + SHUTDOWN_MARGIN_MS,
  );
}
