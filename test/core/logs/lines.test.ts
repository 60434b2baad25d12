// Reading lines back: range reads and raw downloads, checked against Buildbot 3.7's
// answers on the same rows (vectors/buildbot.json) and on the oracle's real data
// (test/fixtures/buildbot-3.7: fixture.sql's logchunks, cases.json's logcontents and raw cases).
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appendChunks, compressLogRows } from '../../../services/core/logs/chunking.js';
import {
  chunkLines,
  contentsRange,
  overlaps,
  RawLogStream,
  rawLogBytes,
  rawRange,
  readLogLines,
} from '../../../services/core/logs/lines.js';
import type { LineRange, LogChunkRow, LogType } from '../../../services/core/logs/types.js';
import { FIXTURE_SQL, goldenCases } from '../../helpers/buildbot-recorded.js';
import { encodeAnyCode } from '../../helpers/log-vectors/encode.js';
import { errorCode } from './errors.js';
import { asRecorded, buildbotVectors, rowFromVector, writtenCode } from './vectors.js';

const { scenarios } = buildbotVectors();

const range = (first_line: number, last_line: number): LineRange => ({ first_line, last_line });

/** The whole raw body, pushed one row at a time as the API streams it. */
function rawBody(rows: Iterable<LogChunkRow>, type: LogType, numLines: number): Buffer {
  const stream = new RawLogStream(type, numLines);
  return Buffer.concat([...rows].map((r) => stream.push(r)));
}

/** The logchunks endpoint: null where Buildbot answers not found. */
function contents(rows: LogChunkRow[], numLines: number, offset: number | null, limit: number | null) {
  const r = contentsRange(numLines, offset, limit);
  return r && readLogLines(rows, r);
}

describe('reads: what Buildbot 3.7 answers on the same rows', () => {
  const splitlines = "stdio raw with characters Python's splitlines breaks at";
  for (const sc of scenarios) {
    const rows = sc.rows.map(rowFromVector);
    it(sc.name, () => {
      for (const read of sc.reads) {
        const text = readLogLines(rows, range(read.first, read.last));
        expect(asRecorded(text, read.text), `lines ${read.first}..${read.last}`).toEqual(read.text);
      }
      for (const c of sc.contents) {
        const got = contents(rows, sc.num_lines, c.offset, c.limit);
        const want = c.content === null ? null : asRecorded(got ?? '', c.content);
        expect(want, `offset=${c.offset} limit=${c.limit}`).toEqual(c.content);
        expect(got === null).toBe(c.content === null);
      }
      if (sc.name !== splitlines) {
        expect(asRecorded(rawBody(rows, sc.type, sc.num_lines).toString('utf8'), sc.raw)).toEqual(sc.raw);
      }
      // After compressLog the same reads give the same text.
      if (sc.compress) {
        // A Flotilla master merges Buildbot's bz2 or lz4 rows into gz ones (writtenCode).
        const merged = compressLogRows(rows, writtenCode(sc), sc.compress).map((m) => m.row);
        const kept = rows.filter((r) => !merged.some((m) => overlaps(r, m)));
        const after = [...kept, ...merged].sort((a, b) => a.first_line - b.first_line);
        for (const read of sc.reads) {
          const text = readLogLines(after, range(read.first, read.last));
          expect(asRecorded(text, read.text)).toEqual(read.text);
        }
      }
    });
  }

  it("stdio raw breaks lines at \\n only, where Buildbot's splitlines also breaks at \\r, \\f, \\x1c, U+2028", () => {
    const sc = scenarios.find((s) => s.name === splitlines)!;
    // Buildbot also strips the first character after each of those: b, d, f and h are lost.
    expect(sc.raw).toBe('a\n\nc\n\ne\n\ng\n\nplain');
    expect(rawBody(sc.rows.map(rowFromVector), 's', sc.num_lines).toString()).toBe(
      'a\rb\nc\fd\ne\u2028f\ng\u001ch\nplain',
    );
  });

  it('logs with several chunks are read across chunk boundaries', () => {
    const sc = scenarios.find((s) => s.name === 'lines over several chunks')!;
    expect(sc.rows.length).toBeGreaterThan(2);
    expect(sc.reads.some((r) => r.first <= sc.rows[0]!.last_line && r.last >= sc.rows[1]!.first_line)).toBe(
      true,
    );
  });
});

describe('reads: the oracle fixture and its recorded answers', () => {
  /** COPY text format: tab-separated, backslash escapes, \N for null. */
  function copyBlock(sql: string, table: string): Record<string, string | null>[] {
    const start = sql.indexOf(`COPY public.${table} (`);
    const header = sql.slice(start, sql.indexOf('\n', start));
    const columns = header.slice(header.indexOf('(') + 1, header.indexOf(')')).split(', ');
    const body = sql.slice(start + header.length + 1, sql.indexOf('\n\\.\n', start));
    const field = (f: string) =>
      f === '\\N'
        ? null
        : f.replace(/\\(.)/g, (_, c: string) => ({ t: '\t', n: '\n', r: '\r', '\\': '\\' })[c] ?? c);
    return body
      .split('\n')
      .map((line) => Object.fromEntries(line.split('\t').map((f, i) => [columns[i]!, field(f)])));
  }

  const sql = readFileSync(FIXTURE_SQL, 'utf8');
  const logs = copyBlock(sql, 'logs');
  const steps = copyBlock(sql, 'steps');
  const builds = copyBlock(sql, 'builds');
  const chunks = copyBlock(sql, 'logchunks');
  const rowsOf = (logid: number): LogChunkRow[] =>
    chunks
      .filter((c) => Number(c.logid) === logid)
      .map((c) => ({
        first_line: Number(c.first_line),
        last_line: Number(c.last_line),
        compressed: Number(c.compressed),
        content: new Uint8Array(Buffer.from(c.content!.replace(/^\\x/, ''), 'hex')),
      }))
      .sort((a, b) => a.first_line - b.first_line);

  /** The log a case's path names, as Buildbot's endpoints resolve it. */
  function logOf(path: string) {
    const p = path.split('?')[0]!.split('/').filter(Boolean);
    let stepid: string | undefined;
    let slug: string | undefined;
    if (p[0] === 'logs') return logs.find((l) => l.id === p[1]);
    if (p[0] === 'steps') [stepid, slug] = [p[1], p[3]];
    else {
      const build =
        p[0] === 'builds'
          ? builds.find((b) => b.id === p[1])
          : builds.find((b) => b.builderid === p[1] && b.number === p[3]);
      const stepKey = p[0] === 'builds' ? p[3]! : p[5]!;
      const step = steps.find(
        (s) => s.buildid === build?.id && (/^\d+$/.test(stepKey) ? s.number === stepKey : s.name === stepKey),
      );
      stepid = step?.id ?? undefined;
      slug = p[p.length - 2];
    }
    return logs.find((l) => l.stepid === stepid && l.slug === slug);
  }

  const cases = goldenCases().filter(
    (c) => (c.family === 'logcontents' || c.family === 'raw') && c.expect.status === 200,
  );

  it('has the cases the brief names', () => {
    const paths = cases.map((c) => c.path);
    for (const p of [
      '/logs/5/contents?offset=10&limit=5',
      '/logs/5/raw',
      '/logs/20/raw',
      '/logs/21/contents',
    ]) {
      expect(paths).toContain(p);
    }
  });

  for (const c of cases) {
    it(`${c.id}: ${c.path}`, () => {
      const log = logOf(c.path)!;
      expect(log, 'log named by the path').toBeDefined();
      const rows = rowsOf(Number(log.id));
      const numLines = Number(log.num_lines);
      const query = new URLSearchParams(c.path.split('?')[1] ?? '');
      if (c.family === 'raw') {
        expect(rawBody(rows, log.type as LogType, numLines).toString('utf8')).toBe(c.expect.body);
        return;
      }
      const num = (k: string) => (query.has(k) ? Number(query.get(k)) : null);
      const entity = (c.expect.body as { logchunks: { content: string; firstline?: number }[] })
        .logchunks[0]!;
      const r = contentsRange(numLines, num('offset'), num('limit'))!;
      expect(readLogLines(rows, r)).toBe(entity.content);
      if (entity.firstline !== undefined) expect(r.first_line).toBe(entity.firstline);
    });
  }

  it('text and html logs keep their final newline in raw; stdio loses stream characters and the last newline', () => {
    const html = rowsOf(21);
    expect(rawBody(html, 'h', 1).toString()).toMatch(/<\/html>\n$/);
    const stdio = rawBody(rowsOf(5), 's', 314).toString();
    expect(stdio.endsWith('\n')).toBe(false);
    expect(stdio.split('\n')).toHaveLength(314);
  });
});

describe('range reads across chunk boundaries (property)', () => {
  it('any lines appended in any batches read back exactly, from all rows or only the overlapping ones', () => {
    const line = fc.oneof(
      fc.constantFrom('', 'o', 'ohello', 'e✓ warning', 'h😀 header', 'i\u00e9'),
      fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replaceAll('\n', ' ')),
    );
    fc.assert(
      fc.property(
        fc.array(fc.array(line, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 12 }),
        fc.constantFrom(0, 1, 4),
        fc.nat(),
        fc.nat(),
        fc.boolean(),
        (batches, code, a, b, compress) => {
          let rows: LogChunkRow[] = [];
          let numLines = 0;
          for (const batch of batches) {
            const out = appendChunks(`${batch.join('\n')}\n`, numLines, code as 0 | 1 | 4);
            rows.push(...out.rows);
            numLines = out.numLines;
          }
          if (compress) {
            const merged = compressLogRows(rows, 1).map((m) => m.row);
            rows = [...rows.filter((r) => !merged.some((m) => overlaps(r, m))), ...merged].sort(
              (x, y) => x.first_line - y.first_line,
            );
          }
          const all = batches.flat();
          const first = a % numLines;
          const last = first + (b % (numLines - first));
          const want = all
            .slice(first, last + 1)
            .map((l) => `${l}\n`)
            .join('');
          expect(readLogLines(rows, range(first, last))).toBe(want);
          expect(
            readLogLines(
              rows.filter((r) => overlaps(r, range(first, last))),
              range(first, last),
            ),
          ).toBe(want);
          // Raw: stdio loses each line's first character and the final newline.
          const raw = all.map((l) => [...l].slice(1).join('')).join('\n');
          expect(rawBody(rows, 's', numLines).toString()).toBe(raw);
          expect(rawBody(rows, 't', numLines).toString()).toBe(all.map((l) => `${l}\n`).join(''));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('stdio raw cut in place, over rows the stream owns (property)', () => {
  /** `bytes` inside a larger buffer, at `offset`, between sentinel bytes. */
  function placed(bytes: Uint8Array, offset: number): { content: Buffer; whole: Buffer } {
    const whole = Buffer.alloc(offset + bytes.length + 8, 0xa5);
    whole.set(bytes, offset);
    return { content: whole.subarray(offset, offset + bytes.length), whole };
  }

  it('any lines in any rows, of any code, at any byte offset: the same body as a copy, nothing written outside', () => {
    const line = fc.oneof(
      fc.constantFrom('', 'o', 'e✓', 'h😀 header', 'i\u00e9', '\u00e9', '✓', '😀'),
      fc.string({ unit: 'binary', maxLength: 12 }).map((s) => s.replaceAll('\n', ' ')),
      fc.string({ unit: 'grapheme-ascii', maxLength: 70 }).map((s) => s.replaceAll('\n', ' ')),
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            lines: fc.array(line, { minLength: 1, maxLength: 30 }),
            code: fc.constantFrom(0, 0, 0, 1, 2, 3, 4, 5),
            offset: fc.nat({ max: 7 }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        (specs) => {
          let numLines = 0;
          const rows: LogChunkRow[] = [];
          const copies: LogChunkRow[] = [];
          const wholes: { whole: Buffer; before: Buffer; content: Buffer }[] = [];
          for (const spec of specs) {
            const text = Buffer.from(spec.lines.join('\n'));
            const { content, whole } = placed(encodeAnyCode(spec.code, text), spec.offset);
            const row = {
              first_line: numLines,
              last_line: numLines + spec.lines.length - 1,
              compressed: spec.code,
              content,
            };
            rows.push(row);
            copies.push({ ...row, content: Buffer.from(content) });
            wholes.push({ whole, before: Buffer.from(whole), content });
            numLines += spec.lines.length;
          }
          const stream = new RawLogStream('s', numLines, { ownsContent: true });
          const body = Buffer.concat(rows.map((r) => stream.push(r)));
          // Lines as text: each loses its first code point (the UTF-8 encoder made lone
          // surrogates U+FFFD, one code point too).
          const want = specs
            .flatMap((s) => s.lines)
            .map((l) => [...Buffer.from(l).toString()].slice(1).join(''))
            .join('\n');
          expect(body.toString()).toBe(want);
          expect(body.equals(rawBody(copies, 's', numLines))).toBe(true);
          for (const { whole, before, content } of wholes) {
            const end = content.byteOffset - whole.byteOffset + content.length;
            expect(whole.subarray(end).equals(before.subarray(end))).toBe(true);
            expect(whole.subarray(0, content.byteOffset - whole.byteOffset)).toEqual(
              before.subarray(0, content.byteOffset - whole.byteOffset),
            );
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('leaves rows it does not own untouched', () => {
    const content = Buffer.from('oa\nob\n\noc');
    const before = Buffer.from(content);
    const stream = new RawLogStream('s', 4);
    expect(Buffer.from(stream.push({ first_line: 0, last_line: 3, compressed: 0, content })).toString()).toBe(
      'a\nb\n\nc',
    );
    expect(content.equals(before)).toBe(true);
  });

  it('drops a first character by its UTF-8 lead byte, as far as its continuation bytes go', () => {
    const bytes = (...parts: (string | number[])[]) =>
      Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
    const lines = [
      bytes([0xe2, 0x9c], 'x'), // a 3-byte lead cut short: both bytes go
      bytes([0xc3], 'xy'), // a 2-byte lead without its continuation: the lead alone
      bytes([0x80], 'abc'), // a stray continuation byte counts as one character
      bytes([0xff, 0x80, 0x80, 0x80, 0x80], 'z'), // 0xff takes three continuation bytes
      bytes([0xf0, 0x9f, 0x98, 0x80], 'smile'),
      bytes(''),
      bytes([0xe2, 0x9c, 0x93]),
    ];
    const want = bytes('x\nxy\nabc\n', [0x80], 'z\nsmile\n\n');
    for (const split of [1, 3, 7]) {
      const stream = new RawLogStream('s', lines.length, { ownsContent: true });
      const pieces: Uint8Array[] = [];
      for (let first = 0; first < lines.length; first += split) {
        const group = lines.slice(first, first + split);
        const content = Buffer.concat(group.flatMap((l, i) => (i === 0 ? [l] : [Buffer.from('\n'), l])));
        pieces.push(
          stream.push({ first_line: first, last_line: first + group.length - 1, compressed: 0, content }),
        );
      }
      expect(Buffer.concat(pieces).equals(want), `rows of ${split} lines`).toBe(true);
    }
  });
});

describe('lines: edges and errors', () => {
  const rows = [
    ...appendChunks('oa\nob\noc\n', 0, 0).rows,
    ...appendChunks('od\n', 3, 1).rows,
    ...appendChunks('oe\nof\n', 4, 4).rows,
  ];

  it('trims partial chunks at both ends', () => {
    expect(readLogLines(rows, range(1, 4))).toBe('ob\noc\nod\noe\n');
    expect(Buffer.from(chunkLines(rows[0]!, range(1, 1))).toString()).toBe('ob');
    expect(readLogLines(rows, range(5, 5))).toBe('of\n');
  });

  it("answers '' past the end and skips rows outside the range", () => {
    expect(readLogLines(rows, range(6, 10))).toBe('');
    expect(readLogLines([], range(0, 0))).toBe('');
  });

  it('follows the logchunks endpoint’s offset/limit rules', () => {
    expect(contentsRange(314)).toEqual(range(0, 313));
    expect(contentsRange(314, 10, 5)).toEqual(range(10, 14));
    expect(contentsRange(314, 300)).toEqual(range(300, 313));
    expect(contentsRange(314, 0, 0)).toBeNull();
    expect(contentsRange(314, 314)).toBeNull();
    expect(contentsRange(314, 400, 5)).toEqual(range(400, 404));
    expect(contentsRange(0)).toEqual(range(0, 0));
    expect(contentsRange(10, -1)).toBeNull();
    expect(rawRange(0)).toEqual(range(0, 0));
    expect(rawRange(7)).toEqual(range(0, 6));
  });

  it('refuses bad ranges, rows out of order, and rows holding fewer lines than they claim', () => {
    expect(errorCode(() => readLogLines(rows, range(3, 2)))).toBe('LOG_RANGE_INVALID');
    expect(errorCode(() => readLogLines(rows, range(-1, 2)))).toBe('LOG_RANGE_INVALID');
    expect(errorCode(() => readLogLines([rows[1]!, rows[0]!], range(0, 5)))).toBe('LOG_CHUNK_ORDER');
    expect(errorCode(() => readLogLines([rows[0]!, rows[0]!], range(0, 5)))).toBe('LOG_CHUNK_ORDER');
    const lying = { ...rows[0]!, last_line: 9 };
    expect(errorCode(() => readLogLines([lying], range(5, 6)))).toBe('LOG_CHUNK_INCONSISTENT');
    expect(errorCode(() => readLogLines([lying], range(0, 0)))).toBe('LOG_CHUNK_INCONSISTENT');
    const stream = new RawLogStream('s', 6);
    stream.push(rows[1]!);
    expect(errorCode(() => stream.push(rows[0]!))).toBe('LOG_CHUNK_ORDER');
    expect(errorCode(() => readLogLines([{ ...rows[0]!, compressed: 9 }], range(0, 0)))).toBe(
      'LOG_CODEC_UNKNOWN',
    );
  });

  it('keeps a byte-order mark and turns invalid UTF-8 into U+FFFD (where Buildbot fails)', () => {
    const bom = appendChunks('\ufeffo BOM\n', 0, 0).rows;
    expect(readLogLines(bom, range(0, 0))).toBe('\ufeffo BOM\n');
    const bad: LogChunkRow = {
      first_line: 0,
      last_line: 1,
      compressed: 0,
      content: new Uint8Array([0x6f, 0xff, 0x0a, 0x6f]),
    };
    expect(readLogLines([bad], range(0, 1))).toBe('o\ufffd\no\n');
  });

  it('stdio raw drops a whole multi-byte first character', () => {
    const multi = appendChunks('✓check\n😀smile\n\nx\n', 0, 0).rows;
    expect(rawBody(multi, 's', 4).toString()).toBe('check\nsmile\n\n');
  });

  it('streams raw logs row by row, and through rawLogBytes from an async source', async () => {
    const source = async function* () {
      for (const r of rows) yield r;
    };
    const pieces: Uint8Array[] = [];
    for await (const piece of rawLogBytes(source(), 's', 6)) pieces.push(piece);
    expect(pieces).toHaveLength(3);
    expect(Buffer.concat(pieces).toString()).toBe('a\nb\nc\nd\ne\nf');
    const html: Uint8Array[] = [];
    for await (const piece of rawLogBytes(rows, 'h', 6)) html.push(piece);
    expect(Buffer.concat(html).toString()).toBe('oa\nob\noc\nod\noe\nof\n');
    // A log whose num_lines lags its rows: raw reads only num_lines lines.
    expect(rawBody(rows, 't', 4).toString()).toBe('oa\nob\noc\nod\n');
    expect(rawBody([], 's', 0).toString()).toBe('');
  });
});
