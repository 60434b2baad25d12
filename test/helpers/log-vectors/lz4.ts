// An LZ4 block writer (Buildbot's compression code 3: python-lz4's `lz4.block.compress`,
// size-prefixed), for tests only: Flotilla reads LZ4 chunks a Buildbot master wrote but
// never writes them, so the tests that need such chunks make them here. The block format
// is described in services/core/logs/lz4.ts, the reader. A writer must keep the last 5
// bytes as literals and start no match within the last 12 bytes, or reference decoders
// refuse the block. test/core/logs/codecs.test.ts checks its output against python-lz4's.

const HEADER_BYTES = 4;
const MIN_MATCH = 4;
/** The last bytes of a block that must be literals. */
const LAST_LITERALS = 5;
/** No match may start this close to the end of the block. */
const MATCH_START_MARGIN = 12;
const MAX_OFFSET = 65535;
const HASH_BITS = 16;

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
