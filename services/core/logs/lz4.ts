// LZ4 block format with the 4-byte size header that python-lz4's `lz4.block.compress`
// writes by default (store_size=True): a little-endian uint32 holding the uncompressed
// size, then one LZ4 block. Buildbot's compression code 3, read only: chunks a Buildbot
// master wrote. Flotilla never writes LZ4; the tests' writer is
// test/helpers/log-vectors/lz4.ts.
//
// A block is a run of sequences. Each sequence is a token byte (high nibble: literal
// count, low nibble: match length - 4; 15 in either means "more length bytes follow",
// each adding 0-255, a byte below 255 ending the run), the literals, then a 2-byte
// little-endian back-reference offset and the extra match-length bytes. The last
// sequence has literals only.

import { LogError } from './errors.js';

const HEADER_BYTES = 4;
const MIN_MATCH = 4;

function corrupt(why: string): LogError {
  return new LogError('LOG_CODEC_CORRUPT', `lz4: ${why}`);
}

/** Reads a length continued by 255-valued bytes; returns [length, next input index]. */
function readLength(src: Uint8Array, start: number, base: number): [number, number] {
  let length = base;
  let ip = start;
  if (base !== 15) return [length, ip];
  for (;;) {
    if (ip >= src.length) throw corrupt('input ends inside a length');
    const b = src[ip++]!;
    length += b;
    if (b !== 255) return [length, ip];
  }
}

/**
 * Decodes a size-prefixed LZ4 block. Rejects a declared size above `maxBytes` before
 * allocating, and any block that does not produce exactly the declared size.
 */
export function lz4Decompress(data: Uint8Array, maxBytes: number): Uint8Array {
  if (data.length < HEADER_BYTES) throw corrupt('shorter than its size header');
  const size = (data[0]! | (data[1]! << 8) | (data[2]! << 16) | (data[3]! << 24)) >>> 0;
  if (size > maxBytes) {
    throw new LogError('LOG_CODEC_TOO_LARGE', `lz4: declared size ${size} exceeds the limit of ${maxBytes}`);
  }
  const out = new Uint8Array(size);
  const src = data;
  let ip = HEADER_BYTES;
  let op = 0;
  // Every pass consumes at least the token byte, so the loop ends with the input.
  for (;;) {
    if (ip >= src.length) throw corrupt('input ends before the last sequence');
    const token = src[ip++]!;
    let literals: number;
    [literals, ip] = readLength(src, ip, token >>> 4);
    if (literals > src.length - ip) throw corrupt('literals run past the input');
    if (literals > size - op) throw corrupt('literals run past the declared size');
    out.set(src.subarray(ip, ip + literals), op);
    ip += literals;
    op += literals;
    if (ip === src.length) break;
    if (src.length - ip < 2) throw corrupt('input ends inside an offset');
    const offset = src[ip]! | (src[ip + 1]! << 8);
    ip += 2;
    if (offset === 0 || offset > op) throw corrupt(`offset ${offset} points before the output`);
    let matchLength: number;
    [matchLength, ip] = readLength(src, ip, token & 15);
    matchLength += MIN_MATCH;
    if (matchLength > size - op) throw corrupt('match runs past the declared size');
    let from = op - offset;
    if (offset >= matchLength) {
      out.copyWithin(op, from, from + matchLength);
      op += matchLength;
    } else {
      // Overlapping copy: repeats the last `offset` bytes.
      for (let i = 0; i < matchLength; i++) out[op++] = out[from++]!;
    }
  }
  if (op !== size) throw corrupt(`block holds ${op} bytes, header declares ${size}`);
  return out;
}
