// LZ4 block format with the 4-byte size header that python-lz4's `lz4.block.compress`
// writes by default (store_size=True): a little-endian uint32 holding the uncompressed
// size, then one LZ4 block. Buildbot's compression code 3.
//
// A block is a run of sequences. Each sequence is a token byte (high nibble: literal
// count, low nibble: match length - 4; 15 in either means "more length bytes follow",
// each adding 0-255, a byte below 255 ending the run), the literals, then a 2-byte
// little-endian back-reference offset and the extra match-length bytes. The last
// sequence has literals only. A writer must keep the last 5 bytes as literals and
// start no match within the last 12 bytes, or reference decoders refuse the block.

import { LogError } from './errors.js';

const HEADER_BYTES = 4;
const MIN_MATCH = 4;
/** The last bytes of a block that must be literals. */
const LAST_LITERALS = 5;
/** No match may start this close to the end of the block. */
const MATCH_START_MARGIN = 12;
const MAX_OFFSET = 65535;
const HASH_BITS = 16;

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

function read32(src: Uint8Array, i: number): number {
  return src[i]! | (src[i + 1]! << 8) | (src[i + 2]! << 16) | (src[i + 3]! << 24);
}

function hash32(value: number): number {
  return Math.imul(value, 2654435761) >>> (32 - HASH_BITS);
}

class BlockWriter {
  readonly out: Uint8Array;
  pos: number;
  constructor(capacity: number, start: number) {
    this.out = new Uint8Array(capacity);
    this.pos = start;
  }

  private length(extra: number): void {
    let rest = extra;
    while (rest >= 255) {
      this.out[this.pos++] = 255;
      rest -= 255;
    }
    this.out[this.pos++] = rest;
  }

  /** One sequence: literals src[from, to), then (unless matchLength is 0) a match. */
  sequence(src: Uint8Array, from: number, to: number, offset: number, matchLength: number): void {
    const literals = to - from;
    const matchCode = matchLength === 0 ? 0 : matchLength - MIN_MATCH;
    this.out[this.pos++] = (Math.min(literals, 15) << 4) | Math.min(matchCode, 15);
    if (literals >= 15) this.length(literals - 15);
    this.out.set(src.subarray(from, to), this.pos);
    this.pos += literals;
    if (matchLength === 0) return;
    this.out[this.pos++] = offset & 0xff;
    this.out[this.pos++] = offset >>> 8;
    if (matchCode >= 15) this.length(matchCode - 15);
  }
}

/**
 * Encodes `src` as a size-prefixed LZ4 block (greedy matching over a hash of 4-byte
 * prefixes, skipping faster through data that does not compress).
 */
export function lz4Compress(src: Uint8Array): Uint8Array {
  const n = src.length;
  const bound = HEADER_BYTES + n + Math.ceil(n / 255) + 16;
  const w = new BlockWriter(bound, HEADER_BYTES);
  w.out[0] = n & 0xff;
  w.out[1] = (n >>> 8) & 0xff;
  w.out[2] = (n >>> 16) & 0xff;
  w.out[3] = (n >>> 24) & 0xff;

  const table = new Int32Array(1 << HASH_BITS).fill(-1);
  const lastMatchStart = n - MATCH_START_MARGIN;
  const matchEndLimit = n - LAST_LITERALS;
  let anchor = 0;
  let ip = 0;
  let misses = 0;
  while (ip <= lastMatchStart) {
    const sequence = read32(src, ip);
    const h = hash32(sequence);
    let ref = table[h]!;
    table[h] = ip;
    if (ref < 0 || ip - ref > MAX_OFFSET || read32(src, ref) !== sequence) {
      ip += 1 + (misses++ >> 6);
      continue;
    }
    misses = 0;
    // Grow the match backwards over pending literals, then forwards.
    while (ip > anchor && ref > 0 && src[ip - 1] === src[ref - 1]) {
      ip--;
      ref--;
    }
    let length = MIN_MATCH;
    while (ip + length < matchEndLimit && src[ip + length] === src[ref + length]) length++;
    w.sequence(src, anchor, ip, ip - ref, length);
    ip += length;
    anchor = ip;
    // Index a position inside the match so that the next repeat is found.
    if (ip - 2 >= 0 && ip - 2 <= lastMatchStart) table[hash32(read32(src, ip - 2))] = ip - 2;
  }
  w.sequence(src, anchor, n, 0, 0);
  return w.out.slice(0, w.pos);
}
