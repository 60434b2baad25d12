// Buildbot's log chunk compression codes (`logchunks.compressed`) and their codecs.
//
// Codes 0-3 are Buildbot 3.7's (buildbot/db/logs.py, COMPRESSION_MODE): 0 raw, 1 "gz"
// (a zlib stream from `zlib.compress(data, 9)`, starting 78 da; not a .gz file),
// 2 "bz2" (`bz2.compress(data, 9)`), 3 "lz4" (`lz4.block.compress`, size-prefixed).
// Codes 4 zstd (a `zstandard` frame) and 5 brotli are later Buildbot's; a Buildbot 3.7
// reading such a row fails, so a master meant to share its database with 3.7 must not
// write them.
//
// Flotilla writes codes 0, 1, 4 and 5 (a master's `log_compression` picks gzip or zstd);
// bz2 and lz4 it only reads, from chunks a Buildbot master wrote. The tests that need such
// chunks make them with their own writers (test/helpers/log-vectors/).
//
// Decoding treats stored bytes as hostile: output is capped (MAX_DECODED_BYTES unless
// told otherwise) and every failure is a LogError with a stable code.

import zlib from 'node:zlib';
import { bzip2Decompress } from './bzip2.js';
import { LogError } from './errors.js';
import { lz4Decompress } from './lz4.js';

/** Buildbot's names (`logCompressionMethod`) for the compression codes. */
export const COMPRESSION_CODES = { raw: 0, gz: 1, bz2: 2, lz4: 3, zstd: 4, br: 5 } as const;
export type CompressionMethod = keyof typeof COMPRESSION_CODES;
export type CompressionCode = (typeof COMPRESSION_CODES)[CompressionMethod];

/**
 * Default cap on a decoded chunk. The largest chunk Buildbot can write is a compressLog
 * merge of at most 1,001 lines of at most 65,536 bytes each (about 62.6 MiB), so 64 MiB
 * admits every real chunk and refuses decompression bombs.
 */
export const MAX_DECODED_BYTES = 64 * 1024 * 1024;

/** zstd window cap (2^26 = 64 MiB): no frame of content within the cap needs more. */
const ZSTD_WINDOW_LOG_MAX = 26;

export interface DecodeOptions {
  /** Largest decoded size accepted, in bytes (default MAX_DECODED_BYTES). */
  maxBytes?: number;
}

export function isCompressionCode(code: unknown): code is CompressionCode {
  return typeof code === 'number' && Number.isInteger(code) && code >= 0 && code <= 5;
}

/** The code for a method name (`gz` -> 1); LOG_CODEC_UNKNOWN for any other name. */
export function compressionCode(method: string): CompressionCode {
  if (!Object.hasOwn(COMPRESSION_CODES, method)) {
    throw new LogError(
      'LOG_CODEC_UNKNOWN',
      `unknown log compression method ${JSON.stringify(method)} (expected one of ${Object.keys(COMPRESSION_CODES).join(', ')})`,
    );
  }
  return COMPRESSION_CODES[method as CompressionMethod];
}

function checkCode(code: number): CompressionCode {
  if (!isCompressionCode(code))
    throw new LogError('LOG_CODEC_UNKNOWN', `unknown log compression code ${code}`);
  return code;
}

/**
 * Compresses `data` with the codec of `code`, as Buildbot's Python libraries frame it.
 * Throws LOG_CODEC_READ_ONLY for bz2 and lz4, which Flotilla reads but never writes.
 */
export function encode(code: number, data: Uint8Array): Uint8Array {
  switch (checkCode(code)) {
    case 0:
      return data;
    case 1:
      return zlib.deflateSync(data, { level: 9 });
    case 2:
    case 3:
      throw new LogError(
        'LOG_CODEC_READ_ONLY',
        `${CODEC_NAMES[code]}: Flotilla reads this codec but never writes it`,
      );
    case 4:
      // Level 3 is both zstd's and python-zstandard's default. The frame must record its
      // content size: python-zstandard's one-shot decompress (what Buildbot calls) refuses
      // a frame without it.
      return zlib.zstdCompressSync(data, {
        pledgedSrcSize: data.length,
        params: {
          [zlib.constants.ZSTD_c_compressionLevel]: 3,
          [zlib.constants.ZSTD_c_contentSizeFlag]: 1,
        },
      });
    case 5:
      return zlib.brotliCompressSync(data, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
          [zlib.constants.BROTLI_PARAM_LGWIN]: 22,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length,
        },
      });
  }
}

/**
 * Decompresses stored chunk bytes. Throws LOG_CODEC_UNKNOWN for a code outside 0-5,
 * LOG_CODEC_CORRUPT for bytes the codec rejects, LOG_CODEC_TOO_LARGE past the cap.
 */
export function decode(code: number, data: Uint8Array, options: DecodeOptions = {}): Uint8Array {
  const checked = checkCode(code);
  const maxBytes = options.maxBytes ?? MAX_DECODED_BYTES;
  try {
    switch (checked) {
      case 0:
        if (data.length > maxBytes) throw tooLarge('raw', maxBytes);
        return data;
      case 1:
        return zlib.inflateSync(data, { maxOutputLength: Math.max(1, maxBytes) });
      case 2:
        return bzip2Decompress(data, maxBytes);
      case 3:
        return lz4Decompress(data, maxBytes);
      case 4:
        return zstdDecompress(data, maxBytes);
      case 5:
        return zlib.brotliDecompressSync(data, { maxOutputLength: Math.max(1, maxBytes) });
    }
  } catch (err) {
    if (err instanceof LogError) throw err;
    const name = CODEC_NAMES[checked];
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(name, maxBytes);
    throw new LogError('LOG_CODEC_CORRUPT', `${name}: ${(err as Error).message}`, { cause: err });
  }
}

const CODEC_NAMES = ['raw', 'gz', 'bz2', 'lz4', 'zstd', 'br'] as const;

function tooLarge(name: string, maxBytes: number): LogError {
  return new LogError('LOG_CODEC_TOO_LARGE', `${name}: decodes to more than ${maxBytes} bytes`);
}

/**
 * Node's zstd, with the output capped before it is allocated (maxOutputLength) and the
 * window a frame may ask for capped too, so a hostile frame cannot demand memory.
 */
function zstdDecompress(data: Uint8Array, maxBytes: number): Uint8Array {
  // zlib answers an empty input with an empty output; an empty chunk is no zstd frame.
  if (data.length === 0) throw new LogError('LOG_CODEC_CORRUPT', 'zstd: no frame');
  return zlib.zstdDecompressSync(data, {
    maxOutputLength: Math.max(1, maxBytes),
    params: { [zlib.constants.ZSTD_d_windowLogMax]: ZSTD_WINDOW_LOG_MAX },
  });
}
