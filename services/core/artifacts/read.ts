// Reading a complete artifact by ranges from wherever its bytes are: the API's download
// (services/api/read/artifacts.ts) and the master's file_download step
// (services/master/builds/steps/file-download.ts) read the same way. Each range is one
// statement (artifactBytesAt): the bytes from the large object, or the key of the object that
// now holds them, then one ranged GET; so a read that straddles the move goes on from the
// store where PostgreSQL left off.
import { artifactBytesAt } from '../data/artifact-objects.js';
import type { RowSource } from '../db/pool.js';
import { UnavailableError } from '../errors.js';
import type { ObjectStore } from '../objstore/client.js';

/** The store, or OBJECT_STORE_UNAVAILABLE: an artifact moved by masters configured with one. */
export function storeForArtifact(store: ObjectStore | null): ObjectStore {
  if (!store)
    throw new UnavailableError(
      'OBJECT_STORE_UNAVAILABLE',
      'this artifact is in the object store, and this process has no object_store configured',
    );
  return store;
}

/** Up to `length` bytes of a complete artifact from `offset` (fewer at its end, none past it). */
export async function readArtifactRange(
  q: RowSource,
  store: ObjectStore | null,
  id: number,
  offset: number,
  length: number,
): Promise<Uint8Array> {
  const row = await artifactBytesAt(q, id, offset, length);
  if (!row) return new Uint8Array(0);
  if (row.data !== null) return row.data;
  const end = Math.min(offset + length, row.total) - 1;
  return storeForArtifact(store).get(row.key!, { start: offset, end });
}
