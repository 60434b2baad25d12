// move-artifact: a complete artifact leaves PostgreSQL (its large object) for the object
// store (docs/object-store.md), queued when its upload step completes it.
//
// - Upload first, then record (core/data/artifact-objects.ts recordArtifactObject: the key in,
//   the large object unlinked, in one transaction under the artifact's row lock). The key
//   names the artifact and the hash of its bytes (`<prefix>artifacts/<id>/<sha256, 16 hex>`):
//   a retry after a master died between the two writes the same object again, not a second
//   one; the record is made once (object_key is the proof), so a job delivered again, or two
//   runs at once, record one object, and a run whose object is not the recorded one deletes it.
// - One PUT from memory, not a multipart upload: an artifact over MAX_MOVE_BYTES stays in
//   PostgreSQL (read from there as before), so a master holds at most that much per move in
//   flight (two at once by default).
// - An artifact deleted or replaced meanwhile: its object is deleted and the job ends.
// - The store away, or PostgreSQL: the attempt fails and is retried with backoff; the artifact
//   stays readable from PostgreSQL meanwhile, nothing is lost.
import type { Job, Queue } from 'bullmq';
import {
  artifactLargeObject,
  artifactMoveState,
  artifactObjectKeyOf,
  type DataContext,
  recordArtifactObject,
  transact,
} from '../../core/data/index.js';
import type { ObjectStore } from '../../core/objstore/client.js';
import { sha256Hex } from '../../core/objstore/sigv4.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { queueOnce } from './queue-once.js';

export interface MoveArtifactData {
  id: number;
}

/** The largest artifact moved (one PUT from memory); larger ones stay in PostgreSQL. */
export const MAX_MOVE_BYTES = 64 * 1024 * 1024;

export const moveArtifactJobId = (id: number): string => `move-artifact-${id}`;

/** The key of an artifact's object of these bytes, under the store's prefix. */
export const artifactObjectKey = (store: ObjectStore, id: number, body: Uint8Array): string =>
  store.key(`artifacts/${id}/${sha256Hex(body).slice(0, 16)}`);

export async function queueMoveArtifact(queue: Queue<MoveArtifactData>, id: number): Promise<void> {
  if (!Number.isSafeInteger(id) || id <= 0) throw new RangeError(`not an artifact id: ${id}`);
  await queueOnce(queue, 'move-artifact', { id }, moveArtifactJobId(id));
}

export type MoveArtifactOutcome = 'moved' | 'already' | 'gone' | 'kept';

export function moveArtifactProcessor(
  ctx: DataContext,
  store: ObjectStore,
  log: Logger,
  opts: { maxBytes?: number; onRepeat?: () => void } = {},
) {
  const maxBytes = opts.maxBytes ?? MAX_MOVE_BYTES;
  return async (job: Job<MoveArtifactData>): Promise<MoveArtifactOutcome> => {
    const { id } = job.data;
    const { state, length } = await artifactMoveState(ctx.db, id);
    if (state === 'in-database' && length > maxBytes) return 'kept';
    const body = state === 'in-database' ? await artifactLargeObject(ctx.db, id) : undefined;
    if (!body) {
      // Moved (by another run) or deleted, maybe since the state was read; or not complete.
      const now = (await artifactMoveState(ctx.db, id)).state;
      if (now === 'moved') {
        opts.onRepeat?.();
        return 'already';
      }
      if (now === 'gone') return 'gone';
      // Queued once complete, so this is an artifact the queue heard of before its commit.
      throw new Error(`artifact ${id} is not complete`);
    }
    const key = artifactObjectKey(store, id, body);
    await store.put(key, body);
    const outcome = await transact(ctx, (tx) => recordArtifactObject(tx, id, { key, length: body.length }));
    if (outcome === 'moved') {
      log.debug({ artifactid: id, key, bytes: body.length }, 'artifact moved to the object store');
      return outcome;
    }
    // Ours is not the recorded object (or none is wanted): it goes, unless it is the one.
    if ((await artifactObjectKeyOf(ctx.db, id)) !== key) await store.delete(key);
    if (outcome === 'already') opts.onRepeat?.();
    return outcome;
  };
}
