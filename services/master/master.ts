// A master, given what it runs on: its membership in the cluster, its background jobs, the
// workers connected to it, the builds it claims and runs, its schedulers and change sources,
// and what it does with the cluster's events. Everything it needs comes in `deps`, as the
// API's buildApp takes its own (the process, service.ts, reads the environment and makes
// them); tests start one in-process with a database, a Redis and scripted workers. Its types
// are master-deps.ts's; what it does with a reloaded configuration is reconfigure.ts's.
//
// startMaster is the list of those parts (core/lifecycle/parts.ts), in the order they start;
// they stop in reverse, and a start that fails stops those before it, so a master that
// reports failure leaves nothing running (no heartbeat, no job worker, no listener).
import { Registry } from 'prom-client';
import { ConfigError } from '../core/config/errors.js';
import type { MasterConfig } from '../core/config/master-config.js';
import { configMetrics, configVersion } from '../core/config/version.js';
import {
  addChange,
  type DataContext,
  pausedWorkerNames,
  queuedBuildRequestCount,
  transact,
} from '../core/data/index.js';
import { collectEventMetrics } from '../core/events/metrics.js';
import { Parts } from '../core/lifecycle/parts.js';
import { settledWithin } from '../core/lifecycle/within.js';
import { objectStoreOf } from '../core/objstore/from-config.js';
import type { Logger } from '../core/telemetry/logger.js';
import { Locks } from './builds/locks.js';
import { BuildRunner } from './builds/runner.js';
import { Claims } from './claims.js';
import { listenToCluster } from './cluster-events.js';
import { Distributor } from './distributor.js';
import type { Jobs } from './jobs/index.js';
import { logCodec } from './jobs/log-codec.js';
import { JobMetrics } from './jobs/metrics.js';
import { DEFAULT_PREFIX } from './jobs/queues.js';
import { livenessOf, livenessProblems } from './liveness.js';
import type { Master, MasterDeps } from './master-deps.js';
import { Membership } from './membership.js';
import { MasterMetrics } from './metrics.js';
import { OldBuildCancellers } from './old-build-canceller.js';
import { type RunningConfig, reconfigurer, SECTIONS } from './reconfigure.js';
import type { Reporters } from './reporters/index.js';
import { Restartable } from './restartable.js';
import { SchedulerManager } from './schedulers/index.js';
import { tryRequests } from './schedulers/try-requests.js';
import { secretsProviders } from './secrets.js';
import { RequestTraces } from './trace-links.js';

export type { Master, MasterDeps } from './master-deps.js';

// How long a stopping master lets its running builds finish before handing them back.
export const DEFAULT_DRAIN_MS = 60_000;
// The job that expires masters runs once a minute across the cluster; a short expiry (tests,
// small clusters) is checked twice per expiry instead.
const EXPIRE_PERIOD_MS = 60_000;

export async function startMaster(deps: MasterDeps): Promise<Master> {
  const { db, redis, config, log } = deps;
  const ctx: DataContext = {
    db,
    redis,
    onPublishError: (err) => log.warn({ err: err.message }, 'events not published'),
  };
  // Refused before anything starts: a secrets directory anyone may read (as Buildbot), an unset key pair.
  const secrets = secretsProviders(config.secrets, deps.env, log);
  const objectStore = objectStoreOf(config.object_store, deps.env);
  const timingProblems = livenessProblems(config);
  if (timingProblems.length)
    throw new ConfigError(
      'CONFIG_SCHEMA',
      'the master timings cannot keep a request from running twice',
      timingProblems,
    );
  const liveness = livenessOf(config);
  // What the parts share and that starts nothing: the metrics' registry (its gauges read the
  // parts once the last has started), the traces of new requests, and the distributor's wake-up
  // (work may be waiting; for the builders named, or all), which parts started before it.
  const metrics = new MasterMetrics();
  // The jobs' metrics, which the reporters' queues join (jobs/metrics.ts), made here since
  // the reporters start while the jobs are still starting.
  const jobMetrics = new JobMetrics([]);
  collectEventMetrics(metrics.registry, redis);
  // What runs: a reload replaces it once the parts have taken it on (reconfigure.ts).
  const running: RunningConfig = { config, version: configVersion(config), secrets };
  configMetrics(metrics.registry, () => running.version);
  const traces = new RequestTraces();
  const wakers = new Set<(builderids?: number[]) => void>();
  const wake = (builderids?: number[]) => {
    for (const w of wakers) w(builderids);
  };
  const parts = new Parts({ log, failAt: deps.failAt });

  // Its row in `masters` and the heartbeat that keeps it (and the lease) alive.
  const membership = await parts.start({
    name: 'membership',
    start: async () => {
      const m = new Membership(ctx, deps.name, config, log);
      await m.start();
      return m;
    },
    stop: (m) => m.stop(),
  });
  const masterid = () => membership.masterid;
  // Background jobs shared by the cluster: master expiry and log compression (BullMQ). Started
  // behind the parts after it, since none of those waits for it: its queues' and workers' Redis
  // connections and schedules took 0.1-1.0 s of a start's wall time before the worker port
  // opened, for 0.06-0.09 s of CPU (fleet phases A and A2, 1,000 builders, 2026-11-29, load
  // 12-20, MASTER_LOG's part start times: load/results/fleet.md). The master is ready only once it has started (parts.complete()).
  const jobsStarting = parts.startBehind({
    name: 'jobs',
    start: async () => {
      // Loaded here, not with the master's code (BullMQ and the jobs: 228 modules). service.js's
      // import, with and without, three pairs: 462/356, 428/393, 469/377 ms of CPU (medians of
      // seven, 2026-11-29, load 9-11: load/fleet/import-cpu.ts; test/master/reporters/packages.test.ts).
      const { startJobs } = await import('./jobs/index.js');
      const j = await startJobs({
        ctx,
        redis: deps.jobsRedis,
        metrics: jobMetrics,
        ...(deps.jobsPrefix ? { prefix: deps.jobsPrefix } : {}),
        masterid,
        codec: config.log_compression,
        retention: config.retention,
        objectStore,
        expirySeconds: config.master_expiry_seconds,
        expirePeriodMs: Math.min(EXPIRE_PERIOD_MS, config.master_expiry_seconds * 500),
        log,
      });
      for (const logid of membership.previousLifeLogs) j.queueCompressLogSoon(logid);
      return j;
    },
    // After the builds (their last logs get queued), before the stores close.
    stop: (j) => j.stop(),
  });
  // What a build hands the jobs once they have started (a log or an artifact to move).
  const withJobs = (queue: (j: Jobs) => void) => void jobsStarting.then(queue, () => {});
  // Reporters hear events from here on; none configured, nothing is started, nor loaded.
  // A reload that changes their sections restarts them (reconfigure.ts).
  const reportersOf = async (c: MasterConfig): Promise<Reporters | null> =>
    c.reporters.length === 0
      ? null
      : (await import('./reporters/index.js')).startReporters({
          db,
          config: c,
          env: deps.env,
          redis: deps.jobsRedis,
          prefix: deps.jobsPrefix ?? DEFAULT_PREFIX,
          subscribe: deps.events,
          jobMetrics,
          log,
          ...(deps.timing?.reportBackoffMs !== undefined ? { backoffMs: deps.timing.reportBackoffMs } : {}),
        });
  const reporters = await parts.start({
    name: 'reporters',
    start: () =>
      Restartable.start('reporters', SECTIONS.reporters, reportersOf, async (r) => r?.stop(), config),
    stop: (r) => r.stop(),
  });
  // Renews the claims of running builds: stops after they have (claiming's stop drains them).
  const claims = await parts.start({
    name: 'claim renewal',
    start: () => {
      const c = new Claims({ ctx, masterid, log, renewMs: deps.timing?.claimRenewMs });
      c.start();
      return c;
    },
    stop: (c) => c.stop(),
  });
  // Runs what the distributor claims; let go of everything when membership says the cluster
  // took it back (expired) or may soon (the lease ran out).
  const { runner, locks } = await parts.start({
    name: 'runner',
    start: () => {
      const locks = new Locks(ctx, config.locks, masterid, deps.events);
      const r = new BuildRunner({
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
        onLogFinished: (logid) => withJobs((j) => j.queueCompressLogSoon(logid)),
        onArtifactComplete: (id) => withJobs((j) => j.queueMoveArtifactSoon(id)),
        objectStore,
      });
      const detach = membership.attach({
        expired: () => r.abandonAll('this master was expired while it was away', true),
        leaseLost: () => r.abandonAll('the database has been out of reach past the outage limit', true),
      });
      return { runner: r, locks, detach };
    },
    stop: async ({ runner: r, locks, detach }) => {
      detach();
      // Claiming's stop has drained the builds; a build started in between is handed back.
      r.abandonAll('master stopping');
      await r.whenIdle();
      // After the builds: one waiting for a lock wakes on the release events it hears.
      locks.close();
    },
  });
  // Where workers connect; their connections and losses are recorded as they come.
  const workers = await parts
    .start({
      name: 'worker listeners',
      start: async () => {
        const recording = new Set<Promise<void>>();
        const record = (what: string, worker: string, write: Promise<void>) => {
          const p = write
            .catch((err) => log.warn({ worker, err: (err as Error).message }, `could not record the ${what}`))
            .finally(() => recording.delete(p));
          recording.add(p);
          return p;
        };
        const w = await deps.listenForWorkers({
          connected: (c) =>
            void record('connection', c.name, membership.workerConnected(c.name, c.info)).then(() => wake()),
          disconnected: (c) => void record('disconnection', c.name, membership.workerDisconnected(c.name)),
          // A change sent to the PB port (Buildbot's PBChangeSource), added as the hooks add theirs.
          addChange: (c) => transact(ctx, (tx) => addChange(tx, c)),
          // A try sent to the PB port (Buildbot's Try_Userpass).
          tries: tryRequests(ctx, log),
        });
        const detach = membership.attach({
          connectedWorkers: () => w.connected().map((c) => ({ name: c.name, info: c.info })),
        });
        return { workers: w, recording, detach };
      },
      stop: async ({ workers: w, recording, detach }) => {
        detach();
        await w.close();
        // Before membership leaves the cluster: the workers' rows are this master's last writes.
        await Promise.all(recording);
      },
    })
    .then((h) => h.workers);
  // The cluster's events: new requests (wake), stops of builds, operators' worker actions.
  const { paused } = await parts.start({
    name: 'cluster events',
    start: async () => {
      const names = config.workers.map((w) => w.name);
      const paused = new Set(await pausedWorkerNames(db, names));
      // Read at each event: a reload adds workers to membership's map.
      const workerName = (id: number) => {
        for (const [name, workerid] of membership.workerIds) if (workerid === id) return name;
        return undefined;
      };
      const stopListening = await listenToCluster({
        subscribe: deps.events,
        ctx,
        runner,
        wake,
        workers,
        workerName,
        paused,
        traces,
        log,
      });
      return { paused, stopListening };
    },
    stop: (h) => h.stopListening(),
  });
  // After membership (it needs the master's id); it shares the event subscription. Before the
  // distributor, so that it stops after the builds have drained and before membership leaves
  // (a round after that would take schedulers back for a stopped master). Started behind, as
  // the jobs are: its first round, a transaction per scheduler, held claiming back; membership
  // to claiming was 155-1,231 ms before, 58-358 ms after (fleet phase A, 1,000 builders; a restart
  // 1.5-1.7 s, then 0.27-0.94 s: load/results/fleet.md, 2026-11-29 03:29-04:20). A dependent
  // scheduler acts on a build set that completed before it started (dependent.test.ts).
  const schedulersStarting = parts.startBehind({
    name: 'schedulers',
    start: async () => {
      const s = new SchedulerManager({
        ctx,
        config,
        masterid,
        log,
        subscribe: deps.events,
        workdir: deps.workdir,
        env: deps.env,
        ...(deps.timing?.schedulerRoundMs ? { roundMs: deps.timing.schedulerRoundMs } : {}),
      });
      await s.start();
      return s;
    },
    stop: (s) => s.stop(),
  });
  // Cancels the work a newer change on its branch supersedes (Buildbot's OldBuildCanceller);
  // on every master, one of which acts on each change (old-build-canceller.ts).
  const cancellersOf = async (c: MasterConfig) => {
    const started = new OldBuildCancellers({ ctx, services: c.services, subscribe: deps.events, log });
    await started.start();
    return started;
  };
  const cancellers = await parts.start({
    name: 'old build cancellers',
    start: () =>
      Restartable.start('old build cancellers', SECTIONS.cancellers, cancellersOf, (c) => c.stop(), config),
    stop: (c) => c.stop(),
  });
  // Claims requests for idle workers and starts their builds. Stops first: no more claims,
  // then the running builds get drainMs to finish before they are handed back.
  const distributor = await parts
    .start({
      name: 'claiming',
      start: () => {
        const d = new Distributor({
          ctx,
          config: () => running.config,
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
        const kick = (builderids?: number[]) => d.kick(builderids);
        wakers.add(kick);
        d.start();
        return { distributor: d, kick };
      },
      stop: async ({ distributor: d, kick }) => {
        wakers.delete(kick);
        d.stop();
        await drain(runner, deps.drainMs ?? DEFAULT_DRAIN_MS, log);
      },
    })
    .then((h) => h.distributor);
  await parts.start({
    name: 'metrics',
    start: () =>
      metrics.watch({
        running: () => runner.count,
        queued: () => queuedBuildRequestCount(db, [...membership.builderIds.values()]),
        workers: () => workers.connected().length,
        claims: () => distributor.claimed,
      }),
  });
  await parts.complete();
  const jobs = await jobsStarting;
  const schedulers = await schedulersStarting;

  const reconfigure = reconfigurer({
    running,
    db,
    env: deps.env,
    log,
    membership,
    locks,
    runner,
    workers,
    paused,
    schedulers,
    restartables: [reporters, cancellers] as Restartable<unknown>[],
    wake,
  });

  return {
    masterid: membership.masterid,
    runner,
    distributor,
    workers,
    schedulers,
    get config() {
      return running.version;
    },
    reconfigure,
    metrics: async () => {
      const all = Registry.merge([
        metrics.registry,
        jobs.registry,
        ...(reporters.current ? [reporters.current.registry] : []),
      ]);
      return { contentType: all.contentType, body: await all.metrics() };
    },
    shutdownSteps: () => parts.steps(),
    stop: () => parts.stop(),
  };
}

/** Let running builds finish within `ms`, then hand back those still running. */
async function drain(runner: BuildRunner, ms: number, log: Logger): Promise<void> {
  if (await settledWithin(runner.whenIdle(), ms)) return;
  log.warn({ builds: runner.count }, 'handing running builds back');
  runner.abandonAll('master stopping');
  await runner.whenIdle();
}
