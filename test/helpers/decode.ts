// Decoders of the encodings the API writes (services/api/reply/compress.ts), for tests that
// check a compressed answer decodes to the identity body.
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';

export const DECODE: Record<string, (b: Buffer) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  br: promisify(zlib.brotliDecompress),
  ...('zstdDecompress' in zlib
    ? { zstd: promisify((zlib as unknown as { zstdDecompress: typeof zlib.gunzip }).zstdDecompress) }
    : {}),
};
