// The client's multipart calls against the tests' S3 server, which enforces the protocol as
// S3 documents it (every request signed, its query too): parts assembled in order on Complete,
// with S3's ETags; nothing visible before Complete; EntityTooSmall for a part but the last
// under 5 MiB, InvalidPart for an ETag that is not the part's, InvalidPartOrder, NoSuchUpload
// for an upload id the store does not know (aborted, or completed); and putStreamed (one PUT
// up to one part, parts beyond; a source that changes between its two reads is never
// completed).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../../services/core/errors.js';
import type { ObjectStore } from '../../../services/core/objstore/client.js';
import { sha256Hex } from '../../../services/core/objstore/sigv4.js';
import {
  type ByteSource,
  MIN_PART_BYTES,
  putStreamed,
  SourceChangedError,
} from '../../../services/core/objstore/streamed-put.js';
import { S3Server } from '../../helpers/s3-server.js';

let s3: S3Server;
let store: ObjectStore;
beforeAll(async () => {
  s3 = await S3Server.start({ bucket: 'multipart-test' });
  store = s3.client('m/');
});
afterAll(() => s3?.close());

const MiB = 1024 * 1024;
const codeOf = (err: unknown) => /([A-Z][A-Za-z]+)\)?$/.exec((err as Error).message)?.[1];
const refusal = (p: Promise<unknown>) => p.then(() => 'accepted', codeOf);

/** The bytes in pieces of `piece`, read again at each call. */
const sourceOf = (bytes: Buffer, piece: number): ByteSource =>
  async function* () {
    for (let at = 0; at < bytes.length; at += piece) yield bytes.subarray(at, at + piece);
  };

describe('multipart upload', () => {
  it('assembles the parts on Complete, with S3 ETags; nothing is visible before', async () => {
    const key = store.key('a/whole');
    const [one, two] = [randomBytes(MIN_PART_BYTES), randomBytes(1234)];
    const id = await store.createMultipartUpload(key);
    const etags = [await store.uploadPart(key, id, 1, one), await store.uploadPart(key, id, 2, two)];
    expect(etags[0]).toMatch(/^"[0-9a-f]{32}"$/);
    expect(s3.objects.has(key)).toBe(false);
    await expect(store.get(key)).rejects.toBeInstanceOf(NotFoundError);
    await store.completeMultipartUpload(key, id, [
      { partNumber: 1, etag: etags[0]! },
      { partNumber: 2, etag: etags[1]! },
    ]);
    expect(Buffer.from(await store.get(key)).equals(Buffer.concat([one, two]))).toBe(true);
    expect(s3.etags.get(key)).toMatch(/^"[0-9a-f]{32}-2"$/);
    expect(s3.uploads.has(id)).toBe(false);
    // Completed: the id is gone.
    expect(await refusal(store.uploadPart(key, id, 3, two))).toBe('NoSuchUpload');
    expect(s3.refused).toEqual([]);
  });

  it('refuses a small part but the last, a wrong ETag, parts out of order, an unknown upload', async () => {
    const key = store.key('a/refused');
    const id = await store.createMultipartUpload(key);
    const small = await store.uploadPart(key, id, 1, randomBytes(MIN_PART_BYTES - 1));
    const last = await store.uploadPart(key, id, 2, randomBytes(10));
    const complete = (parts: [number, string][]) =>
      refusal(
        store.completeMultipartUpload(
          key,
          id,
          parts.map(([partNumber, etag]) => ({ partNumber, etag })),
        ),
      );
    expect(
      await complete([
        [1, small],
        [2, last],
      ]),
    ).toBe('EntityTooSmall');
    expect(
      await complete([
        [2, last],
        [1, small],
      ]),
    ).toBe('InvalidPartOrder');
    expect(await complete([[1, last]])).toBe('InvalidPart');
    // One part alone is also the last: any size.
    expect(await complete([[2, last]])).toBe('accepted');
    expect(s3.objects.get(key)?.length).toBe(10);
    expect(await refusal(store.uploadPart(key, 'no-such-upload', 1, randomBytes(10)))).toBe('NoSuchUpload');
    expect(await refusal(store.uploadPart(key, id, 10_001, randomBytes(10)))).toBe('InvalidArgument');
  });

  it('abort discards the parts; aborting an unknown upload is not an error', async () => {
    const key = store.key('a/aborted');
    const id = await store.createMultipartUpload(key);
    await store.uploadPart(key, id, 1, randomBytes(100));
    await store.abortMultipartUpload(key, id);
    expect(s3.uploads.has(id)).toBe(false);
    expect(s3.objects.has(key)).toBe(false);
    await store.abortMultipartUpload(key, id);
    expect(await refusal(store.completeMultipartUpload(key, id, [{ partNumber: 1, etag: '"x"' }]))).toBe(
      'NoSuchUpload',
    );
  });
});

describe('putStreamed', () => {
  const keyOf = (sha256: string) => store.key(`s/${sha256.slice(0, 16)}`);

  it('sends one PUT up to one part, a multipart upload beyond, under the hash of the bytes', async () => {
    const small = randomBytes(MIN_PART_BYTES);
    expect(await putStreamed(store, sourceOf(small, MiB), { keyOf, partBytes: MIN_PART_BYTES })).toEqual({
      key: keyOf(sha256Hex(small)),
      bytes: small.length,
      parts: 0,
    });
    const large = randomBytes(2 * MIN_PART_BYTES + 1);
    // Pieces that straddle the parts' bounds.
    const put = await putStreamed(store, sourceOf(large, 3 * MiB + 7), { keyOf, partBytes: MIN_PART_BYTES });
    expect(put).toEqual({ key: keyOf(sha256Hex(large)), bytes: large.length, parts: 3 });
    expect(s3.objects.get(put.key)!.equals(large)).toBe(true);
    expect(s3.uploads.size).toBe(0);
  });

  it('a source that changes between its reads is aborted, never completed', async () => {
    let reads = 0;
    const changing: ByteSource = async function* () {
      reads++;
      yield Buffer.alloc(2 * MIN_PART_BYTES, reads);
    };
    await expect(putStreamed(store, changing, { keyOf, partBytes: MIN_PART_BYTES })).rejects.toBeInstanceOf(
      SourceChangedError,
    );
    expect(s3.objects.has(keyOf(sha256Hex(Buffer.alloc(2 * MIN_PART_BYTES, 1))))).toBe(false);
    expect(s3.uploads.size).toBe(0);
  });
});
