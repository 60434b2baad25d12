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
// - Read part by part, as move-artifact's (core/objstore/streamed-put.ts): the chunks' sizes
//   first, then their contents a part's worth at a time, twice (to name the object by its
//   hash, then to upload it: one PUT for a log of one part, a multipart upload for a larger
//   one), so a master holds about two parts per move whatever the log's size. A chunk that is
//   not the one listed first (compress-log merged it meanwhile) aborts the upload and counts as
//   changed. A master that dies mid-upload leaves no object, only an open upload, which the
//   job's retry aborts (stale-upload.ts).
import type { Job, JobsOptions, Queue } from 'bullmq';
import { UnrecoverableError } from 'bullmq';
import {
  type DataContext,
  logChunkContents,
  logChunkList,
  logMoveState,
  logObjectKeyOf,
  recordLogObject,
  sameChunk,
  transact,
  type UploadedChunk,
} from '../../core/data/index.js';
import { groupsOfSize, LogObjectIndex } from '../../core/logs/log-object.js';
import type { ObjectStore } from '../../core/objstore/client.js';
import { sha256Hex } from '../../core/objstore/sigv4.js';
import {
  type ByteSource,
  DEFAULT_PART_BYTES,
  putStreamed,
  SourceChangedError,
} from '../../core/objstore/streamed-put.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { queueOnce } from './queue-once.js';
import { abortStaleUpload, keepUploadIn, type WithUpload } from './stale-upload.js';

export interface MoveLogData extends WithUpload {
  logid: number;
}

export const moveLogJobId = (logid: number): string => `move-${logid}`;

/** The key of a log's object of these bytes, under the store's prefix. */
export const logObjectKey = (store: ObjectStore, logid: number, body: Uint8Array): string =>
  logKeyOfHash(store, logid, sha256Hex(body));

const logKeyOfHash = (store: ObjectStore, logid: number, sha256: string): string =>
  store.key(`logs/${logid}/${sha256.slice(0, 16)}`);

/**
 * The object of a log's listed chunks, read a part's worth of chunks at a time; each read
 * starts the index again. A chunk that is not as listed: SourceChangedError.
 */
function logObjectOf(
  ctx: DataContext,
  logid: number,
  listed: readonly UploadedChunk[],
  partBytes: number,
  index: { current: LogObjectIndex },
): ByteSource {
  return async function* () {
    index.current = new LogObjectIndex();
    for (const group of groupsOfSize(listed, partBytes, (c) => Number(c.length))) {
      const rows = await logChunkContents(
        ctx.db,
        logid,
        group.map((c) => c.first_line),
      );
      const same =
        rows.length === group.length &&
        rows.every((r, i) => sameChunk({ ...r, length: r.content.length }, group[i]!));
      if (!same) throw new SourceChangedError(`log ${logid}'s chunks changed during its move`);
      for (const row of rows) yield index.current.append(row);
    }
  };
}

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

export type MoveOutcome = 'moved' | 'already' | 'gone' | 'open';

export function moveLogProcessor(
  ctx: DataContext,
  store: ObjectStore,
  log: Logger,
  onRepeat: () => void = () => {},
  partBytes = DEFAULT_PART_BYTES,
) {
  return async (job: Job<MoveLogData>): Promise<MoveOutcome> => {
    const { logid } = job.data;
    await abortStaleUpload(store, job);
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
      const listed = await logChunkList(ctx.db, logid);
      const index = { current: new LogObjectIndex() };
      let put: Awaited<ReturnType<typeof putStreamed>>;
      try {
        put = await putStreamed(store, logObjectOf(ctx, logid, listed, partBytes, index), {
          keyOf: (sha256) => logKeyOfHash(store, logid, sha256),
          partBytes,
          onUpload: keepUploadIn(job),
        });
      } catch (err) {
        if (err instanceof SourceChangedError) continue;
        throw err;
      }
      const { key, bytes, parts } = put;
      const chunks = index.current.chunks;
      const outcome = await transact(ctx, (tx) => recordLogObject(tx, logid, { key, bytes, chunks }, listed));
      if (outcome === 'moved') {
        log.debug({ logid, key, bytes, parts, chunks: chunks.length }, 'log moved to the object store');
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
