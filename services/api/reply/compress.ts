// Compressed answers (Buildbot 4.3 compresses all it serves under /api/v2): a page, a build
// data value or a raw log goes out as zstd, brotli or gzip when the client accepts one (in
// that order of preference, zstd only where this Node has it), with the length of what is
// sent (a raw log streams: none), `Vary: Accept-Encoding`, and an ETag of its
// own per encoding (RFC 9110: a strong validator names one representation).
//
// Small bodies go out as they are. Of the golden answers, the 148 under MIN_BYTES average 305
// bytes and compressing saves 134 to 160 of them (one packet either way), while the 40 above
// save 8,415 to 8,572 of 9,370 on average. Brotli runs at quality BROTLI_QUALITY, not its
// default 11 (meant for files compressed once): on the largest answer (89,344 bytes) q11 took
// 170.6 ms for 1,928 bytes, q5 0.4 ms for 2,175. Measured 2026-11-28 with
// `node --import tsx load/compression-sizes.ts` (it prints these lines).
import { pipeline, type Readable, type Transform } from 'node:stream';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';

export type Encoding = 'zstd' | 'br' | 'gzip';

export const MIN_BYTES = 1024;
const BROTLI_QUALITY = 5;

type Compress = (body: Buffer) => Promise<Buffer>;

// zlib.zstdCompress exists from Node 22.15/23.8 on; typed loosely so older types still build.
const zstdCompress = (
  zlib as { zstdCompress?: (b: Buffer, cb: (e: Error | null, r: Buffer) => void) => void }
).zstdCompress;

const COMPRESSORS: ReadonlyMap<Encoding, Compress> = new Map<Encoding, Compress>([
  ...(zstdCompress ? ([['zstd', promisify(zstdCompress)]] as [Encoding, Compress][]) : []),
  [
    'br',
    (b: Buffer) =>
      promisify(zlib.brotliCompress)(b, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length,
        },
      }),
  ],
  ['gzip', (b: Buffer) => promisify(zlib.gzip)(b)],
]);

/** The encodings this process can write, most preferred first. */
export const ENCODINGS: readonly Encoding[] = [...COMPRESSORS.keys()];

/**
 * The encoding to answer in: the most preferred one the client accepts with a q above 0
 * (`*` accepts any it does not name), or none.
 */
export function pickEncoding(acceptEncoding: string | string[] | undefined): Encoding | null {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : (acceptEncoding ?? '');
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam === undefined ? 1 : Number(qParam.slice(2));
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  for (const enc of ENCODINGS) {
    const v = q.get(enc) ?? q.get('*') ?? 0;
    if (v > 0) return enc;
  }
  return null;
}

export function compress(body: Buffer, enc: Encoding): Promise<Buffer> {
  return COMPRESSORS.get(enc)!(body);
}

/** The ETag of an encoded representation: the identity's, marked with the encoding. */
export function encodedEtag(etag: string, enc: Encoding): string {
  return etag.replace(/"$/, `-${enc}"`);
}

// The streaming forms, for downloads whose length is not known before they are sent (raw
// logs): the same encodings at the same settings, with no Content-Length, as Buildbot 4.3's
// encoders send them. On a 64 MiB build log each cuts the bytes about tenfold (brotli 11.9x,
// zstd 10.6x, gzip 10.3x) and costs the API 0.3-0.5 CPU s (zstd), 1.0 (gzip), 1.3-1.5
// (brotli), against 0.1 uncompressed from the kept copy: zstd first is also the cheapest
// (load/results/raw-log-compression.md, with its command; a busy machine).
const zstdStream = (zlib as { createZstdCompress?: () => Transform }).createZstdCompress;
const STREAMS: Record<Encoding, () => Transform> = {
  zstd: () => zstdStream!(),
  br: () => zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } }),
  gzip: () => zlib.createGzip(),
};

/** `body` encoded as it is read; an end of either side (a client gone) ends the other. */
export function compressStream(body: Readable, enc: Encoding): Readable {
  return pipeline(body, STREAMS[enc](), () => {});
}
