// move-log: a finished log leaves PostgreSQL for the object store (docs/object-store.md),
// queued once compress-log has merged it (or when the log finishes, with compression off).
//
// - Upload first, then record (core/data/log-objects.ts recordLogObject: the index in, the
//   chunks out, in one transaction under the log's row lock). The key names the log and the
//   hash of the object's bytes (`<prefix>logs/<logid>/<sha256, 16 hex>`): a retry after a
//   master died between the two writes the same object again rather than a second one, and
//   two runs at once (a stalled job handed over while its first master still runs) can never
//   overwrite the recorded object with other bytes; the loser deletes its own. The record is
//   made once (the log_objects row is the proof): a job delivered again does nothing.
// - A master that dies mid-move: BullMQ's stalled-job check hands the job to another master
//   once the dead one's lock lapses (lockDuration below), and it runs in full. A job that
//   stalls more often than BullMQ allows (its masters killed twice mid-move) fails for good;
//   the object-backfill sweep finds its log still in PostgreSQL and queues it again.
// - Chunks that changed between the upload and the record (compress-log ran in between):
//   the job uploads again, at once, a few times, then fails and is retried with backoff.
// - A log deleted or marked deleted meanwhile: its object is deleted and the job ends.
// - The store away, or PostgreSQL: the attempt fails and is retried with backoff; the log
//   stays readable from PostgreSQL meanwhile, nothing is lost.
// - One job per log, id `move-<logid>`, as compress-log's.
// - One PUT from memory, as move-artifact's: a log whose chunks hold more than MAX_MOVE_BYTES
//   stays in PostgreSQL ('kept'), so that a build printing a huge log cannot make its master
//   hold it whole (the chunks are read only once their size is known to fit).
import type { Job, JobsOptions, Queue } from 'bullmq';
import { UnrecoverableError } from 'bullmq';
import {
  type DataContext,
  logChunksToMove,
  logMoveState,
  logObjectKeyOf,
  logStoredBytes,
  recordLogObject,
  transact,
} from '../../core/data/index.js';
import { buildLogObject } from '../../core/logs/log-object.js';
import type { ObjectStore } from '../../core/objstore/client.js';
import { sha256Hex } from '../../core/objstore/sigv4.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { MAX_MOVE_BYTES } from './move-artifact.js';
import { queueOnce } from './queue-once.js';

export interface MoveLogData {
  logid: number;
}

export const moveLogJobId = (logid: number): string => `move-${logid}`;

/** The key of a log's object of these bytes, under the store's prefix. */
export const logObjectKey = (store: ObjectStore, logid: number, body: Uint8Array): string =>
  store.key(`logs/${logid}/${sha256Hex(body).slice(0, 16)}`);

// Uploads in one attempt when compress-log keeps changing the chunks under us.
const UPLOADS_PER_ATTEMPT = 3;

export function moveLogJobOptions(retry: { attempts?: number; backoffMs?: number } = {}): JobsOptions {
  return {
    attempts: retry.attempts ?? 8,
    backoff: { type: 'exponential', delay: retry.backoffMs ?? 2000 },
    removeOnComplete: { age: 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
  };
}

export async function queueMoveLog(queue: Queue<MoveLogData>, logid: number): Promise<void> {
  if (!Number.isSafeInteger(logid) || logid <= 0) throw new RangeError(`not a log id: ${logid}`);
  await queueOnce(queue, 'move-log', { logid }, moveLogJobId(logid));
}

export type MoveOutcome = 'moved' | 'already' | 'gone' | 'open' | 'kept';

export function moveLogProcessor(
  ctx: DataContext,
  store: ObjectStore,
  log: Logger,
  onRepeat: () => void = () => {},
  maxBytes = MAX_MOVE_BYTES,
) {
  return async (job: Job<MoveLogData>): Promise<MoveOutcome> => {
    const { logid } = job.data;
    for (let upload = 0; upload < UPLOADS_PER_ATTEMPT; upload++) {
      const state = await logMoveState(ctx.db, logid);
      if (state === 'moved') {
        onRepeat();
        return 'already';
      }
      if (state === 'gone') throw new UnrecoverableError(`no log ${logid}`);
      if (state === 'deleted') return 'gone';
      // Retried: a log is queued once finished, so this is a log reopened by nothing we know.
      if (state === 'open') throw new Error(`log ${logid} is not finished`);
      if ((await logStoredBytes(ctx.db, logid)) > maxBytes) return 'kept';
      const rows = await logChunksToMove(ctx.db, logid);
      const uploaded = rows.map((r) => ({
        first_line: r.first_line,
        last_line: r.last_line,
        compressed: r.compressed,
        length: r.content.length,
      }));
      const { body, index } = buildLogObject(rows);
      const key = logObjectKey(store, logid, body);
      await store.put(key, body);
      const outcome = await transact(ctx, (tx) =>
        recordLogObject(tx, logid, { key, bytes: body.length, chunks: index }, uploaded),
      );
      if (outcome === 'moved') {
        log.debug({ logid, key, bytes: body.length, chunks: index.length }, 'log moved to the object store');
        return outcome;
      }
      // Ours is not the recorded object (or none is wanted): it goes, unless it is the one.
      if ((await logObjectKeyOf(ctx.db, logid)) !== key) await store.delete(key);
      if (outcome === 'changed') continue;
      if (outcome === 'already') onRepeat();
      return outcome;
    }
    throw new Error(`log ${logid}'s chunks changed during ${UPLOADS_PER_ATTEMPT} uploads`);
  };
}
