// A master, given what it runs on: its membership in the cluster, its background jobs, the
// workers connected to it, the builds it claims and runs, its schedulers and change sources,
// and what it does with the cluster's events. Everything it needs comes in `deps`, as the
// API's buildApp takes its own (the process, service.ts, reads the environment and makes
// them); tests start one in-process with a database, a Redis and scripted workers.
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { ConfigError } from '../core/config/errors.js';
import type { MasterConfig } from '../core/config/master-config.js';
import { type DataContext, pausedWorkerNames, queuedBuildRequestCount } from '../core/data/index.js';
import type { ConnectionPool } from '../core/db/pool.js';
import type { Subscribe } from '../core/events/bus.js';
import { collectEventMetrics } from '../core/events/metrics.js';
import type { ShutdownStep } from '../core/lifecycle.js';
import type { Logger } from '../core/telemetry/logger.js';
import { Locks } from './build/locks.js';
import { BuildRunner } from './build/runner.js';
import { Claims } from './claims.js';
import { listenToCluster } from './cluster-events.js';
import { Distributor } from './distributor.js';
import { logCodec } from './jobs/compress-log.js';
import { startJobs } from './jobs/index.js';
import { DEFAULT_PREFIX, type RedisTarget } from './jobs/queues.js';
import { livenessOf, livenessProblems } from './liveness.js';
import { Membership } from './membership.js';
import { MasterMetrics } from './metrics.js';
import { type Reporters, startReporters } from './reporters/index.js';
import { SchedulerManager } from './schedulers/index.js';
import { secretsProviders } from './secrets.js';
import { RequestTraces } from './trace-links.js';
import type { ConnectedWorkers, WorkerEvents } from './workers/connection.js';

// How long a stopping master lets its running builds finish before handing them back.
export const DEFAULT_DRAIN_MS = 60_000;
// The job that expires masters runs once a minute across the cluster; a short expiry (tests,
// small clusters) is checked twice per expiry instead.
const EXPIRE_PERIOD_MS = 60_000;

export interface MasterDeps {
  db: ConnectionPool;
  redis: Redis;
  /** Where the background jobs' queues live (BullMQ opens connections of its own). */
  jobsRedis: RedisTarget;
  /** Redis key prefix of the job queues (default theirs); the cluster must agree on it. */
  jobsPrefix?: string;
  /** The process's subscription to the cluster's events, and when it is live. */
  events: Subscribe & { ready: Promise<void> };
  config: MasterConfig;
  /** The master's name (`host:basedir`, or the pod's name): its row in `masters`. */
  name: string;
  log: Logger;
  /** Start what workers connect to, telling `events` as they come and go. */
  listenForWorkers: (events: WorkerEvents) => Promise<ConnectedWorkers>;
  /** Scratch files (git pollers' mirrors); nothing in it must survive. */
  workdir: string;
  /** The environment commands the master runs itself get (git's). */
  env: Readonly<Record<string, string | undefined>>;
  /** How long stop() lets running builds finish before handing them back (default DEFAULT_DRAIN_MS). */
  drainMs?: number;
  /** Tests speed these up; the defaults are the module's. */
  timing?: {
    distributorPollMs?: number;
    claimRenewMs?: number;
    schedulerRoundMs?: number;
    triggerPollMs?: number;
    /** The reporters' first retry delay. */
    reportBackoffMs?: number;
  };
}

export interface Master {
  readonly masterid: number;
  readonly runner: BuildRunner;
  readonly distributor: Distributor;
  readonly workers: ConnectedWorkers;
  readonly schedulers: SchedulerManager;
  /** Prometheus text of the master and its jobs. */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** The steps of a clean stop, in order, for a process's shutdown to run one by one. */
  shutdownSteps(): ShutdownStep[];
  /** Run those steps; the first failure rejects after the rest have run. */
  stop(): Promise<void>;
}

export async function startMaster(deps: MasterDeps): Promise<Master> {
  const { db, redis, config, log } = deps;
  const ctx: DataContext = {
    db,
    redis,
    onPublishError: (err) => log.warn({ err: err.message }, 'events not published'),
  };
  const drainMs = deps.drainMs ?? DEFAULT_DRAIN_MS;
  // Before anything starts: a secrets directory anyone may read is refused, as Buildbot does.
  const secrets = secretsProviders(config.secrets, deps.env);
  const timingProblems = livenessProblems(config);
  if (timingProblems.length)
    throw new ConfigError(
      'CONFIG_SCHEMA',
      'the master timings cannot keep a request from running twice',
      timingProblems,
    );
  const liveness = livenessOf(config);
  // The runner and the workers exist once membership has started; its hooks run later.
  const late: { runner?: BuildRunner; workers?: ConnectedWorkers } = {};
  const membership = new Membership(ctx, deps.name, config, log, {
    expired: () => late.runner?.abandonAll('this master was expired while it was away', true),
    leaseLost: () =>
      late.runner?.abandonAll('the database has been out of reach past the outage limit', true),
    connectedWorkers: () => (late.workers?.connected() ?? []).map((w) => ({ name: w.name, info: w.info })),
  });
  await membership.start();
  const masterid = () => membership.masterid;
  // Background jobs shared by the cluster: master expiry and log compression (BullMQ).
  const jobs = await startJobs({
    ctx,
    redis: deps.jobsRedis,
    ...(deps.jobsPrefix ? { prefix: deps.jobsPrefix } : {}),
    masterid,
    codec: config.log_compression,
    retention: config.retention,
    expirySeconds: config.master_expiry_seconds,
    expirePeriodMs: Math.min(EXPIRE_PERIOD_MS, config.master_expiry_seconds * 500),
    log,
  });
  for (const logid of membership.previousLifeLogs) jobs.queueCompressLogSoon(logid);
  // Reporters hear events from here on; none configured, nothing is started.
  let reporters: Reporters | null;
  try {
    reporters = await startReporters({
      db,
      config,
      env: deps.env,
      redis: deps.jobsRedis,
      prefix: deps.jobsPrefix ?? DEFAULT_PREFIX,
      subscribe: deps.events,
      jobMetrics: jobs.jobMetrics,
      log,
      ...(deps.timing?.reportBackoffMs !== undefined ? { backoffMs: deps.timing.reportBackoffMs } : {}),
    });
  } catch (err) {
    await jobs.stop();
    await membership.stop();
    throw err;
  }
  const workerNames = new Map([...membership.workerIds].map(([name, id]) => [id, name]));
  const paused = new Set(
    await pausedWorkerNames(
      db,
      config.workers.map((w) => w.name),
    ),
  );

  // Sources are read at scrape time; `distributor` and `workers` exist by the first scrape.
  const metrics = new MasterMetrics({
    running: (): number => runner.count,
    queued: () => queuedBuildRequestCount(db, [...membership.builderIds.values()]),
    workers: () => workers.connected().length,
    claims: () => distributor?.claimed ?? { won: 0, lost: 0 },
  });
  collectEventMetrics(metrics.registry, redis);
  const locks = new Locks(ctx, config.locks, masterid, deps.events);
  const runner = new BuildRunner({
    ctx,
    redis,
    config,
    events: deps.events,
    masterid,
    workerId: (name) => membership.workerIds.get(name),
    // Chunks are first written as the compress-log job would write them (uncompressed with none).
    codec: logCodec(config.log_compression) ?? 'raw',
    log,
    secrets,
    locks,
    metrics,
    ...(deps.timing?.triggerPollMs ? { triggerPollMs: deps.timing.triggerPollMs } : {}),
    lease: membership,
    lostWorkerWaitMs: liveness.lostMasterBoundMs + 1000,
    onLogFinished: (logid) => jobs.queueCompressLogSoon(logid),
  });
  late.runner = runner;
  const claims = new Claims({ ctx, masterid, log, renewMs: deps.timing?.claimRenewMs });
  let distributor: Distributor | null = null;
  const traces = new RequestTraces();
  const workers = await deps
    .listenForWorkers({
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
    })
    .catch(async (err: unknown) => {
      // A port that cannot be had (listen.ts): the master leaves the cluster as it joined it,
      // so that its next start does not wait out a previous life that never ran a build.
      await reporters?.stop();
      await jobs.stop();
      await membership.stop();
      throw err;
    });
  late.workers = workers;
  distributor = new Distributor({
    ctx,
    config,
    masterid,
    builderIds: membership.builderIds,
    workers,
    runner,
    claims,
    isPaused: (name) => paused.has(name),
    log,
    onPass: (seconds) => metrics.claimPass(seconds),
    traces,
    pollMs: deps.timing?.distributorPollMs,
    mayClaim: () => membership.active && membership.valid(),
  });
  const stopListening = await listenToCluster({
    subscribe: deps.events,
    ctx,
    runner,
    distributor,
    workers,
    workerName: (id) => workerNames.get(id),
    paused,
    traces,
    log,
  });
  claims.start();
  distributor.start();
  // After membership (it needs the master's id); it shares the event subscription.
  const schedulers = new SchedulerManager({
    ctx,
    config,
    masterid,
    log,
    subscribe: deps.events,
    workdir: deps.workdir,
    env: deps.env,
    ...(deps.timing?.schedulerRoundMs ? { roundMs: deps.timing.schedulerRoundMs } : {}),
  });
  await schedulers.start();

  const d = distributor;
  const shutdownSteps = (): ShutdownStep[] => [
    { name: 'claiming', run: async () => d.stop() },
    {
      name: 'running builds',
      run: async () => {
        let timer: NodeJS.Timeout | undefined;
        const drained = await Promise.race([
          runner.whenIdle().then(() => true),
          new Promise<boolean>((r) => {
            timer = setTimeout(() => r(false), drainMs);
          }),
        ]);
        clearTimeout(timer);
        if (!drained) {
          log.warn({ builds: runner.count }, 'handing running builds back');
          runner.abandonAll('master stopping');
          await runner.whenIdle();
        }
        claims.stop();
      },
    },
    // After the builds (their last logs get queued), before the stores close.
    { name: 'jobs', run: () => jobs.stop() },
    { name: 'reporters', run: async () => reporters?.stop() },
    // Before masterStopped: a round after it would take schedulers back for a stopped master.
    { name: 'schedulers', run: () => schedulers.stop() },
    {
      name: 'events',
      run: () => {
        locks.close();
        return stopListening();
      },
    },
    { name: 'membership', run: () => membership.stop() },
    { name: 'workers', run: () => workers.close() },
  ];
  return {
    masterid: membership.masterid,
    runner,
    distributor: d,
    workers,
    schedulers,
    metrics: async () => {
      const all = Registry.merge([
        metrics.registry,
        jobs.registry,
        ...(reporters ? [reporters.registry] : []),
      ]);
      return { contentType: all.contentType, body: await all.metrics() };
    },
    shutdownSteps,
    async stop() {
      let failure: unknown = null;
      for (const step of shutdownSteps()) {
        try {
          await step.run();
        } catch (err) {
          failure ??= err;
          log.error({ step: step.name, err }, 'stop step failed');
        }
      }
      if (failure) throw failure;
    },
  };
}
