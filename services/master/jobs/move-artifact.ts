// move-artifact: a complete artifact leaves PostgreSQL (its large object) for the object
// store (docs/object-store.md), queued when its upload step completes it.
//
// - Upload first, then record (core/data/artifact-objects.ts recordArtifactObject: the key in,
//   the large object unlinked, in one transaction under the artifact's row lock). The key
//   names the artifact and the hash of its bytes (`<prefix>artifacts/<id>/<sha256, 16 hex>`):
//   a retry after a master died between the two writes the same object again, not a second
//   one; the record is made once (object_key is the proof), so a job delivered again, or two
//   runs at once, record one object, and a run whose object is not the recorded one deletes it.
// - Read part by part (core/objstore/streamed-put.ts): twice, once to name the object by its
//   hash and once to upload it, one PUT for an artifact of one part, a multipart upload for a
//   larger one, so a master holds about two parts per move in flight (two moves at once by
//   default) whatever the artifact's size. A master that dies mid-upload leaves no object,
//   only an open upload, which the job's retry aborts (stale-upload.ts) before moving it again.
// - An artifact deleted or replaced meanwhile: its object is deleted and the job ends.
// - The store away, or PostgreSQL: the attempt fails and is retried with backoff; the artifact
//   stays readable from PostgreSQL meanwhile, nothing is lost.
import type { Job, Queue } from 'bullmq';
import {
  artifactBytesAt,
  artifactMoveState,
  artifactObjectKeyOf,
  type DataContext,
  recordArtifactObject,
  transact,
} from '../../core/data/index.js';
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

export interface MoveArtifactData extends WithUpload {
  id: number;
}

export const moveArtifactJobId = (id: number): string => `move-artifact-${id}`;

/** The key of an artifact's object of these bytes, under the store's prefix. */
export const artifactObjectKey = (store: ObjectStore, id: number, body: Uint8Array): string =>
  artifactKeyOfHash(store, id, sha256Hex(body));

const artifactKeyOfHash = (store: ObjectStore, id: number, sha256: string): string =>
  store.key(`artifacts/${id}/${sha256.slice(0, 16)}`);

/** A complete artifact's bytes in PostgreSQL, `partBytes` at a time; moved or gone meanwhile: SourceChangedError. */
const largeObjectOf = (ctx: DataContext, id: number, length: number, partBytes: number): ByteSource =>
  async function* () {
    for (let offset = 0; offset < length; offset += partBytes) {
      const row = await artifactBytesAt(ctx.db, id, offset, Math.min(partBytes, length - offset));
      if (!row?.data) throw new SourceChangedError(`artifact ${id} left PostgreSQL during its move`);
      yield row.data;
    }
  };

export async function queueMoveArtifact(queue: Queue<MoveArtifactData>, id: number): Promise<void> {
  if (!Number.isSafeInteger(id) || id <= 0) throw new RangeError(`not an artifact id: ${id}`);
  await queueOnce(queue, 'move-artifact', { id }, moveArtifactJobId(id));
}

export type MoveArtifactOutcome = 'moved' | 'already' | 'gone';

export function moveArtifactProcessor(
  ctx: DataContext,
  store: ObjectStore,
  log: Logger,
  opts: { partBytes?: number; onRepeat?: () => void } = {},
) {
  const partBytes = opts.partBytes ?? DEFAULT_PART_BYTES;
  return async (job: Job<MoveArtifactData>): Promise<MoveArtifactOutcome> => {
    const { id } = job.data;
    await abortStaleUpload(store, job);
    const { state, length } = await artifactMoveState(ctx.db, id);
    const put =
      state === 'in-database'
        ? await putStreamed(store, largeObjectOf(ctx, id, length, partBytes), {
            keyOf: (sha256) => artifactKeyOfHash(store, id, sha256),
            partBytes,
            onUpload: keepUploadIn(job),
          }).catch((err: unknown) => {
            if (err instanceof SourceChangedError) return undefined;
            throw err;
          })
        : undefined;
    if (!put) {
      // Moved (by another run) or deleted, maybe since the state was read; or not complete.
      const now = (await artifactMoveState(ctx.db, id)).state;
      if (now === 'moved') {
        opts.onRepeat?.();
        return 'already';
      }
      if (now === 'gone') return 'gone';
      // Queued once complete, so this is an artifact the queue heard of before its commit.
      if (now === 'open') throw new Error(`artifact ${id} is not complete`);
      throw new Error(`artifact ${id} changed during its move`);
    }
    const { key, bytes, parts } = put;
    const outcome = await transact(ctx, (tx) => recordArtifactObject(tx, id, { key, length: bytes }));
    if (outcome === 'moved') {
      log.debug({ artifactid: id, key, bytes, parts }, 'artifact moved to the object store');
      return outcome;
    }
    // Ours is not the recorded object (or none is wanted): it goes, unless it is the one.
    if ((await artifactObjectKeyOf(ctx.db, id)) !== key) await store.delete(key);
    if (outcome === 'already') opts.onRepeat?.();
    return outcome;
  };
}
