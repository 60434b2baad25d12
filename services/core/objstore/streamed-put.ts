// One object of any size from a source read part by part (a large object's ranges, a log's
// chunks), under a key that names the SHA-256 of its bytes, with a master never holding more
// than about two parts of it (what move-log and move-artifact upload: docs/object-store.md).
//
// - The key names the bytes (a retry writes the same object again, never a second one; two
//   runs at once never overwrite a recorded object with other bytes), and the hash is known
//   only once every byte is read. So the source is read twice: once to hash it, once to
//   upload it; the second read is hashed again, and an upload whose bytes are not the ones
//   the key names is aborted (SourceChangedError), never completed. Reading twice from
//   PostgreSQL was chosen over holding the object (what capped moves at 64 MiB before) and
//   over a key that does not name the bytes (which would lose the two guarantees above).
// - A source of at most one part is read once, kept, and sent in one PUT, as before.
// - A larger one goes as an S3 multipart upload: nothing is visible under the key until
//   Complete assembles the parts, so a master that dies mid-upload leaves no half object,
//   only an open upload, whose id `onUpload` hands to the caller (the jobs keep it in the
//   job, and their retry aborts it: services/master/jobs/stale-upload.ts). Any failure here
//   aborts the upload, so a live master leaves no parts behind.
// - Parts of DEFAULT_PART_BYTES (8 MiB): S3 refuses a part but the last under 5 MiB; 8 MiB is
//   what AWS's own CLI uses, is two parts in memory at 16 MiB, and is 13 requests for a 100 MiB
//   artifact. An object over 10,000 parts (S3's limit: 80 GB at 8 MiB) gets larger parts.
// - Parts are sent one after another: a move is a background job, and one part in flight is
//   what keeps its memory flat whatever the object's size (load/results/object-store.md).
import { createHash } from 'node:crypto';
import type { ObjectStore, UploadedPart } from './client.js';

export const MIN_PART_BYTES = 5 * 1024 * 1024;
export const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
const MAX_PARTS = 10_000;

/** Bytes to upload, read in pieces; called once per pass, each call reading from the start. */
export type ByteSource = () => AsyncIterable<Uint8Array>;

/** The source's bytes differed between the two reads, or ended early: nothing was completed. */
export class SourceChangedError extends Error {
  override name = 'SourceChangedError';
}

export interface OpenUpload {
  key: string;
  uploadId: string;
}

export interface StreamedPutOptions {
  /** The key of the object of bytes of this SHA-256 (hex). */
  keyOf: (sha256: string) => string;
  /** At least MIN_PART_BYTES (default DEFAULT_PART_BYTES). */
  partBytes?: number;
  /** Told of a multipart upload once it is open, before its first part. */
  onUpload?: (upload: OpenUpload) => Promise<void>;
}

export interface StreamedPut {
  key: string;
  bytes: number;
  /** Parts sent (0: one PUT). */
  parts: number;
}

export async function putStreamed(
  store: ObjectStore,
  source: ByteSource,
  opts: StreamedPutOptions,
): Promise<StreamedPut> {
  const partBytes = opts.partBytes ?? DEFAULT_PART_BYTES;
  if (!Number.isSafeInteger(partBytes) || partBytes < MIN_PART_BYTES)
    throw new RangeError(`a part holds at least ${MIN_PART_BYTES} bytes, not ${partBytes}`);
  // First read: the hash, and the bytes themselves while they fit one part.
  const hash = createHash('sha256');
  let kept: Uint8Array[] | null = [];
  let bytes = 0;
  for await (const piece of source()) {
    hash.update(piece);
    bytes += piece.length;
    if (kept && bytes <= partBytes) kept.push(piece);
    else kept = null;
  }
  const sha256 = hash.digest('hex');
  const key = opts.keyOf(sha256);
  if (kept) {
    await store.put(key, Buffer.concat(kept));
    return { key, bytes, parts: 0 };
  }
  const size = Math.max(partBytes, Math.ceil(bytes / MAX_PARTS));
  const uploadId = await store.createMultipartUpload(key);
  try {
    await opts.onUpload?.({ key, uploadId });
    const parts = await uploadParts(store, { key, uploadId }, source, size, { sha256, bytes });
    await store.completeMultipartUpload(key, uploadId, parts);
    return { key, bytes, parts: parts.length };
  } catch (err) {
    // Best effort: the error that brought us here is the one to report; an upload the store
    // could not abort now is aborted by the job's retry (onUpload) or the bucket's lifecycle.
    await store.abortMultipartUpload(key, uploadId).catch(() => {});
    throw err;
  }
}

/** Second read: the parts, each sent before the next is read; checked against the first. */
async function uploadParts(
  store: ObjectStore,
  upload: OpenUpload,
  source: ByteSource,
  size: number,
  first: { sha256: string; bytes: number },
): Promise<UploadedPart[]> {
  const hash = createHash('sha256');
  const parts: UploadedPart[] = [];
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let bytes = 0;
  const send = async (body: Buffer) => {
    const partNumber = parts.length + 1;
    parts.push({ partNumber, etag: await store.uploadPart(upload.key, upload.uploadId, partNumber, body) });
  };
  for await (const piece of source()) {
    hash.update(piece);
    bytes += piece.length;
    if (bytes > first.bytes) throw new SourceChangedError(`${upload.key}: the source grew between its reads`);
    pending.push(piece);
    pendingBytes += piece.length;
    while (pendingBytes >= size) {
      const all = Buffer.concat(pending);
      pending = all.length > size ? [all.subarray(size)] : [];
      pendingBytes = all.length - size;
      await send(all.subarray(0, size));
    }
  }
  if (bytes !== first.bytes || hash.digest('hex') !== first.sha256)
    throw new SourceChangedError(`${upload.key}: the source changed between its reads`);
  if (pendingBytes > 0) await send(Buffer.concat(pending));
  return parts;
}
