// The binary COPY reader: streams written here to the documented format, cut at every byte,
// and the bytes a real PostgreSQL sends for the types the raw log download reads.
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { describe, expect, it } from 'vitest';
import {
  CopyBinaryParser,
  CopyFormatError,
  type CopyRow,
  copyInt,
} from '../../services/core/db/copy-binary.js';
import { testEnv } from '../helpers/env.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

function int16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
}
function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}

/** A binary COPY stream of `rows`, with a header extension of `extension` bytes. */
function copyStream(rows: CopyRow[], extension = 0, flags = 0): Buffer {
  const parts = [SIGNATURE, int32(flags), int32(extension), Buffer.alloc(extension, 0x55)];
  for (const row of rows) {
    parts.push(int16(row.length));
    for (const field of row)
      parts.push(field === null ? int32(-1) : Buffer.concat([int32(field.length), field]));
  }
  parts.push(int16(-1));
  return Buffer.concat(parts);
}

/** Every row of `pieces` pushed in order, with the end checked. */
function parse(pieces: Buffer[]): CopyRow[] {
  const parser = new CopyBinaryParser();
  const rows = pieces.flatMap((p) => parser.push(p));
  parser.end();
  return rows;
}

function formatError(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(CopyFormatError);
    return (err as Error).message;
  }
  throw new Error('expected a CopyFormatError');
}

const ROWS: CopyRow[] = [
  [int32(7), null, Buffer.from('abc'), Buffer.alloc(0)],
  [int16(-3), Buffer.from('8 bytes!'), Buffer.from('\n\xff\0', 'latin1')],
  [],
  [null],
];

describe('binary COPY reader', () => {
  it('reads tuples, NULLs, empty fields, a header extension and the trailer', () => {
    for (const extension of [0, 3]) {
      const rows = parse([copyStream(ROWS, extension)]);
      expect(rows).toEqual(ROWS);
    }
  });

  it('gives the same rows however the stream is cut: at every byte, in two and byte by byte', () => {
    const whole = copyStream(ROWS, 5);
    for (let cut = 0; cut <= whole.length; cut++) {
      expect(parse([whole.subarray(0, cut), whole.subarray(cut)]), `cut at ${cut}`).toEqual(ROWS);
    }
    const bytes = [...whole].map((b) => Buffer.from([b]));
    expect(parse(bytes)).toEqual(ROWS);
  });

  it('answers rows as soon as their last field arrives, and is done only after the trailer', () => {
    const whole = copyStream([[Buffer.from('x')], [Buffer.from('y')]]);
    const parser = new CopyBinaryParser();
    const firstRowEnds = SIGNATURE.length + 8 + 2 + 4 + 1;
    expect(parser.push(whole.subarray(0, firstRowEnds))).toEqual([[Buffer.from('x')]]);
    expect(parser.done).toBe(false);
    expect(() => parser.end()).toThrow(CopyFormatError);
    expect(parser.push(whole.subarray(firstRowEnds, -2))).toEqual([[Buffer.from('y')]]);
    expect(parser.push(whole.subarray(-2))).toEqual([]);
    expect(parser.done).toBe(true);
    parser.end();
  });

  it('refuses what is not binary COPY data, with a message that says why', () => {
    const good = copyStream(ROWS);
    const text = Buffer.from('1\t\\x616263\n\\.\n');
    expect(formatError(() => new CopyBinaryParser().push(text))).toMatch(/signature/);
    // A wrong signature is noticed on its 11th byte, however it arrives.
    const bad = Buffer.from(good);
    bad[10] = 1;
    expect(formatError(() => parse([...bad].map((b) => Buffer.from([b]))))).toMatch(/signature/);
    expect(formatError(() => parse([copyStream(ROWS, 0, 1 << 16)]))).toMatch(/flags 0x10000/);
    // Bits 0-15 are compatible extensions a reader ignores.
    expect(parse([copyStream(ROWS, 0, 1)])).toEqual(ROWS);
    expect(formatError(() => parse([good.subarray(0, -1)]))).toMatch(/ends before its trailer/);
    expect(formatError(() => parse([good.subarray(0, 20)]))).toMatch(/ends before its trailer/);
    expect(formatError(() => parse([Buffer.concat([good, Buffer.from([0])])]))).toMatch(/after its trailer/);
    const negative = Buffer.concat([SIGNATURE, int32(0), int32(0), int16(1), int32(-2)]);
    expect(formatError(() => new CopyBinaryParser().push(negative))).toMatch(/field length -2/);
    const fields = Buffer.concat([SIGNATURE, int32(0), int32(0), int16(-5)]);
    expect(formatError(() => new CopyBinaryParser().push(fields))).toMatch(/-5 fields/);
  });

  it('reads integers of 2, 4 and 8 bytes, and refuses others', () => {
    expect(copyInt(int16(-2))).toBe(-2);
    expect(copyInt(int32(2 ** 31 - 1))).toBe(2 ** 31 - 1);
    const big = Buffer.alloc(8);
    big.writeBigInt64BE(BigInt(Number.MAX_SAFE_INTEGER));
    expect(copyInt(big)).toBe(Number.MAX_SAFE_INTEGER);
    big.writeBigInt64BE(2n ** 60n);
    expect(formatError(() => copyInt(big))).toMatch(/beyond 2\^53/);
    expect(formatError(() => copyInt(null))).toMatch(/NULL/);
    expect(formatError(() => copyInt(Buffer.alloc(3)))).toMatch(/3 bytes/);
  });

  it('reads what PostgreSQL sends', async () => {
    const client = new pg.Client({ connectionString: testEnv().databaseUrl });
    await client.connect();
    try {
      const stream = client.query(
        copyStreams.to(`COPY (
          SELECT n::int4, (-n)::int2, n::int8 * 1000000000000, decode(repeat('ab', n * 50000), 'hex'),
                 CASE WHEN n = 2 THEN NULL ELSE ''::bytea END
          FROM generate_series(1, 3) n ORDER BY n) TO STDOUT (FORMAT binary)`),
      );
      const parser = new CopyBinaryParser();
      const rows: CopyRow[] = [];
      for await (const chunk of stream as AsyncIterable<Buffer>) rows.push(...parser.push(chunk));
      parser.end();
      expect(rows.map((r) => [copyInt(r[0]!), copyInt(r[1]!), copyInt(r[2]!)])).toEqual([
        [1, -1, 1e12],
        [2, -2, 2e12],
        [3, -3, 3e12],
      ]);
      expect(rows.map((r) => r[3]!.equals(Buffer.alloc(r[3]!.length, 0xab)) && r[3]!.length)).toEqual([
        50000, 100000, 150000,
      ]);
      expect(rows.map((r) => r[4])).toEqual([Buffer.alloc(0), null, Buffer.alloc(0)]);
    } finally {
      await client.end();
    }
  });
});
