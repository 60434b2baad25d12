// What the jobs show on the master's /metrics (Prometheus text, prom-client), and the span
// each job attempt runs in.
//
// - flotilla_jobs_queue_depth{queue,state}: jobs waiting (including paused and prioritized),
//   active, delayed (retries in their backoff among them) and failed for good, read from
//   Redis at scrape time. The queues are the cluster's, so every master reports the same
//   depth: aggregate with max, not sum.
// - flotilla_jobs_failures_total{queue}: failed attempts processed on this master; a job
//   tried three times before it succeeded counts two. Sum over masters.
// - flotilla_jobs_repeats_total{queue}: deliveries of a job that had had its effect already
//   (core/data/job-runs.ts), which therefore did nothing: BullMQ delivered it again, as it
//   may after a Redis failover. Sum over masters.
// - flotilla_jobs_duration_seconds{queue,outcome}: how long each attempt on this master
//   took, outcome `completed`, `failed`, or `delayed` (a job that chose to wait and run again).
// A queue whose counts cannot be read (Redis away) has no depth samples in that scrape rather
// than stale ones; the other metrics are this process's own and always answer.
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { Job, Queue } from 'bullmq';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { QueueName } from './queues.js';

const tracer = trace.getTracer('flotilla-master');

const DEPTH_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

export class JobMetrics {
  readonly registry = new Registry();
  private readonly failures: Counter<'queue'>;
  private readonly repeats: Counter<'queue'>;
  private readonly durations: Histogram<'queue' | 'outcome'>;

  private readonly queues: Queue[];

  constructor(queues: readonly Queue[]) {
    this.queues = [...queues];
    const all = this.queues;
    const depth: Gauge<'queue' | 'state'> = new Gauge({
      name: 'flotilla_jobs_queue_depth',
      help: 'Jobs in each state of a background queue (the whole cluster).',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      collect: async () => {
        await Promise.all(
          all.map(async (q) => {
            try {
              const c = await q.getJobCounts(
                'waiting',
                'paused',
                'prioritized',
                'active',
                'delayed',
                'failed',
              );
              const n = (state: string) => c[state] ?? 0;
              const values = {
                waiting: n('waiting') + n('paused') + n('prioritized'),
                active: n('active'),
                delayed: n('delayed'),
                failed: n('failed'),
              };
              for (const state of DEPTH_STATES) depth.set({ queue: q.name, state }, values[state]);
            } catch {
              for (const state of DEPTH_STATES) depth.remove({ queue: q.name, state });
            }
          }),
        );
      },
    });
    this.failures = new Counter({
      name: 'flotilla_jobs_failures_total',
      help: 'Job attempts that failed on this master (each retry counts).',
      labelNames: ['queue'],
      registers: [this.registry],
    });
    this.repeats = new Counter({
      name: 'flotilla_jobs_repeats_total',
      help: 'Deliveries of a job that had run already, and so did nothing.',
      labelNames: ['queue'],
      registers: [this.registry],
    });
    this.durations = new Histogram({
      name: 'flotilla_jobs_duration_seconds',
      help: 'Duration of job attempts on this master.',
      labelNames: ['queue', 'outcome'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [this.registry],
    });
    // Zero rather than absent before the first failure, so rate() and alerts see the series.
    for (const q of queues) {
      this.failures.inc({ queue: q.name }, 0);
      this.repeats.inc({ queue: q.name }, 0);
    }
  }

  /** A delivery of a job of `queue` that had run already. */
  repeated(queue: string): void {
    this.repeats.inc({ queue });
  }

  /** A queue opened after the others (a reporter's): its depth and attempts are shown too. */
  watch(queue: Queue): void {
    this.queues.push(queue);
    this.failures.inc({ queue: queue.name }, 0);
  }

  /** A queue closed before the others (a reporter's, on a reload that restarts the reporters). */
  unwatch(queue: Queue): void {
    const at = this.queues.indexOf(queue);
    if (at >= 0) this.queues.splice(at, 1);
  }

  /** One attempt of a job: in a span, timed, and counted when it fails. */
  run<T>(queue: QueueName | string, job: Job, fn: () => Promise<T>): Promise<T> {
    const attributes = {
      'messaging.system': 'bullmq',
      'job.queue': queue,
      'job.id': job.id ?? '',
      'job.attempt': job.attemptsMade + 1,
    };
    return tracer.startActiveSpan(`job ${queue}`, { attributes }, async (span) => {
      const end = this.durations.startTimer({ queue });
      try {
        const result = await fn();
        end({ outcome: 'completed' });
        return result;
      } catch (err) {
        // A job that put itself back to wait (a reporter's busy request) has not failed. Known
        // by the name BullMQ's DelayedError gives itself, not by its class: this file is loaded
        // at every master's start (master.ts), BullMQ only once the jobs start.
        if (err instanceof Error && err.name === 'DelayedError') {
          end({ outcome: 'delayed' });
          throw err;
        }
        end({ outcome: 'failed' });
        this.failures.inc({ queue });
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    });
  }

  /** What /metrics serves (the shape the probe server's `metrics` option takes). */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
