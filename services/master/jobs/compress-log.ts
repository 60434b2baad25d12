// compress-log: once a log is finished, merge its chunks up to Buildbot's limits and store
// them with the configured codec (core/data/logs.ts compressLog, which swaps the rows in one
// transaction, so readers see the old rows or the new, never neither).
//
// - One job per log, id `log-<logid>`: queueing a log that is waiting, running or recently
//   done adds nothing. Completed jobs are kept an hour for that; past it a second job runs
//   and compressLog, idempotent, changes nothing.
// - The codec travels in the job, so whichever master runs it stores what the master that
//   finished the log was configured with. `none` queues nothing.
// - A failed attempt (the log is not finished yet, the database is away) is retried with
//   exponential backoff; a log that no longer exists fails at once, without retries.
//   A job that used up its attempts stays failed (visible in /metrics); queueing its log
//   again retries it.
// - Once per job id: the run is recorded in the transaction that compresses
//   (core/data/job-runs.ts), so a job that BullMQ delivers again after its completion was
//   lost (a Redis failover) does nothing, and says so (flotilla_jobs_repeats_total).
import type { Job, JobsOptions, Queue } from 'bullmq';
import { UnrecoverableError } from 'bullmq';
import {
  compressLog,
  type DataContext,
  type LogCodec,
  recordJobRun,
  transact,
} from '../../core/data/index.js';
import { NotFoundError } from '../../core/errors.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { queueOnce } from './queue-once.js';
import { QUEUES } from './queues.js';

export { type LogCompression, logCodec } from './log-codec.js';

export interface CompressLogData {
  logid: number;
  codec: LogCodec;
}

export interface CompressLogRetry {
  /** Attempts in all, the first included (default 8). */
  attempts?: number;
  /** First backoff delay; each retry waits twice the previous one (default 2,000 ms). */
  backoffMs?: number;
}

export const compressLogJobId = (logid: number): string => `log-${logid}`;

const DEFAULT_ATTEMPTS = 8;
const DEFAULT_BACKOFF_MS = 2000;
// What Redis keeps of finished jobs, for a look at recent work: completed ones for an hour
// (at most 10,000), failed ones for a week (at most 1,000), so a failure can be looked into.
const KEEP_COMPLETED = { age: 3600, count: 10_000 };
const KEEP_FAILED = { age: 7 * 24 * 3600, count: 1000 };

export function compressLogJobOptions(retry: CompressLogRetry = {}): JobsOptions {
  return {
    attempts: retry.attempts ?? DEFAULT_ATTEMPTS,
    backoff: { type: 'exponential', delay: retry.backoffMs ?? DEFAULT_BACKOFF_MS },
    removeOnComplete: KEEP_COMPLETED,
    removeOnFail: KEEP_FAILED,
  };
}

/** Queue the compression of a finished log (no-op for codec null). */
export async function queueCompressLog(
  queue: Queue<CompressLogData>,
  logid: number,
  codec: LogCodec | null,
): Promise<void> {
  if (codec === null) return;
  if (!Number.isSafeInteger(logid) || logid <= 0) throw new RangeError(`not a log id: ${logid}`);
  await queueOnce(queue, 'compress-log', { logid, codec }, compressLogJobId(logid));
}

export function compressLogProcessor(
  ctx: DataContext,
  log: Logger,
  onRepeat: () => void = () => {},
  /** Told of each log compressed (or found compressed): what comes next (move-log). */
  onCompressed: (logid: number) => void = () => {},
) {
  return async (job: Job<CompressLogData>): Promise<number> => {
    const { logid, codec } = job.data;
    const key = { queue: QUEUES.compressLog, jobId: job.id ?? compressLogJobId(logid) };
    try {
      const saved = await transact(ctx, async (tx) =>
        (await recordJobRun(tx.q, key)) ? compressLog(tx, logid, { codec }) : null,
      );
      onCompressed(logid);
      if (saved === null) {
        onRepeat();
        log.info({ logid, job: key.jobId }, 'compress-log delivered again after it ran: nothing to do');
        return 0;
      }
      log.debug({ logid, codec, saved }, 'log compressed');
      return saved;
    } catch (err) {
      if (err instanceof NotFoundError) throw new UnrecoverableError(err.message);
      throw err;
    }
  };
}
