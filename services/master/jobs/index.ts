// The master's background jobs (BullMQ over the cluster's Redis): expire-masters and
// retention, each repeated once per period across the cluster, compress-log, queued when
// a log finishes, move-log, queued once a log is compressed when an object store is
// configured (or when it finishes, with compression off), move-artifact, and with a store the
// object-backfill sweep, once per period across the cluster, which queues the moves of what is
// still in PostgreSQL (object-backfill.ts). Every
// master runs a worker for each queue; stop() lets the running jobs finish, then closes every
// connection it opened (the DataContext's database and Redis are the caller's to close).
//
// Redis is a cache of liveness, not of duties: a Redis that comes back empty (restarted
// without persistence, failed over to a replica that had not caught up) has forgotten the
// expire-masters schedule, and then no master would ever be expired again (seen: a dead
// master "active" for minutes against a 15 s expiry, its requests held). So every master
// confirms the schedule once per period, not only at its start; the upsert is idempotent and
// keeps one job per period slot (expire-masters.ts), so confirming it costs one command.
import { type Job, Queue, Worker } from 'bullmq';
import type { RetentionConfig } from '../../core/config/master-config.js';
import type { DataContext } from '../../core/data/index.js';
import type { ObjectStore } from '../../core/objstore/client.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { closeQueues } from './close-queues.js';
import {
  type CompressLogData,
  type CompressLogRetry,
  compressLogJobOptions,
  compressLogProcessor,
  type LogCompression,
  logCodec,
  queueCompressLog,
} from './compress-log.js';
import {
  DEFAULT_EXPIRE_PERIOD_MS,
  type ExpireSettings,
  expireMastersProcessor,
  scheduleExpireMasters,
} from './expire-masters.js';
import { JobMetrics } from './metrics.js';
import { type MoveArtifactData, moveArtifactProcessor, queueMoveArtifact } from './move-artifact.js';
import { type MoveLogData, moveLogJobOptions, moveLogProcessor, queueMoveLog } from './move-log.js';
import {
  BackfillMetrics,
  type BackfillSettings,
  backfillProcessor,
  backfillTargets,
  DEFAULT_BACKFILL_PERIOD_MS,
  scheduleBackfill,
  unscheduleBackfill,
} from './object-backfill.js';
import {
  consumerConnection,
  DEFAULT_PREFIX,
  producerConnection,
  QUEUES,
  type QueueName,
  type RedisTarget,
} from './queues.js';
import {
  retentionConfigured,
  retentionProcessor,
  scheduleRetention,
  unscheduleRetention,
} from './retention.js';
import { RetentionMetrics } from './retention-metrics.js';

export type { LogCompression } from './compress-log.js';
export { DEFAULT_PREFIX, QUEUES, type RedisTarget } from './queues.js';

export interface JobsOptions extends ExpireSettings {
  /** Database and event bus the jobs' data operations use. */
  ctx: DataContext;
  /** Where the queues live: the master's REDIS_URL, or ioredis options. */
  redis: RedisTarget;
  /** This master's id (masters.id); the jobs run only once it is registered. */
  masterid: () => number;
  /** log_compression of the master's configuration. */
  codec: LogCompression;
  log: Logger;
  /**
   * The metrics its queues join: the master's, made before the jobs start so that the
   * reporters' queues can join them while the jobs are still starting. Its own without.
   */
  metrics?: JobMetrics;
  /** Redis key prefix of the queues (default `flotilla:jobs`); the cluster must agree on it. */
  prefix?: string;
  /** How often expire-masters runs across the cluster (default 60,000 ms); masters must agree. */
  expirePeriodMs?: number;
  compressRetry?: CompressLogRetry;
  /** compress-log jobs run at once on this master (default 2). */
  compressConcurrency?: number;
  /**
   * The retention section of the master's configuration. A master with horizons configured
   * creates and confirms the cluster's retention schedule, the section in its jobs' data;
   * one without removes the schedule. Every master runs the worker, which applies the
   * section the job carries.
   */
  retention?: RetentionConfig;
  /** Where finished logs move to (object_store); none: they stay in PostgreSQL. */
  objectStore?: ObjectStore | null;
  moveRetry?: CompressLogRetry;
  /** The sweep that moves what finished before the store was configured (object-backfill.ts). */
  backfill?: BackfillSettings;
  /**
   * The part a move reads and uploads at a time (core/objstore/streamed-put.ts: default
   * 8 MiB, at least S3's 5 MiB). Tests take 5 MiB, to move objects of a few parts.
   */
  movePartBytes?: number;
  /**
   * How long a worker's hold on a running job lasts unrenewed (BullMQ's lockDuration, default
   * 30,000 ms): a master that dies mid-job has its job handed to another after about this
   * long. Tests shorten it.
   */
  lockDurationMs?: number;
  /**
   * How often a worker looks for jobs whose hold lapsed (BullMQ's stalledInterval): the
   * lock's duration unless given. Tests of a master killed mid-job take a long hold (a busy
   * machine's pause must not lose it) and a short look, so that the dead master's job comes
   * within a second of its lock lapsing, not after up to two of the hold's periods.
   */
  stalledIntervalMs?: number;
}

export interface Jobs {
  /** Queue the compression of a finished log. Rejects if Redis cannot take the job. */
  queueCompressLog(logid: number): Promise<void>;
  /** Queue the move of a finished log to the object store (none configured: nothing). */
  queueMoveLog(logid: number): Promise<void>;
  /**
   * Queue the move of a complete artifact to the object store in the background (none
   * configured: nothing), tried again while Redis cannot take the job, as queueCompressLogSoon.
   */
  queueMoveArtifactSoon(id: number): void;
  /**
   * Queue it in the background, trying again while Redis cannot take the job (QUEUE_TRIES,
   * about 40 s: a Sentinel failover takes seconds), until stop(). A log finished during a
   * failover is compressed once Redis is back; past the tries it stays uncompressed, logged.
   */
  queueCompressLogSoon(logid: number): void;
  /** For the probe server's `metrics` option: Prometheus text and its content type. */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** The metrics' registry, to merge with other registries of the process. */
  readonly registry: JobMetrics['registry'];
  /** The jobs' metrics, for queues opened elsewhere (the reporters') to join. */
  readonly jobMetrics: JobMetrics;
  /** Let running jobs finish, then close every queue and worker connection. Idempotent. */
  stop(): Promise<void>;
}

// 1 + 2 + 4 + 8 + 16 s between six tries, each of which gives up after the producer
// connection's three retries (queues.ts) when Redis is away.
const QUEUE_TRIES = 6;

export async function startJobs(opts: JobsOptions): Promise<Jobs> {
  const prefix = opts.prefix ?? DEFAULT_PREFIX;
  const codec = logCodec(opts.codec);
  const log = opts.log.child({ component: 'jobs' });
  let metrics: JobMetrics | undefined;
  // Built first: they check their settings before anything is opened. Their repeats are
  // counted once the metrics exist (a job runs only after that).
  const repeated = (queue: QueueName) => () => metrics?.repeated(queue);
  const expireProcessor = expireMastersProcessor(
    opts.ctx,
    opts.masterid,
    opts,
    log,
    repeated(QUEUES.expireMasters),
    // Called from a job, so after queueSoon below exists.
    (logids) => {
      for (const logid of logids) queueSoon(logid);
    },
  );
  const store = opts.objectStore ?? null;
  const compressProcessor = compressLogProcessor(opts.ctx, log, repeated(QUEUES.compressLog), (logid) =>
    moveSoon(logid),
  );
  const partBytes = opts.movePartBytes;
  const moveProcessor = store
    ? moveLogProcessor(opts.ctx, store, log, repeated(QUEUES.moveLog), partBytes)
    : null;
  const moveArtifact = store
    ? moveArtifactProcessor(opts.ctx, store, log, {
        onRepeat: repeated(QUEUES.moveArtifact),
        ...(partBytes === undefined ? {} : { partBytes }),
      })
    : null;
  const queue = <D>(name: QueueName, defaultJobOptions = {}) =>
    new Queue<D>(name, {
      connection: producerConnection(opts.redis, `flotilla-master-${name}`),
      prefix,
      defaultJobOptions,
    });
  const compress = queue<CompressLogData>(QUEUES.compressLog, compressLogJobOptions(opts.compressRetry));
  const expire = queue(QUEUES.expireMasters);
  const retain = queue(QUEUES.retention);
  const move = queue<MoveLogData>(QUEUES.moveLog, moveLogJobOptions(opts.moveRetry));
  // Retried as a log's move is: the same store, the same failures.
  const moveArtifacts = queue<MoveArtifactData>(QUEUES.moveArtifact, moveLogJobOptions(opts.moveRetry));
  const sweep = queue(QUEUES.objectBackfill);
  const queues = [compress, expire, retain, move, moveArtifacts, sweep] as Queue[];
  for (const q of queues)
    q.on('error', (err) => log.warn({ queue: q.name, err: err.message }, 'queue error'));
  if (opts.metrics) for (const q of queues) opts.metrics.watch(q);
  metrics = opts.metrics ?? new JobMetrics(queues);
  const retentionMetrics = new RetentionMetrics(metrics.registry);
  const backfillMetrics = new BackfillMetrics(metrics.registry);
  const retention = opts.retention && retentionConfigured(opts.retention) ? opts.retention : null;

  const workers: Worker[] = [];
  let confirm: NodeJS.Timeout | undefined;
  let confirmRetention: NodeJS.Timeout | undefined;
  let confirmBackfill: NodeJS.Timeout | undefined;
  const retries = new Set<NodeJS.Timeout>();
  let closing = false;
  const stop = async () => {
    closing = true;
    for (const t of retries) clearTimeout(t);
    clearInterval(confirm);
    clearInterval(confirmRetention);
    clearInterval(confirmBackfill);
    await closeQueues(workers, queues, log);
  };
  let stopping: Promise<void> | undefined;
  // Schedule a cluster-wide job, then confirm it each period for the reason the expire-masters
  // schedule is (header).
  const scheduled = async (what: string, periodMs: number, upsert: () => Promise<void>) => {
    await upsert();
    const timer = setInterval(() => {
      upsert().catch((err) =>
        log.warn({ err: (err as Error).message }, `could not confirm the ${what} schedule`),
      );
    }, periodMs);
    timer.unref();
    return timer;
  };

  try {
    await scheduleExpireMasters(expire, opts.expirePeriodMs);
    confirm = setInterval(() => {
      scheduleExpireMasters(expire, opts.expirePeriodMs).catch((err) =>
        log.warn({ err: (err as Error).message }, 'could not confirm the expire-masters schedule'),
      );
    }, opts.expirePeriodMs ?? DEFAULT_EXPIRE_PERIOD_MS);
    confirm.unref();
    if (retention) {
      confirmRetention = await scheduled('retention', retention.period_seconds * 1000, () =>
        scheduleRetention(retain, retention),
      );
    } else {
      // A section removed from the configuration stops the cleanup: the schedule would
      // otherwise go on, in Redis, with the section it was last given.
      await unscheduleRetention(retain);
    }
    if (store) {
      const periodMs = opts.backfill?.periodMs ?? DEFAULT_BACKFILL_PERIOD_MS;
      confirmBackfill = await scheduled('object-store backfill', periodMs, () =>
        scheduleBackfill(sweep, periodMs),
      );
    } else {
      // No store here, nothing to move to: as a retention section removed (above).
      await unscheduleBackfill(sweep);
    }
    const worker = <D, R>(name: QueueName, concurrency: number, fn: (job: Job<D>) => Promise<R>) => {
      const w = new Worker<D, R>(name, (job) => metrics.run(name, job, () => fn(job)), {
        connection: consumerConnection(opts.redis, `flotilla-master-${name}-worker`),
        prefix,
        concurrency,
        ...(opts.lockDurationMs
          ? {
              lockDuration: opts.lockDurationMs,
              stalledInterval: opts.stalledIntervalMs ?? opts.lockDurationMs,
            }
          : {}),
      });
      w.on('error', (err) => log.warn({ queue: name, err: err.message }, 'worker error'));
      w.on('failed', (job, err) =>
        log.warn({ queue: name, job: job?.id, attempt: job?.attemptsMade, err: err.message }, 'job failed'),
      );
      workers.push(w);
    };
    worker(QUEUES.expireMasters, 1, expireProcessor);
    worker(QUEUES.compressLog, opts.compressConcurrency ?? 2, compressProcessor);
    if (moveProcessor) worker(QUEUES.moveLog, opts.compressConcurrency ?? 2, moveProcessor);
    if (moveArtifact) worker(QUEUES.moveArtifact, opts.compressConcurrency ?? 2, moveArtifact);
    if (store)
      worker(
        QUEUES.objectBackfill,
        1,
        backfillProcessor(
          opts.ctx.db,
          backfillTargets({
            logs: { queue: move as Queue, add: (id) => queueMoveLog(move, id) },
            artifacts: { queue: moveArtifacts as Queue, add: (id) => queueMoveArtifact(moveArtifacts, id) },
          }),
          {
            ...(opts.backfill ? { settings: opts.backfill } : {}),
            stopping: () => closing,
            log,
            metrics: backfillMetrics,
          },
        ),
      );
    worker(
      QUEUES.retention,
      1,
      retentionProcessor(opts.ctx, log, retentionMetrics, () => closing, store),
    );
  } catch (err) {
    await stop();
    throw err;
  }

  // Queued in the background, tried again while Redis cannot take the job (QUEUE_TRIES).
  // `field` names the id in the warning (a log's, or an artifact's).
  const soon = (what: string, add: (logid: number) => Promise<void>, field = 'logid') => {
    const attempt = (logid: number, tried = 0): void => {
      add(logid).catch((err) => {
        if (closing || tried + 1 >= QUEUE_TRIES) {
          log.warn({ [field]: logid, tries: tried + 1, err: (err as Error).message }, `${what} not queued`);
          return;
        }
        const t = setTimeout(
          () => {
            retries.delete(t);
            attempt(logid, tried + 1);
          },
          1000 * 2 ** tried,
        );
        t.unref();
        retries.add(t);
      });
    };
    return attempt;
  };
  const queueMove = async (logid: number) => {
    if (store) await queueMoveLog(move, logid);
  };
  const moveSoon = soon('move', queueMove);
  const moveArtifactSoon = soon(
    'artifact move',
    async (id) => {
      if (store) await queueMoveArtifact(moveArtifacts, id);
    },
    'artifactid',
  );
  // With compression off, a finished log moves at once; otherwise once compressed.
  const queueSoon = soon('compression', (logid) =>
    codec === null ? queueMove(logid) : queueCompressLog(compress, logid, codec),
  );

  return {
    queueCompressLog: (logid) => queueCompressLog(compress, logid, codec),
    queueMoveLog: queueMove,
    queueMoveArtifactSoon: (id) => moveArtifactSoon(id),
    queueCompressLogSoon: (logid) => queueSoon(logid),
    metrics: () => metrics.text(),
    registry: metrics.registry,
    jobMetrics: metrics,
    stop: () => {
      stopping ??= stop();
      return stopping;
    },
  };
}
