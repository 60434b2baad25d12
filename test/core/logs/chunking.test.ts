// appendLog's split and compressLog's merge, checked against what Buildbot 3.7's own
// code stored for the same appends (vectors/buildbot.json, from make-vectors.py).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appendChunks,
  compressLogRows,
  MAX_CHUNK_LINES,
  MAX_CHUNK_SIZE,
  mergeChunks,
  planCompressLog,
  splitAppend,
  storeChunk,
} from '../../../services/core/logs/chunking.js';
import { type CompressionCode, decode, encode } from '../../../services/core/logs/codecs.js';
import type { LogChunkRow } from '../../../services/core/logs/types.js';
import { errorCode } from './errors.js';
import {
  asRecorded,
  type BuildbotScenario,
  buildbotVectors,
  codecVectors,
  inputBytes,
  partsText,
  readOnlyMethod,
  rowFromVector,
  writtenCode,
} from './vectors.js';

const { scenarios } = buildbotVectors();
const utf8 = new TextEncoder();

/** A row as comparable data: lines, code, and the decoded text. */
function view(row: LogChunkRow) {
  return {
    first_line: row.first_line,
    last_line: row.last_line,
    compressed: row.compressed,
    text: Buffer.from(decode(row.compressed, row.content)).toString('utf8'),
  };
}

/**
 * What is compared of a row written for `sc`: everything, but the code where Buildbot
 * wrote bz2 or lz4 (Flotilla writes gz there: the split and the text must still agree).
 */
function comparable(sc: BuildbotScenario) {
  return (row: LogChunkRow) => {
    const v = view(row);
    return readOnlyMethod(sc) ? { ...v, compressed: 'any' } : v;
  };
}

/** Our appendLog over a scenario's appends: every row written, and the final num_lines. */
function ourAppends(sc: BuildbotScenario): { rows: LogChunkRow[]; numLines: number } {
  const code = writtenCode(sc);
  const rows: LogChunkRow[] = [];
  let numLines = 0;
  for (const a of sc.appends) {
    const out = appendChunks(partsText(a.parts), numLines, code);
    rows.push(...out.rows);
    numLines = out.numLines;
  }
  return { rows, numLines };
}

const isQuirk = (sc: BuildbotScenario) => sc.name.includes('(Buildbot quirk)');

describe('appendLog: the rows Buildbot 3.7 writes', () => {
  for (const sc of scenarios.filter((s) => !isQuirk(s))) {
    it(sc.name, () => {
      const ours = ourAppends(sc);
      expect(ours.rows.map(comparable(sc))).toEqual(sc.rows.map(rowFromVector).map(comparable(sc)));
      expect(ours.numLines).toBe(sc.num_lines);
    });
  }

  it('covers the limits: >1000 lines in one chunk, 65535/65536-byte splits, truncation', () => {
    const byName = (part: string) => scenarios.find((s) => s.name.includes(part))!;
    expect(byName('5000 short lines').rows).toHaveLength(1);
    expect(byName('65535 bytes').rows.map((r) => [r.first_line, r.last_line])).toEqual([[0, 655]]);
    expect(byName('65536 bytes').rows.map((r) => [r.first_line, r.last_line])).toEqual([
      [0, 654],
      [655, 655],
    ]);
    expect(byName('exactly 65536').rows.map((r) => [r.first_line, r.last_line])).toEqual([[0, 0]]);
  });
});

describe('appendLog: where we deliberately differ (Buildbot loses an empty line)', () => {
  it('an appended "\\n" is an empty chunk, where Buildbot writes none but counts the line', () => {
    const sc = scenarios.find((s) => s.name.startsWith('an appended empty line'))!;
    expect(sc.rows.map(rowFromVector).map(view)).toEqual([
      { first_line: 0, last_line: 0, compressed: 0, text: 'first' },
      { first_line: 2, last_line: 2, compressed: 0, text: 'third' },
    ]);
    expect(sc.num_lines).toBe(3);
    const ours = ourAppends(sc);
    expect(ours.rows.map(view)).toEqual([
      { first_line: 0, last_line: 0, compressed: 0, text: 'first' },
      { first_line: 1, last_line: 1, compressed: 0, text: '' },
      { first_line: 2, last_line: 2, compressed: 0, text: 'third' },
    ]);
    expect(ours.numLines).toBe(3);
  });

  it('an empty last line after a split at the limit is kept, where Buildbot drops it', () => {
    const sc = scenarios.find((s) => s.name.startsWith('a split whose newline'))!;
    const theirs = sc.rows.map(rowFromVector).map(view);
    expect(theirs.map((r) => [r.first_line, r.last_line, r.text.length])).toEqual([
      [0, 0, 65535],
      [1, 1, 4],
    ]);
    expect(sc.num_lines).toBe(2);
    const ours = ourAppends(sc).rows.map(view);
    expect(ours.map((r) => [r.first_line, r.last_line, r.text.length])).toEqual([
      [0, 0, 65535],
      [1, 1, 0],
      [2, 2, 4],
    ]);
    expect(ours[0]!.text).toBe(theirs[0]!.text);
  });
});

describe('splitAppend', () => {
  it('requires a final newline', () => {
    for (const text of ['', 'a', 'a\nb', 'line\r']) {
      expect(
        errorCode(() => splitAppend(text, 0)),
        JSON.stringify(text),
      ).toBe('LOG_APPEND_UNTERMINATED');
    }
    expect(errorCode(() => splitAppend('a\n', -1))).toBe('LOG_CHUNK_ORDER');
    expect(errorCode(() => splitAppend('a\n', 1.5))).toBe('LOG_CHUNK_ORDER');
  });

  it('numbers lines from the log’s next line, without the final newline', () => {
    const { chunks, numLines } = splitAppend('oa\neb\n', 7);
    expect(chunks.map((c) => [c.first_line, c.last_line, Buffer.from(c.text).toString()])).toEqual([
      [7, 8, 'oa\neb'],
    ]);
    expect(numLines).toBe(9);
  });

  it('keeps an empty line inside the text', () => {
    const { chunks, numLines } = splitAppend('a\n\nb\n\n', 0);
    expect(chunks.map((c) => [c.first_line, c.last_line, Buffer.from(c.text).toString()])).toEqual([
      [0, 3, 'a\n\nb\n'],
    ]);
    expect(numLines).toBe(4);
  });

  it('every chunk fits 64 KiB, is whole UTF-8, and the line count adds up (property)', () => {
    const piece = fc.oneof(
      fc.constantFrom('a', 'é', '✓', '😀', '\n', 'line\n', 'x'.repeat(1000)),
      fc.string({ unit: 'binary', maxLength: 20 }),
    );
    const strict = new TextDecoder('utf-8', { fatal: true });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(piece, fc.integer({ min: 1, max: 40_000 })), { minLength: 1, maxLength: 8 }),
        fc.nat({ max: 100 }),
        (runs, next) => {
          const text = `${runs.map(([s, n]) => s.repeat(Math.max(1, Math.floor(n / Math.max(1, s.length))))).join('')}\n`;
          const { chunks, numLines } = splitAppend(text, next);
          let line = next;
          for (const c of chunks) {
            expect(c.text.length).toBeLessThanOrEqual(MAX_CHUNK_SIZE);
            strict.decode(c.text);
            expect(c.first_line).toBe(line);
            expect(c.last_line - c.first_line).toBe(c.text.filter((b) => b === 0x0a).length);
            line = c.last_line + 1;
          }
          expect(numLines).toBe(line);
          // Without a line past the limit, nothing is lost: the chunks are the text.
          const stored = Buffer.from(utf8.encode(text.slice(0, -1)));
          const lines = stored.toString().split('\n');
          if (lines.every((l) => Buffer.byteLength(l) <= MAX_CHUNK_SIZE)) {
            expect(
              Buffer.concat(chunks.flatMap((c, i) => (i ? [Buffer.from('\n'), c.text] : [c.text]))).equals(
                stored,
              ),
            ).toBe(true);
            expect(numLines - next).toBe(lines.length);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('cuts a long line before a character the limit would split, and drops the rest of that line', () => {
    for (const [ch, size] of [
      ['é', 2],
      ['✓', 3],
      ['😀', 4],
    ] as const) {
      for (let lead = 0; lead < size; lead++) {
        const text = `${'a'.repeat(lead)}${ch.repeat(70_000 / size)}\nnext\n`;
        const { chunks, numLines } = splitAppend(text, 0);
        const head = chunks[0]!.text;
        const whole = Math.floor((MAX_CHUNK_SIZE - lead) / size);
        expect(head.length, `${ch} after ${lead}`).toBe(lead + whole * size);
        expect(Buffer.from(head).toString()).toBe('a'.repeat(lead) + ch.repeat(whole));
        expect(chunks.map((c) => [c.first_line, c.last_line])).toEqual([
          [0, 0],
          [1, 1],
        ]);
        expect(numLines).toBe(2);
      }
    }
  });
});

/** The codes Flotilla writes; bz2 (2) and lz4 (3) it only reads. */
const WRITTEN = [1, 4, 5] as CompressionCode[];

describe('storeChunk: compressed only if strictly smaller', () => {
  it('keeps incompressible and tiny chunks raw', () => {
    const random = inputBytes(codecVectors().cases.find((c) => c.name === 'incompressible')!.input);
    for (const code of WRITTEN) {
      expect(storeChunk(random, code).compressed, `code ${code}`).toBe(0);
      expect(storeChunk(new Uint8Array(0), code)).toEqual({ content: new Uint8Array(0), compressed: 0 });
      expect(storeChunk(utf8.encode('ok'), code).compressed).toBe(0);
    }
  });

  it('compresses when the codec wins, and raw method stores raw', () => {
    const text = utf8.encode('otest_001 ... ok (build)\n'.repeat(100));
    for (const code of WRITTEN) {
      const stored = storeChunk(text, code);
      expect(stored.compressed).toBe(code);
      expect(stored.content).toEqual(encode(code, text));
    }
    expect(storeChunk(text, 0)).toEqual({ content: text, compressed: 0 });
  });

  it('refuses bz2 and lz4, which Flotilla reads but never writes', () => {
    for (const code of [2, 3] as CompressionCode[]) {
      expect(() => storeChunk(utf8.encode('ok'), code)).toThrow(
        expect.objectContaining({ code: 'LOG_CODEC_READ_ONLY' }),
      );
    }
  });
});

describe('compressLog: the merges Buildbot 3.7 makes', () => {
  for (const sc of scenarios.filter((s) => s.compress)) {
    it(sc.name, () => {
      const before = sc.rows.map(rowFromVector);
      const plan = planCompressLog(
        before.map((r) => ({ first_line: r.first_line, last_line: r.last_line, length: r.content.length })),
        sc.compress,
      );
      const merged = compressLogRows(before, writtenCode(sc), sc.compress);
      expect(merged.map((m) => m.replaces)).toEqual(plan);
      const after = [
        ...before.filter(
          (r) => !plan.some((p) => r.first_line >= p.first_line && r.last_line <= p.last_line),
        ),
        ...merged.map((m) => m.row),
      ].sort((a, b) => a.first_line - b.first_line);
      expect(
        after.map((r) => ({
          first_line: r.first_line,
          last_line: r.last_line,
          compressed: r.compressed,
          decoded: decode(r.compressed, r.content),
        })),
      ).toEqual(
        sc.compressed_rows!.map((r) => ({
          ...r,
          compressed: readOnlyMethod(sc) ? expect.any(Number) : r.compressed,
          decoded: expect.anything(),
        })),
      );
      after.forEach((r, i) => {
        expect(asRecorded(decode(r.compressed, r.content), sc.compressed_rows![i]!.decoded)).toEqual(
          sc.compressed_rows![i]!.decoded,
        );
      });
    });
  }

  it('groups span up to 1,001 lines and 65,536 stored bytes', () => {
    expect(MAX_CHUNK_LINES).toBe(1000);
    const oneLine = (n: number) => ({ first_line: n, last_line: n, length: 10 });
    expect(planCompressLog(Array.from({ length: 2500 }, (_, i) => oneLine(i)))).toEqual([
      { first_line: 0, last_line: 1000 },
      { first_line: 1001, last_line: 2001 },
      { first_line: 2002, last_line: 2499 },
    ]);
    const big = (n: number, length: number) => ({ first_line: n, last_line: n, length });
    expect(planCompressLog([big(0, 30000), big(1, 35536), big(2, 1), big(3, 1)])).toEqual([
      { first_line: 0, last_line: 1 },
      { first_line: 2, last_line: 3 },
    ]);
  });

  it('leaves lone chunks alone unless forced, and empty logs entirely', () => {
    const rows = [
      { first_line: 0, last_line: 1500, length: 100 },
      { first_line: 1501, last_line: 1600, length: 100 },
    ];
    expect(planCompressLog(rows)).toEqual([]);
    expect(planCompressLog(rows, { force: true })).toEqual([
      { first_line: 0, last_line: 1500 },
      { first_line: 1501, last_line: 1600 },
    ]);
    expect(planCompressLog([], { force: true })).toEqual([]);
    expect(
      planCompressLog(
        [
          { first_line: 0, last_line: 0, length: 0 },
          { first_line: 1, last_line: 1, length: 0 },
        ],
        { force: true },
      ),
    ).toEqual([]);
  });

  it('never merges across missing lines, and starts at the first row (where Buildbot starts at 0)', () => {
    const rows = [
      { first_line: 1, last_line: 1, length: 5 },
      { first_line: 2, last_line: 2, length: 5 },
      { first_line: 4, last_line: 4, length: 5 },
      { first_line: 5, last_line: 5, length: 5 },
    ];
    expect(planCompressLog(rows)).toEqual([
      { first_line: 1, last_line: 2 },
      { first_line: 4, last_line: 5 },
    ]);
  });

  it('refuses rows out of order or overlapping', () => {
    const a = { first_line: 0, last_line: 5, length: 1 };
    expect(errorCode(() => planCompressLog([a, { first_line: 5, last_line: 6, length: 1 }]))).toBe(
      'LOG_CHUNK_ORDER',
    );
    expect(errorCode(() => planCompressLog([{ first_line: 3, last_line: 2, length: 1 }]))).toBe(
      'LOG_CHUNK_ORDER',
    );
  });

  it('mergeChunks joins with \\n, re-encodes, and refuses rows that do not add up', () => {
    const rows = appendChunks('oa\n', 0, 0).rows.concat(
      appendChunks('ob\noc\n', 1, 1).rows,
      appendChunks('\n', 3, 4).rows,
    );
    const merged = mergeChunks(rows, 0);
    expect(view(merged)).toEqual({ first_line: 0, last_line: 3, compressed: 0, text: 'oa\nob\noc\n' });
    const lying = { ...rows[1]!, last_line: 5 };
    expect(errorCode(() => mergeChunks([rows[0]!, lying], 1))).toBe('LOG_CHUNK_INCONSISTENT');
    expect(errorCode(() => mergeChunks([rows[0]!, rows[2]!], 1))).toBe('LOG_CHUNK_ORDER');
    expect(errorCode(() => mergeChunks([], 1))).toBe('LOG_CHUNK_ORDER');
    expect(errorCode(() => mergeChunks(rows, 1, { maxBytes: 5 }))).toBe('LOG_CODEC_TOO_LARGE');
  });
});
