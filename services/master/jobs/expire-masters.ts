// expire-masters: the cluster's housekeeping, once per period (a minute) however many masters
// run. Every master upserts the same BullMQ job scheduler (one fixed id, one `every`); the
// scheduler keeps exactly one job per period slot (job id `repeat:expire-masters:<ms>`), so
// upserting it again from another master replaces the pending job at the same slot and never
// adds a second. Whichever master's worker takes the job runs, in order:
// 1. expireMasters: every master silent for `expirySeconds` is marked inactive, with the full
//    housekeeping (core/data/masters.ts). The master running the job is alive by definition
//    and is excluded, so it is never expired, even if its own heartbeat lags.
// 2. unclaimExpiredRequests(old): Buildbot's `old` is seconds since a claim was made or last
//    renewed (buildrequest_claims.claimed_at) on a request not complete, whoever holds it.
//    It is the backstop for claims no housekeeping releases (an adopted Buildbot 3.7 database
//    whose expiry left claims under the dead master's id; a master stuck without renewing).
//    Live masters renew their claims every RENEW_MS (claims.ts), so `old` must stay
//    well above that or a live master's running build would be handed to another master.
//    Default: max(expirySeconds, 5 reclaim periods); below 2 reclaim periods is refused.
// 3. compactCounts: folds the count deltas (safe any time, advisory-locked); and the write
//    records of builds that finished a while ago are forgotten (services/master/claims.ts).
// Each step is its own transaction; a failure ends this run (counted in /metrics) and the
// next period does it all again, so the job is not retried within a period.
// A period's job has its effect once: step 1's transaction records the run by job id
// (core/data/job-runs.ts), and a delivery of the same job after a Redis failover lost its
// completion does nothing (flotilla_jobs_repeats_total). Steps 2-4 then wait for the next
// period, as after a failed run. The housekeeping also forgets job runs older than a day.
import type { Job, Queue } from 'bullmq';
import { compactCounts } from '../../core/data/counts.js';
import {
  type DataContext,
  EXPIRE_SECONDS,
  expireMasters,
  forgetBuildWrites,
  forgetJobRuns,
  recordJobRun,
  transact,
  unclaimExpiredRequests,
} from '../../core/data/index.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { RENEW_MS } from '../claims.js';
import { QUEUES, SCHEDULED_RUN_OPTIONS } from './queues.js';

export const EXPIRE_SCHEDULER_ID = 'expire-masters';
export const DEFAULT_EXPIRE_PERIOD_MS = 60_000;
/** How long a job's run is remembered (migration 0017): far past any redelivery. */
export const JOB_RUNS_KEPT_SECONDS = 24 * 3600;

const RECLAIM_SECONDS = RENEW_MS / 1000;
export const MIN_UNCLAIM_SECONDS = 2 * RECLAIM_SECONDS;

export interface ExpireSettings {
  /** Seconds of silence after which a master is expired (master_expiry_seconds). */
  expirySeconds?: number;
  /** Seconds after which an unrenewed claim on an incomplete request is released. */
  unclaimAfterSeconds?: number;
}

export interface ExpireResult {
  expired: number[];
  unclaimed: number[];
}

/** The `old` of unclaimExpiredRequests for these settings (see the header). */
export function unclaimAfter(settings: ExpireSettings): number {
  const expiry = settings.expirySeconds ?? EXPIRE_SECONDS;
  const old = settings.unclaimAfterSeconds ?? Math.max(expiry, 5 * RECLAIM_SECONDS);
  if (!(old >= MIN_UNCLAIM_SECONDS)) {
    throw new RangeError(
      `unclaimAfterSeconds must be at least ${MIN_UNCLAIM_SECONDS} (twice the claim renewal period), not ${old}`,
    );
  }
  return old;
}

/** Create or confirm the cluster's one schedule (every master calls it at start). */
export async function scheduleExpireMasters(
  queue: Queue,
  periodMs = DEFAULT_EXPIRE_PERIOD_MS,
): Promise<void> {
  if (!Number.isSafeInteger(periodMs) || periodMs <= 0) throw new RangeError(`not a period: ${periodMs}`);
  await queue.upsertJobScheduler(
    EXPIRE_SCHEDULER_ID,
    { every: periodMs },
    { name: 'expire-masters', data: {}, opts: SCHEDULED_RUN_OPTIONS },
  );
}

export function expireMastersProcessor(
  ctx: DataContext,
  masterid: () => number,
  settings: ExpireSettings,
  log: Logger,
  onRepeat: () => void = () => {},
  /** The logs of expired masters' builds that the housekeeping finished (to be compressed). */
  onLogsFinished: (logids: number[]) => void = () => {},
) {
  const expiry = settings.expirySeconds ?? EXPIRE_SECONDS;
  const old = unclaimAfter(settings);
  return async (job: Job): Promise<ExpireResult> => {
    const self = masterid();
    // Without its own id the master could expire its own previous life under itself.
    if (!self) throw new Error('this master is not registered yet');
    if (!job.id) throw new Error('an expire-masters job without an id');
    const key = { queue: QUEUES.expireMasters, jobId: job.id };
    const finishedLogs: number[] = [];
    const expired = await transact(ctx, async (tx) => {
      finishedLogs.length = 0; // a transaction tried again starts afresh
      return (await recordJobRun(tx.q, key)) ? expireMasters(tx, expiry, self, { finishedLogs }) : null;
    });
    if (expired === null) {
      onRepeat();
      log.info({ job: key.jobId }, 'expire-masters delivered again after it ran: nothing to do');
      return { expired: [], unclaimed: [] };
    }
    if (expired.length > 0) log.info({ expired, expirySeconds: expiry }, 'expired silent masters');
    // Their masters, gone, will never queue these logs' compression (a running build's master
    // does it when its step ends): without it they would stay in their small chunks for good.
    if (finishedLogs.length > 0) onLogsFinished(finishedLogs);
    const unclaimed = await transact(ctx, (tx) => unclaimExpiredRequests(tx, old));
    if (unclaimed.length > 0) log.info({ unclaimed, olderThanSeconds: old }, 'released expired claims');
    await compactCounts(ctx.db);
    await transact(ctx, async (tx) => {
      await forgetBuildWrites(tx);
      await forgetJobRuns(tx.q, JOB_RUNS_KEPT_SECONDS);
    });
    return { expired, unclaimed };
  };
}
