// retention: the cluster's cleanup, once per period (retention.period_seconds) however many
// masters run, scheduled like expire-masters (one BullMQ job scheduler of a fixed id that
// every master upserts; one job per period slot, run by one master's worker).
//
// A run deletes in small batches, each its own short transaction (core/data/retention.ts
// says why that keeps claims, build writes and reads from waiting on it), in this order:
// 1. chunks of logs marked deleted that still have some (a run cut short, or a Buildbot
//    master's janitor sharing the database);
// 2. per builder, with its resolved plan (retention-plan.ts): logs marked deleted and their
//    chunks deleted, then artifacts, build data, and last whole builds (which by then have
//    no chunks and no artifacts left, so what cascades from them is small);
// 3. finished build requests no build refers to any more, then build sets with no request
//    left, then changes;
// 4. audit log rows past audit_horizon;
// 5. with an object store: the object records of moved logs marked deleted, then the
//    objects whose records are gone (those, and those of logs deleted with their builds,
//    which a trigger lists in flotilla.object_garbage: migration 0029), from the store, then
//    from the list. The store away: the list waits for the next run; nothing is forgotten.
// Deleting twice deletes nothing more, so a run delivered again after a Redis failover is
// harmless and is not recorded in job_runs. A run stops at max_run_seconds, or when the
// master stops, with work left: the next period goes on from where the data stands.
// What each run deleted is logged and counted (retention-metrics.ts).
import type { Job, Queue } from 'bullmq';
import { horizonSeconds, retention } from '../../core/config/master-config/retention.js';
import type { RetentionConfig } from '../../core/config/master-config.js';
import type { DataContext } from '../../core/data/index.js';
import { dropDeletedLogObjects, forgetObjectGarbage, objectGarbage } from '../../core/data/log-objects.js';
import {
  type BuildSelection,
  buildersWithTags,
  deleteArtifacts,
  deleteAuditEntries,
  deleteBuildData,
  deleteBuildRequests,
  deleteBuilds,
  deleteBuildsets,
  deleteChanges,
  deletedLogsWithChunks,
  deleteLogChunks,
  excessBuildsUpTo,
  markLogsDeleted,
} from '../../core/data/retention.js';
import type { ConnectionPool, Queryable } from '../../core/db/pool.js';
import { UnavailableError } from '../../core/errors.js';
import type { ObjectStore } from '../../core/objstore/client.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { SCHEDULED_RUN_OPTIONS } from './queues.js';
import { noCounts, type RetentionCounts, type RetentionMetrics } from './retention-metrics.js';
import { type BuilderPlan, builderPlan, cutoff, plansAnything } from './retention-plan.js';

export const RETENTION_SCHEDULER_ID = 'retention';

// Each artifact may be a large object of thousands of pages, unlinked in its row's
// transaction: a few per statement.
const ARTIFACT_BATCH = 10;
// Objects deleted from the store per round trip of the list (each a DELETE request).
const OBJECT_BATCH = 100;
// DELETE requests in flight at once.
const OBJECT_DELETES_AT_ONCE = 8;
// Each build takes its steps, logs, properties and build data with it.
const BUILDS_PER_BATCH_DIVISOR = 10;

/** Whether the configuration deletes anything at all. */
export function retentionConfigured(config: RetentionConfig): boolean {
  const rules = [config, ...Object.values(config.builders), ...Object.values(config.tags)];
  return (
    rules.some(
      (r) =>
        r.logHorizon !== undefined ||
        r.artifact_horizon !== undefined ||
        r.build_data_horizon !== undefined ||
        r.build_horizon !== undefined ||
        r.max_builds !== undefined,
    ) ||
    config.change_horizon !== undefined ||
    config.request_horizon !== undefined ||
    config.audit_horizon !== undefined
  );
}

/**
 * Create or confirm the cluster's one retention schedule. The section travels in the jobs'
 * data, so whichever master runs a job applies the configuration that scheduled it (the last
 * master to confirm the schedule wins while masters disagree, during a rollout).
 */
export async function scheduleRetention(queue: Queue, config: RetentionConfig): Promise<void> {
  await queue.upsertJobScheduler(
    RETENTION_SCHEDULER_ID,
    { every: config.period_seconds * 1000 },
    { name: 'retention', data: config, opts: SCHEDULED_RUN_OPTIONS },
  );
}

/** Remove the schedule (a master whose configuration has no horizons). */
export async function unscheduleRetention(queue: Queue): Promise<void> {
  await queue.removeJobScheduler(RETENTION_SCHEDULER_ID);
}

export interface RetentionRun {
  deleted: RetentionCounts;
  /** False when the run stopped with work left. */
  finished: boolean;
}

/** One run over the data as it stands (exported for tests and the benchmark). */
export async function runRetention(
  db: ConnectionPool,
  config: RetentionConfig,
  opts: { stopping?: () => boolean; now?: () => number; store?: ObjectStore | null } = {},
): Promise<RetentionRun> {
  const deleted = noCounts();
  const started = Date.now();
  const budgetMs = config.max_run_seconds * 1000;
  const go = () => !opts.stopping?.() && Date.now() - started < budgetMs;
  const now = opts.now?.() ?? Math.floor(Date.now() / 1000);
  const batch = config.batch_size;
  const tx = <T>(fn: (q: Queryable) => Promise<T>) => db.tx(fn);

  // Repeats one batch while it comes back full and time is left; false if stopped early.
  const drain = async (step: () => Promise<number>, limit: number): Promise<boolean> => {
    for (;;) {
      if (!go()) return false;
      const n = await step();
      if (n < 0) return false;
      if (n < limit) return true;
    }
  };
  const dropChunks = (logids: readonly number[]): Promise<boolean> =>
    drain(async () => {
      const n = await tx((q) => deleteLogChunks(q, logids, batch));
      deleted.log_chunks += n;
      return n;
    }, batch);

  // 1. Chunks left behind.
  let after = 0;
  let finished = await drain(async () => {
    const logids = await tx((q) => deletedLogsWithChunks(q, after, batch));
    if (!(await dropChunks(logids))) return -1;
    after = logids[logids.length - 1] ?? after;
    return logids.length;
  }, batch);
  // 2. Per builder.
  const plans = (await buildersWithTags(db)).map((b) => builderPlan(config, b)).filter(plansAnything);
  for (const plan of plans) {
    if (!finished) break;
    finished = await cleanBuilder(plan);
  }
  // 3. Requests, build sets, changes.
  const requestH = horizonSeconds(config.request_horizon);
  if (finished && requestH !== null) {
    const before = now - requestH;
    finished =
      (await drain(async () => {
        const n = await tx((q) => deleteBuildRequests(q, before, batch));
        deleted.buildrequests += n;
        return n;
      }, batch)) &&
      (await drain(async () => {
        const n = await tx((q) => deleteBuildsets(q, before, batch));
        deleted.buildsets += n;
        return n;
      }, batch));
  }
  const changeH = horizonSeconds(config.change_horizon);
  if (finished && changeH !== null) {
    const before = now - changeH;
    finished = await drain(async () => {
      const n = await tx((q) => deleteChanges(q, before, batch));
      deleted.changes += n;
      return n;
    }, batch);
  }
  // 4. The audit log.
  const auditH = horizonSeconds(config.audit_horizon);
  if (finished && auditH !== null) {
    const before = now - auditH;
    finished = await drain(async () => {
      const n = await tx((q) => deleteAuditEntries(q, before, batch));
      deleted.audit += n;
      return n;
    }, batch);
  }
  // 5. Objects.
  if (finished && opts.store) {
    const store = opts.store;
    finished =
      (await drain(() => tx((q) => dropDeletedLogObjects(q, batch)), batch)) &&
      (await drain(async () => {
        const keys = await tx((q) => objectGarbage(q, OBJECT_BATCH));
        try {
          for (let i = 0; i < keys.length; i += OBJECT_DELETES_AT_ONCE)
            await Promise.all(keys.slice(i, i + OBJECT_DELETES_AT_ONCE).map((k) => store.delete(k)));
        } catch (err) {
          // The store away: what is listed stays listed, for the next run.
          if (err instanceof UnavailableError) return -1;
          throw err;
        }
        await tx((q) => forgetObjectGarbage(q, keys));
        deleted.objects += keys.length;
        return keys.length;
      }, OBJECT_BATCH));
  }
  return { deleted, finished };

  async function cleanBuilder(plan: BuilderPlan): Promise<boolean> {
    const upToId =
      plan.maxBuilds === null ? 0 : await tx((q) => excessBuildsUpTo(q, plan.builderid, plan.maxBuilds!));
    const sel = (h: number | null): BuildSelection => ({
      builderid: plan.builderid,
      before: cutoff(h, now),
      upToId,
    });
    const some = (s: BuildSelection) => s.before > 0 || s.upToId > 0;
    const logs = sel(plan.logs);
    if (some(logs)) {
      const done = await drain(async () => {
        const marked = await tx((q) => markLogsDeleted(q, logs, batch));
        deleted.logs += marked.length;
        if (!(await dropChunks(marked))) return -1;
        return marked.length;
      }, batch);
      if (!done) return false;
    }
    const artifacts = sel(plan.artifacts);
    if (
      some(artifacts) &&
      !(await drain(async () => {
        const r = await tx((q) => deleteArtifacts(q, artifacts, ARTIFACT_BATCH));
        deleted.artifacts += r.count;
        deleted.artifact_bytes += r.bytes;
        return r.count;
      }, ARTIFACT_BATCH))
    )
      return false;
    const data = sel(plan.buildData);
    if (
      some(data) &&
      !(await drain(async () => {
        const n = await tx((q) => deleteBuildData(q, data, batch));
        deleted.build_data += n;
        return n;
      }, batch))
    )
      return false;
    const builds = sel(plan.builds);
    const buildBatch = Math.max(1, Math.floor(batch / BUILDS_PER_BATCH_DIVISOR));
    if (
      some(builds) &&
      !(await drain(async () => {
        const ids = await tx((q) => deleteBuilds(q, builds, buildBatch));
        deleted.builds += ids.length;
        return ids.length;
      }, buildBatch))
    )
      return false;
    return true;
  }
}

export function retentionProcessor(
  ctx: DataContext,
  log: Logger,
  metrics: RetentionMetrics,
  stopping: () => boolean,
  store: ObjectStore | null = null,
) {
  return async (job: Job): Promise<RetentionRun> => {
    // Checked again: a job written by a master of another version must not delete by a
    // guess. A section that does not parse fails the run (counted in /metrics).
    const config = retention.parse(job.data);
    const run = await runRetention(ctx.db, config, { stopping, store });
    for (const [kind, n] of Object.entries(run.deleted)) metrics.add(kind as keyof RetentionCounts, n);
    if (!run.finished) metrics.unfinishedRun();
    log.info({ job: job.id, deleted: run.deleted, finished: run.finished }, 'retention run');
    return run;
  };
}
