// object-backfill: the cluster's sweep that moves to the object store what finished while no
// store was configured (an installation that adds one after a year), and what a move that
// failed for good left behind (a job failed as stalled after its master was killed twice
// mid-move, the store away through every attempt). It runs once per period however many
// masters run, scheduled as retention is (one BullMQ job scheduler of a fixed id that every
// master with a store upserts, and confirms each period; one without removes it), and only on
// masters with a store (the others run no worker for it).
//
// A run walks the logs and then the artifacts still in PostgreSQL, in id order, a batch at a
// time (core/data/object-backfill.ts says how each batch is found without reading what has
// moved), and queues a move for each (queue-once.ts: one job per log or artifact; one that
// failed for good is retried with its attempts afresh, so nothing is lost for ever). It never
// has more than `inFlight` moves waiting or running in a queue: at the bound it waits for room.
// A run stops when its walk is done, at its time budget, or when the master stops; the next
// period walks again from the start, which costs per thing still to move, not per thing moved.
//
// What a walk found is logged per batch, and its count is flotilla_object_backfill_remaining:
// what was still in PostgreSQL at the last complete walk (a walk cut short raises it, never
// lowers it). Things that stay in PostgreSQL by design (a log or artifact over the move bound)
// are not counted.
import type { Job, Queue } from 'bullmq';
import { Counter, Gauge, type Registry } from 'prom-client';
import { artifactsToBackfill, type BackfillBatch, logsToBackfill } from '../../core/data/index.js';
import type { Queryable } from '../../core/db/pool.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { SCHEDULED_RUN_OPTIONS } from './queues.js';

export const BACKFILL_SCHEDULER_ID = 'object-backfill';

export interface BackfillSettings {
  /** How often a sweep runs across the cluster (default 5 minutes); masters should agree. */
  periodMs?: number;
  /** Ids read per statement (default 100). */
  batch?: number;
  /** Moves of a kind waiting or running at most, this sweep's and others' (default 50). */
  inFlight?: number;
  /** How long a run goes on before it leaves the rest to the next period (default 4/5 of it). */
  budgetMs?: number;
}

export const DEFAULT_BACKFILL_PERIOD_MS = 5 * 60_000;
const DEFAULT_BATCH = 100;
// Two masters moving two at a time keep busy; the queue stays small enough to read in Redis.
const DEFAULT_IN_FLIGHT = 50;
// How often a run at the bound looks again for room.
const ROOM_POLL_MS = 500;

export type BackfillKind = 'logs' | 'artifacts';

/** What a run walks for one kind: how to find a batch, queue a move, and count those in flight. */
export interface BackfillTarget {
  kind: BackfillKind;
  find(q: Queryable, after: number, limit: number): Promise<BackfillBatch>;
  queue(id: number): Promise<void>;
  inFlight(): Promise<number>;
}

/** The two kinds, moved through these queues by these functions. */
export function backfillTargets(moves: {
  logs: { queue: Queue; add(id: number): Promise<void> };
  artifacts: { queue: Queue; add(id: number): Promise<void> };
}): BackfillTarget[] {
  const inFlight = (queue: Queue) => async () => {
    const c = await queue.getJobCounts('waiting', 'paused', 'prioritized', 'active', 'delayed');
    return Object.values(c).reduce((a, b) => a + b, 0);
  };
  return [
    { kind: 'logs', find: logsToBackfill, queue: moves.logs.add, inFlight: inFlight(moves.logs.queue) },
    {
      kind: 'artifacts',
      find: artifactsToBackfill,
      queue: moves.artifacts.add,
      inFlight: inFlight(moves.artifacts.queue),
    },
  ];
}

export async function scheduleBackfill(queue: Queue, periodMs = DEFAULT_BACKFILL_PERIOD_MS): Promise<void> {
  await queue.upsertJobScheduler(
    BACKFILL_SCHEDULER_ID,
    { every: periodMs },
    { name: 'object-backfill', data: {}, opts: SCHEDULED_RUN_OPTIONS },
  );
}

export async function unscheduleBackfill(queue: Queue): Promise<void> {
  await queue.removeJobScheduler(BACKFILL_SCHEDULER_ID);
}

export class BackfillMetrics {
  private readonly remaining: Gauge<'kind'>;
  private readonly queued: Counter<'kind'>;
  private readonly last = new Map<BackfillKind, number>();

  constructor(registry: Registry) {
    this.remaining = new Gauge({
      name: 'flotilla_object_backfill_remaining',
      help: 'Logs and artifacts still in PostgreSQL to move to the object store, at the last sweep.',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.queued = new Counter({
      name: 'flotilla_object_backfill_queued_total',
      help: 'Moves the object-store sweep queued on this master, by kind.',
      labelNames: ['kind'],
      registers: [registry],
    });
  }

  /** What a walk found: a complete walk sets it, one cut short only raises it. */
  found(kind: BackfillKind, n: number, complete: boolean): void {
    const value = complete ? n : Math.max(n, this.last.get(kind) ?? 0);
    this.last.set(kind, value);
    this.remaining.set({ kind }, value);
  }

  queuedOne(kind: BackfillKind): void {
    this.queued.inc({ kind });
  }
}

export interface BackfillRun {
  found: Record<BackfillKind, number>;
  queued: Record<BackfillKind, number>;
  /** False when the run stopped with its walk unfinished. */
  finished: boolean;
}

/** One sweep over the data as it stands (exported for tests). */
export async function runBackfill(
  db: Queryable,
  targets: readonly BackfillTarget[],
  opts: {
    settings?: BackfillSettings;
    stopping?: () => boolean;
    log: Logger;
    metrics?: BackfillMetrics;
  },
): Promise<BackfillRun> {
  const s = opts.settings ?? {};
  const batch = s.batch ?? DEFAULT_BATCH;
  const bound = s.inFlight ?? DEFAULT_IN_FLIGHT;
  const budgetMs = s.budgetMs ?? Math.floor(((s.periodMs ?? DEFAULT_BACKFILL_PERIOD_MS) * 4) / 5);
  const started = Date.now();
  const go = () => !opts.stopping?.() && Date.now() - started < budgetMs;
  const run: BackfillRun = {
    found: { logs: 0, artifacts: 0 },
    queued: { logs: 0, artifacts: 0 },
    finished: true,
  };

  // How many more moves of the target fit, waiting while none does; 0: the run stops.
  const room = async (t: BackfillTarget): Promise<number> => {
    for (;;) {
      if (!go()) return 0;
      const free = bound - (await t.inFlight());
      if (free > 0) return free;
      await new Promise((resolve) => setTimeout(resolve, ROOM_POLL_MS).unref());
    }
  };

  for (const t of targets) {
    let after = 0;
    let walked = true;
    walk: for (;;) {
      if (!go()) {
        walked = false;
        break;
      }
      const b = await t.find(db, after, batch);
      run.found[t.kind] += b.ids.length;
      let i = 0;
      while (i < b.ids.length) {
        const free = await room(t);
        if (free === 0) {
          walked = false;
          break walk;
        }
        for (const id of b.ids.slice(i, i + free)) {
          await t.queue(id);
          run.queued[t.kind]++;
          opts.metrics?.queuedOne(t.kind);
        }
        i += free;
      }
      if (b.ids.length)
        opts.log.info(
          { kind: t.kind, after, queued: b.ids.length, found: run.found[t.kind] },
          'object-store backfill: moves queued',
        );
      if (b.next === null) break;
      after = b.next;
    }
    opts.metrics?.found(t.kind, run.found[t.kind], walked);
    if (!walked) {
      run.finished = false;
      break;
    }
  }
  return run;
}

export function backfillProcessor(
  db: Queryable,
  targets: readonly BackfillTarget[],
  opts: { settings?: BackfillSettings; stopping: () => boolean; log: Logger; metrics: BackfillMetrics },
) {
  return async (job: Job): Promise<BackfillRun> => {
    const run = await runBackfill(db, targets, opts);
    if (run.found.logs + run.found.artifacts > 0 || !run.finished)
      opts.log.info({ job: job.id, ...run }, 'object-store backfill run');
    return run;
  };
}
