// The reporters of a master's configuration, as BullMQ jobs: each reporter has its queue
// (`report-<name>`), every master queues the jobs of the events it hears and runs any
// reporter's jobs, so a slow or failing forge holds up a queue, never a build.
//
// - Queueing: the job's id is the event's (events.ts), so the masters that all hear one event
//   queue one job, and it waits in Redis across a master's restart.
// - Running: deliver.ts, with retries and exponential backoff (REPORT_ATTEMPTS over about
//   eight minutes by default); a job that used them up stays failed, counted in /metrics.
// - Catching up: each master also queues, from the database, the jobs of build ends that no
//   master heard (catch-up.ts), so that a build's end is reported at least once.
// - /metrics: each queue's depth, attempts and failures (flotilla_jobs_* with queue
//   `report-<name>`), and flotilla_reports_total{reporter,outcome}: sent, nothing (the
//   generators had nothing to say), superseded, gone (the request was deleted).
// Nothing of this exists without a `reporters` section: no queue, no worker, no listener.
import { type Job, type JobsOptions, Queue, Worker } from 'bullmq';
import { Counter, Registry } from 'prom-client';
import type { MasterConfig } from '../../core/config/master-config.js';
import type { ConnectionPool } from '../../core/db/pool.js';
import { EVENTS_LOST_KEY, type Subscribe } from '../../core/events/bus.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { closeQueues } from '../jobs/close-queues.js';
import type { JobMetrics } from '../jobs/metrics.js';
import { consumerConnection, producerConnection, type RedisTarget } from '../jobs/queues.js';
import { CATCH_UP_MS, catchUp } from './catch-up.js';
import { deliver } from './deliver.js';
import { type ReportJob, reportJobId, reportJobOf } from './events.js';
import { createReporters, type Reporter, wants } from './reporter.js';

export const REPORT_ATTEMPTS = 8;
export const REPORT_BACKOFF_MS = 2000;

export const reportQueueName = (reporter: string): string => `report-${reporter}`;

export interface ReportersOptions {
  db: ConnectionPool;
  config: MasterConfig;
  /** Where credentials named by `<key>_env` are read. */
  env: Readonly<Record<string, string | undefined>>;
  redis: RedisTarget;
  prefix: string;
  subscribe: Subscribe & { ready: Promise<void> };
  jobMetrics: JobMetrics;
  log: Logger;
  /** First backoff delay (default REPORT_BACKOFF_MS); each retry waits twice the previous. */
  backoffMs?: number;
  attempts?: number;
}

export interface Reporters {
  readonly registry: Registry;
  /** Stop hearing events, let running deliveries finish, close every connection. Idempotent. */
  stop(): Promise<void>;
}

/** The reporters' queues and workers, or null when the configuration has none. */
export async function startReporters(opts: ReportersOptions): Promise<Reporters | null> {
  if (opts.config.reporters.length === 0) return null;
  // Made first: a credential that cannot be read stops the start before anything is opened.
  const reporters = createReporters(opts.config, opts.env);
  const log = opts.log.child({ component: 'reporters' });
  const registry = new Registry();
  const outcomes = new Counter({
    name: 'flotilla_reports_total',
    help: 'Report jobs this master ran to their end, by reporter and outcome.',
    labelNames: ['reporter', 'outcome'],
    registers: [registry],
  });
  const jobOptions: JobsOptions = {
    attempts: opts.attempts ?? REPORT_ATTEMPTS,
    backoff: { type: 'exponential', delay: opts.backoffMs ?? REPORT_BACKOFF_MS },
    // Kept an hour so that every master's add of one event finds it; failed ones a week.
    removeOnComplete: { age: 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
  };
  const queues: Queue<ReportJob>[] = [];
  const workers: Worker[] = [];
  const byQueue = new Map<Reporter, Queue<ReportJob>>();
  for (const reporter of reporters) {
    const name = reportQueueName(reporter.name);
    const queue = new Queue<ReportJob>(name, {
      connection: producerConnection(opts.redis, `flotilla-master-${name}`),
      prefix: opts.prefix,
      defaultJobOptions: jobOptions,
    });
    queue.on('error', (err) => log.warn({ queue: name, err: err.message }, 'queue error'));
    queues.push(queue);
    byQueue.set(reporter, queue);
    opts.jobMetrics.watch(queue);
    const queued = async (jobId: string) => {
      const state = await queue.getJobState(jobId);
      return state === 'waiting' || state === 'active' || state === 'delayed' || state === 'prioritized';
    };
    // Zero rather than absent before the first report, so rate() and alerts see the series.
    outcomes.inc({ reporter: reporter.name, outcome: 'sent' }, 0);
    const worker = new Worker<ReportJob>(
      name,
      (job: Job<ReportJob>, token?: string) =>
        opts.jobMetrics.run(name, job, async () => {
          const outcome = await deliver({ db: opts.db, config: opts.config, reporter, queued }, job, token);
          outcomes.inc({ reporter: reporter.name, outcome });
          log.debug({ reporter: reporter.name, job: job.id, outcome }, 'report delivered');
          return outcome;
        }),
      {
        connection: consumerConnection(opts.redis, `flotilla-master-${name}-worker`),
        prefix: opts.prefix,
        concurrency: 4,
      },
    );
    worker.on('error', (err) => log.warn({ queue: name, err: err.message }, 'worker error'));
    worker.on('failed', (job, err) =>
      log.warn(
        { reporter: reporter.name, job: job?.id, attempt: job?.attemptsMade, err: err.message },
        'report failed',
      ),
    );
    workers.push(worker);
  }

  let passing: Promise<void> = Promise.resolve();
  const pass = () => {
    passing = passing
      .then(() => catchUp(opts.db, byQueue))
      .then((n) => {
        if (n) log.debug({ builds: n }, 'build ends no master heard, queued if not already');
      })
      .catch((err) => log.warn({ err: (err as Error).message }, 'catch-up failed'));
  };
  const unsubscribe = opts.subscribe((msg) => {
    // Events a process could not publish may have been build ends: look for them now, not at
    // the next catch-up.
    if (msg.k === EVENTS_LOST_KEY) return pass();
    const job = reportJobOf(msg);
    if (!job) return;
    for (const [reporter, queue] of byQueue) {
      if (!wants(reporter, job.kind)) continue;
      queue
        .add(job.kind, job, { jobId: reportJobId(job) })
        .catch((err) =>
          log.warn({ reporter: reporter.name, key: msg.k, err: (err as Error).message }, 'report not queued'),
        );
    }
  });
  await opts.subscribe.ready;
  // After subscribing: an event from now on is queued as it comes, and one before it is in
  // the database for the first pass to find.
  pass();
  const catchUpTimer = setInterval(pass, CATCH_UP_MS);
  catchUpTimer.unref();

  let stopping: Promise<void> | undefined;
  return {
    registry,
    stop: () => {
      stopping ??= (async () => {
        unsubscribe();
        clearInterval(catchUpTimer);
        await passing;
        await closeQueues(workers, queues, log);
        for (const q of queues) opts.jobMetrics.unwatch(q);
        for (const r of reporters) r.sender.close?.();
      })();
      return stopping;
    },
  };
}
