// The master process, started by main.ts once telemetry is on.

import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { loadMasterEnv, redact } from '../core/config/env.js';
import { ConfigError } from '../core/config/errors.js';
import { loadMasterConfig } from '../core/config/master-config.js';
import type { DataContext } from '../core/data/index.js';
import { createPool, sql } from '../core/db/pool.js';
import { busSubscription } from '../core/events/bus.js';
import { postgresCheck, redisCheck } from '../core/health.js';
import { startProbeServer } from '../core/http/probe-server.js';
import { onShutdown } from '../core/lifecycle.js';
import { createRedis } from '../core/redis.js';
import { createLogger } from '../core/telemetry/logger.js';
import { startTelemetry } from '../core/telemetry/tracing.js';
import { BuildRunner } from './build/runner.js';
import { listen } from './control.js';
import { Distributor } from './distributor.js';
import { logCodec } from './jobs/compress-log.js';
import { startJobs } from './jobs/index.js';
import { Membership } from './membership.js';
import { MasterMetrics } from './metrics.js';
import { SchedulerManager, schedulerConfigProblems } from './schedulers/index.js';
import { RequestTraces } from './trace-links.js';
import { startWorkerServer } from './workers/server.js';

const env = loadMasterEnv();
const log = createLogger('master', env.logLevel);
let config: ReturnType<typeof loadMasterConfig>;
try {
  config = loadMasterConfig(env.configPath);
  // Problems the schema cannot see (a cron expression that never fires, for one) fail the start too.
  const bad = schedulerConfigProblems(config);
  if (bad.length) throw new ConfigError('CONFIG_SCHEMA', `${env.configPath} is invalid`, bad);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  log.fatal({ code: err.code, problems: err.problems }, err.message);
  process.exit(2);
}
const telemetry = startTelemetry('flotilla-master');
const db = createPool(env.databaseUrl, { applicationName: `flotilla-master ${env.masterName}` });
const redis = createRedis(env.redisUrl, 'flotilla-master');
const subscriber = createRedis(env.redisUrl, 'flotilla-master-events');
for (const r of [redis, subscriber]) r.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
const ctx: DataContext = {
  db,
  redis,
  onPublishError: (err) => log.warn({ err: err.message }, 'events not published'),
};

// How long a stopping master lets its running builds finish before handing them back.
const DRAIN_MS = Number(process.env.MASTER_DRAIN_SECONDS ?? 60) * 1000;

const membership = new Membership(ctx, env.masterName, config, log);
await membership.start();
// Background jobs shared by the cluster: master expiry and log compression (BullMQ).
const jobs = await startJobs({
  ctx,
  redis: env.redisUrl,
  masterid: () => membership.masterid,
  codec: config.log_compression,
  expirySeconds: config.master_expiry_seconds,
  // A short expiry (tests, small clusters) is checked more often than once a minute.
  expirePeriodMs: Math.min(60_000, config.master_expiry_seconds * 500),
  log,
});
const workerNames = new Map([...membership.workerIds].map(([name, id]) => [id, name]));
const paused = new Set(
  (
    await db.query(
      sql`SELECT name FROM workers WHERE paused <> 0 AND name = ANY(${config.workers.map((w) => w.name)}::text[])`,
    )
  ).map((r) => r.name as string),
);

// Sources are read at scrape time; `distributor` and `workers` exist by the first scrape.
const metrics = new MasterMetrics({
  running: (): number => runner.count,
  // The unclaimed set holds only pending requests (migration 0008): as many rows as the queue.
  queued: async () => {
    const [row] = await db.query(sql`
      SELECT count(*)::int AS n FROM flotilla.unclaimed_buildrequests u JOIN buildrequests br ON br.id = u.brid
      WHERE br.builderid = ANY(${[...membership.builderIds.values()]}::int[]) AND coalesce(br.complete, 0) = 0`);
    return row.n;
  },
  workers: () => workers.connected().length,
  claims: () => distributor?.claimed ?? { won: 0, lost: 0 },
});
const runner = new BuildRunner({
  ctx,
  redis,
  config,
  masterid: () => membership.masterid,
  workerId: (name) => membership.workerIds.get(name),
  // Chunks are first written as the compress-log job would write them (uncompressed with none).
  codec: logCodec(config.log_compression) ?? 'raw',
  log,
  metrics,
  onLogFinished: (logid) => {
    jobs
      .queueCompressLog(logid)
      .catch((err) => log.warn({ logid, err: (err as Error).message }, 'compression not queued'));
  },
});
let distributor: Distributor | null = null;
const traces = new RequestTraces();
const workers = await startWorkerServer({
  host: env.host,
  port: env.workerPort,
  ...(env.workerTls
    ? { tls: { cert: readFileSync(env.workerTls.certFile), key: readFileSync(env.workerTls.keyFile) } }
    : {}),
  config,
  masterName: env.masterName,
  log,
  events: {
    connected: (w) => {
      membership
        .workerConnected(w.name, w.info)
        .then(() => distributor?.kick())
        .catch((err) =>
          log.warn({ worker: w.name, err: (err as Error).message }, 'could not record the connection'),
        );
    },
    disconnected: (w) => {
      membership
        .workerDisconnected(w.name)
        .catch((err) =>
          log.warn({ worker: w.name, err: (err as Error).message }, 'could not record the disconnection'),
        );
    },
  },
});
distributor = new Distributor({
  ctx,
  config,
  masterid: () => membership.masterid,
  builderIds: membership.builderIds,
  workers,
  runner,
  isPaused: (name) => paused.has(name),
  log,
  onPass: (seconds) => metrics.claimPass(seconds),
  traces,
});
const events = busSubscription(subscriber, (err) =>
  log.warn({ err: err.message }, 'could not subscribe to events'),
);
const stopListening = await listen({
  subscribe: events,
  ctx,
  runner,
  distributor,
  workers,
  workerName: (id) => workerNames.get(id),
  paused,
  traces,
  log,
});
distributor.start();
// After membership (it needs the master's id); it shares the event subscription.
const schedulers = new SchedulerManager({
  ctx,
  config,
  masterid: () => membership.masterid,
  log,
  subscribe: events,
  workdir: env.workdir,
});
await schedulers.start();

const probes = await startProbeServer({
  host: env.host,
  port: env.probePort,
  checks: [postgresCheck(db), redisCheck(redis)],
  metrics: async () => {
    const all = Registry.merge([metrics.registry, jobs.registry]);
    return { contentType: all.contentType, body: await all.metrics() };
  },
});
log.info(
  {
    master: env.masterName,
    masterid: membership.masterid,
    builders: config.builders.length,
    workerPort: workers.port,
    workerTls: env.workerTls !== null,
    probePort: probes.port,
    database: redact(env.databaseUrl),
  },
  'master started',
);

onShutdown(
  log,
  () => [
    { name: 'claiming', run: async () => distributor!.stop() },
    {
      name: 'running builds',
      run: async () => {
        const drained = await Promise.race([
          runner.whenIdle().then(() => true),
          new Promise((r) => setTimeout(() => r(false), DRAIN_MS)),
        ]);
        if (!drained) {
          log.warn({ builds: runner.count }, 'handing running builds back');
          runner.abandonAll('master stopping');
          await runner.whenIdle();
        }
      },
    },
    // After the builds (their last logs get queued), before the stores close.
    { name: 'jobs', run: () => jobs.stop() },
    // Before masterStopped: a round after it would take schedulers back for a stopped master.
    { name: 'schedulers', run: () => schedulers.stop() },
    { name: 'events', run: () => stopListening() },
    { name: 'membership', run: () => membership.stop() },
    { name: 'workers', run: () => workers.close() },
    { name: 'probes', run: () => probes.close() },
    { name: 'postgres', run: () => db.dispose() },
    { name: 'redis', run: async () => Promise.all([redis.quit(), subscriber.quit()]) },
    { name: 'telemetry', run: () => telemetry.shutdown() },
  ],
  DRAIN_MS + 30_000,
);
