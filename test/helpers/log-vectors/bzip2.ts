// A bzip2 writer (Buildbot's compression code 2: Python's `bz2.compress(data, 9)`), for
// tests only: Flotilla reads bzip2 chunks a Buildbot master wrote but never writes them
// (a master's `log_compression` is none, gzip or zstd), and no installed package writes
// bzip2, so the tests that need such chunks make them here. Per block of at most 899,981
// bytes (level 9's limit after the first run-length pass), the format's stages in order:
//   1. runs of 4-255 equal bytes become 4 bytes and a count byte;
//   2. Burrows-Wheeler transform (sorted rotations, by prefix doubling);
//   3. move-to-front, with runs of zeros written in bijective base 2 (RUNA/RUNB);
//   4. Huffman coding with 2-6 tables chosen per group of 50 symbols.
// Streams start "BZh9"; blocks and the stream end carry CRC-32 (MSB-first, poly 0x04c11db7).
// test/core/logs/codecs.test.ts checks its output against Python's, byte for byte.

const LEVEL = 9;
const BLOCK_LIMIT = LEVEL * 100_000 - 19;
const GROUP_SIZE = 50;
const MAX_CODE_LENGTH = 17;
const RUNA = 0;
const RUNB = 1;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    table[i] = c >>> 0;
  }
  return table;
})();

function crcUpdate(crc: number, byte: number): number {
  return ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
}

class BitWriter {
  private buf: Uint8Array;
  private pos = 0;
  private acc = 0;
  private bits = 0;

  constructor(capacity: number) {
    this.buf = new Uint8Array(Math.max(64, capacity));
  }

  /** Writes the low `n` bits of `value`, most significant first; n <= 24. */
  write(n: number, value: number): void {
    this.acc = (this.acc << n) | (value & ((1 << n) - 1));
    this.bits += n;
    while (this.bits >= 8) {
      this.bits -= 8;
      this.byte((this.acc >>> this.bits) & 0xff);
    }
    this.acc &= (1 << this.bits) - 1;
  }

  write32(value: number): void {
    this.write(16, value >>> 16);
    this.write(16, value & 0xffff);
  }

  private byte(b: number): void {
    if (this.pos === this.buf.length) {
      const bigger = new Uint8Array(this.buf.length * 2);
      bigger.set(this.buf);
      this.buf = bigger;
    }
    this.buf[this.pos++] = b;
  }

  /** Pads the last byte with zero bits and returns the bytes written. */
  finish(): Uint8Array {
    if (this.bits > 0) this.write(8 - this.bits, 0);
    return this.buf.slice(0, this.pos);
  }
}

/** Sorted cyclic rotations of block[0, n): returns the last column and the original's row. */
function burrowsWheeler(block: Uint8Array, n: number): { last: Uint8Array; origPtr: number } {
  const sa = new Int32Array(n);
  const byFirst = new Int32Array(n);
  let rank = new Int32Array(n);
  let next = new Int32Array(n);
  const count = new Int32Array(Math.max(257, n + 1));
  for (let i = 0; i < n; i++) count[block[i]! + 1]!++;
  for (let c = 1; c < 257; c++) count[c]! += count[c - 1]!;
  for (let i = 0; i < n; i++) sa[count[block[i]!]!++] = i;
  let classes = 0;
  for (let j = 0; j < n; j++) {
    if (j > 0 && block[sa[j]!] !== block[sa[j - 1]!]) classes++;
    rank[sa[j]!] = classes;
  }
  classes++;
  // Each round sorts rotations by their first 2k bytes from the order by their first k.
  for (let k = 1; classes < n && k < n; k <<= 1) {
    for (let j = 0; j < n; j++) {
      const p = sa[j]! - k;
      byFirst[j] = p < 0 ? p + n : p;
    }
    count.fill(0, 0, classes + 1);
    for (let j = 0; j < n; j++) count[rank[byFirst[j]!]! + 1]!++;
    for (let c = 1; c <= classes; c++) count[c]! += count[c - 1]!;
    for (let j = 0; j < n; j++) {
      const p = byFirst[j]!;
      sa[count[rank[p]!]!++] = p;
    }
    classes = 0;
    next[sa[0]!] = 0;
    for (let j = 1; j < n; j++) {
      const cur = sa[j]!;
      const prev = sa[j - 1]!;
      const curK = cur + k >= n ? cur + k - n : cur + k;
      const prevK = prev + k >= n ? prev + k - n : prev + k;
      if (rank[cur] !== rank[prev] || rank[curK] !== rank[prevK]) classes++;
      next[cur] = classes;
    }
    classes++;
    [rank, next] = [next, rank];
  }
  const last = new Uint8Array(n);
  let origPtr = 0;
  for (let j = 0; j < n; j++) {
    const i = sa[j]!;
    last[j] = block[i === 0 ? n - 1 : i - 1]!;
    if (i === 0) origPtr = j;
  }
  return { last, origPtr };
}

/** Huffman code lengths (1..maxLength) for every symbol, unused ones included. */
function codeLengths(freq: ArrayLike<number>, alphaSize: number, maxLength: number): Uint8Array {
  const weight = new Float64Array(alphaSize);
  for (let i = 0; i < alphaSize; i++) weight[i] = Math.max(1, freq[i]!);
  for (;;) {
    // Two-queue Huffman: leaves sorted by weight, internal nodes made in weight order.
    const leaves = Array.from({ length: alphaSize }, (_, i) => i).sort((a, b) => weight[a]! - weight[b]!);
    const parent = new Int32Array(2 * alphaSize);
    const nodeWeight = new Float64Array(2 * alphaSize);
    for (let i = 0; i < alphaSize; i++) nodeWeight[i] = weight[i]!;
    let li = 0;
    let qi = alphaSize;
    let made = alphaSize;
    const take = (): number => {
      if (li < alphaSize && (qi >= made || nodeWeight[leaves[li]!]! <= nodeWeight[qi]!)) return leaves[li++]!;
      return qi++;
    };
    while (made < 2 * alphaSize - 1) {
      const a = take();
      const b = take();
      nodeWeight[made] = nodeWeight[a]! + nodeWeight[b]!;
      parent[a] = made;
      parent[b] = made;
      made++;
    }
    const depth = new Int32Array(2 * alphaSize);
    const root = made - 1;
    for (let node = root - 1; node >= 0; node--) depth[node] = depth[parent[node]!]! + 1;
    const lengths = new Uint8Array(alphaSize);
    let longest = 0;
    for (let i = 0; i < alphaSize; i++) {
      lengths[i] = depth[i]!;
      longest = Math.max(longest, depth[i]!);
    }
    if (longest <= maxLength) return lengths;
    for (let i = 0; i < alphaSize; i++) weight[i] = 1 + Math.floor(weight[i]! / 2);
  }
}

/** Canonical codes: by increasing length, then by symbol. */
function assignCodes(lengths: Uint8Array): Int32Array {
  const codes = new Int32Array(lengths.length);
  let code = 0;
  for (let len = 1; len <= 20; len++) {
    for (let s = 0; s < lengths.length; s++) if (lengths[s] === len) codes[s] = code++;
    code <<= 1;
  }
  return codes;
}

/** Move-to-front over the used byte values, zero runs as RUNA/RUNB, then end-of-block. */
function moveToFront(
  last: Uint8Array,
  inUse: boolean[],
): { symbols: Uint16Array; count: number; alphaSize: number } {
  const toSeq = new Int32Array(256);
  let nInUse = 0;
  for (let c = 0; c < 256; c++) if (inUse[c]) toSeq[c] = nInUse++;
  const order = new Uint8Array(nInUse);
  for (let i = 0; i < nInUse; i++) order[i] = i;
  const symbols = new Uint16Array(last.length + 1);
  let count = 0;
  let zeros = 0;
  const flushZeros = () => {
    if (zeros === 0) return;
    let z = zeros - 1;
    for (;;) {
      symbols[count++] = z & 1 ? RUNB : RUNA;
      if (z < 2) break;
      z = (z - 2) >>> 1;
    }
    zeros = 0;
  };
  for (let i = 0; i < last.length; i++) {
    const s = toSeq[last[i]!]!;
    let j = 0;
    while (order[j] !== s) j++;
    if (j === 0) {
      zeros++;
      continue;
    }
    flushZeros();
    order.copyWithin(1, 0, j);
    order[0] = s;
    symbols[count++] = j + 1;
  }
  flushZeros();
  symbols[count++] = nInUse + 1;
  return { symbols, count, alphaSize: nInUse + 2 };
}

function writeBlock(out: BitWriter, block: Uint8Array, n: number, crc: number): void {
  const inUse: boolean[] = new Array(256).fill(false);
  for (let i = 0; i < n; i++) inUse[block[i]!] = true;
  const { last, origPtr } = burrowsWheeler(block, n);
  const { symbols, count, alphaSize } = moveToFront(last, inUse);

  const groups = Math.ceil(count / GROUP_SIZE);
  const nTables = count < 200 ? 2 : count < 600 ? 3 : count < 1200 ? 4 : count < 2400 ? 5 : 6;
  const symbolFreq = new Int32Array(alphaSize);
  for (let i = 0; i < count; i++) symbolFreq[symbols[i]!]!++;
  // Start with tables that each favour one slice of the alphabet (by frequency), then
  // refine: give each group of 50 the cheapest table and rebuild tables from their groups.
  let tables: Uint8Array[] = [];
  {
    let remaining = count;
    let lo = 0;
    for (let t = nTables; t > 0; t--) {
      const target = remaining / t;
      let hi = lo - 1;
      let got = 0;
      while (got < target && hi < alphaSize - 1) got += symbolFreq[++hi]!;
      const lengths = new Uint8Array(alphaSize).fill(15);
      for (let s = lo; s <= hi; s++) lengths[s] = 0;
      tables.push(lengths);
      remaining -= got;
      lo = hi + 1;
    }
  }
  const selectors = new Uint8Array(groups);
  for (let pass = 0; pass < 4; pass++) {
    const freqs = tables.map(() => new Int32Array(alphaSize));
    for (let g = 0; g < groups; g++) {
      const end = Math.min(count, (g + 1) * GROUP_SIZE);
      let best = 0;
      let bestCost = Number.POSITIVE_INFINITY;
      for (let t = 0; t < nTables; t++) {
        const lengths = tables[t]!;
        let cost = 0;
        for (let i = g * GROUP_SIZE; i < end; i++) cost += lengths[symbols[i]!]!;
        if (cost < bestCost) {
          bestCost = cost;
          best = t;
        }
      }
      selectors[g] = best;
      const f = freqs[best]!;
      for (let i = g * GROUP_SIZE; i < end; i++) f[symbols[i]!]!++;
    }
    tables = freqs.map((f) => codeLengths(f, alphaSize, MAX_CODE_LENGTH));
  }
  const codes = tables.map(assignCodes);

  out.write(24, 0x314159);
  out.write(24, 0x265359);
  out.write32(crc);
  out.write(1, 0);
  out.write(24, origPtr);
  let ranges = 0;
  for (let r = 0; r < 16; r++) if (inUse.slice(r * 16, r * 16 + 16).some(Boolean)) ranges |= 0x8000 >>> r;
  out.write(16, ranges);
  for (let r = 0; r < 16; r++) {
    if (!(ranges & (0x8000 >>> r))) continue;
    let bits = 0;
    for (let c = 0; c < 16; c++) if (inUse[r * 16 + c]) bits |= 0x8000 >>> c;
    out.write(16, bits);
  }
  out.write(3, nTables);
  out.write(15, groups);
  const order = Array.from({ length: nTables }, (_, i) => i);
  for (let g = 0; g < groups; g++) {
    const j = order.indexOf(selectors[g]!);
    for (let k = 0; k < j; k++) out.write(1, 1);
    out.write(1, 0);
    order.splice(j, 1);
    order.unshift(selectors[g]!);
  }
  for (const lengths of tables) {
    let current = lengths[0]!;
    out.write(5, current);
    for (let s = 0; s < alphaSize; s++) {
      while (current < lengths[s]!) {
        out.write(2, 2);
        current++;
      }
      while (current > lengths[s]!) {
        out.write(2, 3);
        current--;
      }
      out.write(1, 0);
    }
  }
  for (let g = 0; g < groups; g++) {
    const lengths = tables[selectors[g]!]!;
    const code = codes[selectors[g]!]!;
    const end = Math.min(count, (g + 1) * GROUP_SIZE);
    for (let i = g * GROUP_SIZE; i < end; i++) out.write(lengths[symbols[i]!]!, code[symbols[i]!]!);
  }
}

/** bzip2 at level 9, as Python's `bz2.compress(data, 9)` frames it. */
export function bzip2Compress(data: Uint8Array): Uint8Array {
  const out = new BitWriter((data.length >>> 1) + 64);
  out.write(24, 0x425a68); // "BZh"
  out.write(8, 0x30 + LEVEL);
  const block = new Uint8Array(BLOCK_LIMIT);
  let combined = 0;
  let pos = 0;
  while (pos < data.length) {
    let n = 0;
    let crc = 0xffffffff;
    while (pos < data.length) {
      const b = data[pos]!;
      let run = 1;
      while (run < 255 && pos + run < data.length && data[pos + run] === b) run++;
      const need = run >= 4 ? 5 : run;
      if (n + need > BLOCK_LIMIT) break;
      for (let i = 0; i < Math.min(run, 4); i++) block[n++] = b;
      if (run >= 4) block[n++] = run - 4;
      for (let i = 0; i < run; i++) crc = crcUpdate(crc, b);
      pos += run;
    }
    crc = ~crc >>> 0;
    combined = (((combined << 1) | (combined >>> 31)) ^ crc) >>> 0;
    writeBlock(out, block, n, crc);
  }
  out.write(24, 0x177245);
  out.write(24, 0x385090);
  out.write32(combined);
  return out.finish();
}
