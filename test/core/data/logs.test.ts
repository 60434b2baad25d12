// addLog, appendLog, finishLog, compressLog on real rows: slugs and duplicate names, text
// rules, unicode and lines longer than a chunk, concurrent appends, events, and compression
// that is atomic, idempotent and invisible to readers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBuild } from '../../../services/core/data/builds.js';
import { addLog, appendLog, compressLog, finishLog } from '../../../services/core/data/logs.js';
import { newStep } from '../../../services/core/data/steps.js';
import { transact } from '../../../services/core/data/transaction.js';
import { sql } from '../../../services/core/db/pool.js';
import { MAX_CHUNK_LINES, MAX_CHUNK_SIZE } from '../../../services/core/logs/chunking.js';
import { readLogLines } from '../../../services/core/logs/lines.js';
import type { LogChunkRow } from '../../../services/core/logs/types.js';
import { apiGet, barrier, buildParts, type Harness, openHarness } from './harness.js';

let h: Harness;
let stepid: number;

beforeAll(async () => {
  h = await openHarness();
  stepid = await h.run(async (tx) => {
    const parts = await buildParts(tx);
    const { buildid } = await newBuild(tx, { ...parts, buildrequestid: parts.brid });
    return (await newStep(tx, buildid, 'compile')).stepid;
  });
});
afterAll(async () => {
  await h?.close();
});

async function chunks(logid: number): Promise<LogChunkRow[]> {
  return (await h.db.pool.query(sql`
    SELECT first_line, last_line, content, compressed FROM logchunks WHERE logid = ${logid} ORDER BY first_line`)) as LogChunkRow[];
}

async function numLines(logid: number): Promise<number> {
  const [l] = await h.db.pool.query(sql`SELECT num_lines FROM logs WHERE id = ${logid}`);
  return l.num_lines;
}

/** The whole log as Buildbot's getLogLines answers it. */
async function text(logid: number, first = 0, last?: number): Promise<string> {
  const n = await numLines(logid);
  return readLogLines(await chunks(logid), { first_line: first, last_line: last ?? Math.max(0, n - 1) });
}

const newLog = (name: string, type: 's' | 't' | 'h' = 's') => h.run((tx) => addLog(tx, stepid, name, type));

describe('addLog', () => {
  it('derives the slug from the name, increments it on a clash, and announces the log', async () => {
    await h.tap.clear();
    const a = await newLog('test results');
    const b = await newLog('test_results');
    const c = await newLog('test?results');
    const slugs = await h.db.pool.query(
      sql`SELECT id, slug, complete, num_lines, type FROM logs WHERE id IN (${a}, ${b}, ${c}) ORDER BY id`,
    );
    expect(slugs.map((r) => r.slug)).toEqual(['test_results', 'test_results_2', 'test_results_3']);
    expect(slugs[0]).toMatchObject({ complete: 0, num_lines: 0, type: 's' });
    const events = await h.tap.events(`logs/${a}/`, `steps/${stepid}/logs/test_results/`);
    expect(events.map((e) => e.k)).toEqual([`logs/${a}/new`, `steps/${stepid}/logs/test_results/new`]);
    expect(events[0]!.m).toEqual((await apiGet(h.db.pool, `logs/${a}`))[0]);
  });

  it('refuses a second log with the same name in the step (DUPLICATE_LOG), and an unknown type', async () => {
    await newLog('stdio-dup');
    await expect(newLog('stdio-dup')).rejects.toMatchObject({ code: 'DUPLICATE_LOG' });
    await expect(newLog('weird', 'x' as 's')).rejects.toMatchObject({ code: 'INVALID' });
    await expect(h.run((tx) => addLog(tx, -1, 'x', 's'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const [n] = await h.db.pool.query(sql`SELECT count(*)::int AS n FROM logs WHERE name = 'stdio-dup'`);
    expect(n.n).toBe(1);
  });
});

describe('appendLog', () => {
  it('refuses text without a final newline, or with \\r, and writes nothing', async () => {
    const logid = await newLog('rules');
    await h.run((tx) => appendLog(tx, logid, 'ofirst\n'));
    for (const bad of ['ono newline', 'oa\r\nob\n', 'oold mac\rline\n', ''])
      await expect(h.run((tx) => appendLog(tx, logid, bad))).rejects.toMatchObject({ code: 'BAD_LOG_TEXT' });
    expect(await numLines(logid)).toBe(1);
    expect(await text(logid)).toBe('ofirst\n');
    await expect(h.run((tx) => appendLog(tx, -1, 'ox\n'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('appends lines, grows num_lines, returns the line numbers and announces `append` with the log', async () => {
    const logid = await newLog('growing');
    await h.tap.clear();
    expect(await h.run((tx) => appendLog(tx, logid, 'oone\netwo\n'))).toEqual({
      first_line: 0,
      last_line: 1,
    });
    expect(await h.run((tx) => appendLog(tx, logid, 'hthree\n'))).toEqual({ first_line: 2, last_line: 2 });
    expect(await numLines(logid)).toBe(3);
    expect(await text(logid)).toBe('oone\netwo\nhthree\n');
    expect(await text(logid, 1, 1)).toBe('etwo\n');
    const events = await h.tap.events(`logs/${logid}/`);
    expect(events.map((e) => e.k)).toEqual([`logs/${logid}/append`, `logs/${logid}/append`]);
    expect(events[1]!.m).toMatchObject({ logid, num_lines: 3, complete: false });
  });

  it('stores chunks gzip-compressed (zlib, 78 da) when that is smaller, as Buildbot 3.7 reads them', async () => {
    const logid = await newLog('compressible');
    await h.run((tx) => appendLog(tx, logid, 'o0123456789abcdef\n'.repeat(200)));
    const [chunk] = await chunks(logid);
    expect(chunk!.compressed).toBe(1);
    expect([...chunk!.content.subarray(0, 2)]).toEqual([0x78, 0xda]);
    const tiny = await newLog('tiny');
    await h.run((tx) => appendLog(tx, tiny, 'ox\n'));
    expect((await chunks(tiny))[0]!.compressed).toBe(0);
  });

  it('keeps unicode intact, byte for byte', async () => {
    const logid = await newLog('unicode');
    const lines = 'oÄrger über Straßen\nozhōngwén 中文\noemoji 😀👍🏽\neRTL עברית\noNUL-free \u2028 sep\n';
    await h.run((tx) => appendLog(tx, logid, lines));
    expect(await text(logid)).toBe(lines);
    expect(await numLines(logid)).toBe(5);
  });

  it('cuts a line longer than 64 KiB at a UTF-8 boundary, counts it as one line, and keeps the next', async () => {
    const logid = await newLog('long lines');
    // 'é' is two bytes, '😀' four: the cut at byte 65,536 would fall inside one of them.
    const long = `o${'é'.repeat(40_000)}`;
    const emoji = `o${'😀'.repeat(20_000)}`;
    await h.run((tx) => appendLog(tx, logid, `obefore\n${long}\n${emoji}\noafter\n`));
    expect(await numLines(logid)).toBe(4);
    const rows = await chunks(logid);
    for (const r of rows) expect(r.content.length).toBeLessThanOrEqual(MAX_CHUNK_SIZE);
    const read = (await text(logid)).split('\n');
    expect(read[0]).toBe('obefore');
    // 1 byte of 'o', then whole two-byte characters up to byte 65,535.
    expect(read[1]).toBe(`o${'é'.repeat((MAX_CHUNK_SIZE - 2) / 2)}`);
    expect(Buffer.byteLength(read[2]!)).toBe(1 + 4 * Math.floor((MAX_CHUNK_SIZE - 1) / 4));
    expect(read[2]!.startsWith('o😀😀')).toBe(true);
    expect(read[3]).toBe('oafter');
  });

  it('serializes concurrent appends to one log: every line once, numbered without gaps', async () => {
    const logid = await newLog('concurrent');
    const n = 10;
    const together = barrier(n);
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        transact({ ...h.ctx, db: h.wide }, async (tx) => {
          await together();
          return appendLog(tx, logid, `oline ${i}\noline ${i} again\n`);
        }),
      ),
    );
    expect(await numLines(logid)).toBe(2 * n);
    const lines = (await text(logid)).trimEnd().split('\n');
    expect(lines.slice().sort()).toEqual(
      Array.from({ length: n }, (_, i) => [`oline ${i}`, `oline ${i} again`])
        .flat()
        .sort(),
    );
    for (let i = 0; i < lines.length; i += 2) expect(lines[i + 1]).toBe(`${lines[i]} again`);
  });
});

describe('finishLog', () => {
  it('completes the log once, announces `finished`, and refuses further appends', async () => {
    const logid = await newLog('finishing');
    await h.run((tx) => appendLog(tx, logid, 'oa\n'));
    await h.tap.clear();
    expect(await h.run((tx) => finishLog(tx, logid))).toBe(true);
    expect(await h.run((tx) => finishLog(tx, logid))).toBe(false);
    const events = await h.tap.events(`logs/${logid}/`, `steps/${stepid}/logs/finishing/`);
    expect(events.map((e) => e.k)).toEqual([
      `logs/${logid}/finished`,
      `steps/${stepid}/logs/finishing/finished`,
    ]);
    expect(events[0]!.m).toMatchObject({ complete: true, num_lines: 1 });
    await expect(h.run((tx) => appendLog(tx, logid, 'ob\n'))).rejects.toMatchObject({ code: 'LOG_FINISHED' });
  });
});

describe('compressLog', () => {
  /** A finished log of `n` lines, appended a few lines at a time (many small chunks). */
  async function finishedLog(name: string, n: number, per = 7): Promise<number> {
    const logid = await newLog(name);
    for (let i = 0; i < n; i += per) {
      const batch = Array.from(
        { length: Math.min(per, n - i) },
        (_, j) => `oline ${i + j} ${'x'.repeat((i + j) % 50)}`,
      );
      await h.run((tx) => appendLog(tx, logid, `${batch.join('\n')}\n`));
    }
    await h.run((tx) => finishLog(tx, logid));
    return logid;
  }

  const ranges = (n: number) => [
    [0, n - 1],
    [0, 0],
    [n - 1, n - 1],
    [999, 1001],
    [17, 1234],
    [1500, n - 1],
  ];

  it('merges chunks up to 1,000 lines and 64 KiB, keeps every read identical, and is idempotent', async () => {
    const n = 2600;
    const logid = await finishedLog('to compress', n);
    const before = await chunks(logid);
    expect(before.length).toBeGreaterThan(300);
    const reads = await Promise.all(ranges(n).map(([a, b]) => text(logid, a, b)));

    const saved = await h.run((tx) => compressLog(tx, logid));
    expect(saved).toBeGreaterThan(0);
    const after = await chunks(logid);
    expect(after.length).toBeLessThan(10);
    expect(after.length).toBeGreaterThanOrEqual(3);
    for (const r of after) {
      expect(r.last_line - r.first_line).toBeLessThanOrEqual(MAX_CHUNK_LINES);
      expect(r.compressed).toBe(1);
    }
    expect(after[0]!.first_line).toBe(0);
    expect(after.at(-1)!.last_line).toBe(n - 1);
    expect(await Promise.all(ranges(n).map(([a, b]) => text(logid, a, b)))).toEqual(reads);

    expect(await h.run((tx) => compressLog(tx, logid))).toBe(0);
    expect(await chunks(logid)).toEqual(after);
  });

  it('stores zstd when asked, and readers still agree', async () => {
    const logid = await finishedLog('zstd', 1200, 13);
    const whole = await text(logid);
    await h.run((tx) => compressLog(tx, logid, { codec: 'zstd' }));
    const rows = await chunks(logid);
    expect(rows.every((r) => r.compressed === 4)).toBe(true);
    expect(await text(logid)).toBe(whole);
  });

  it('swaps atomically: a reader during the compression sees the old rows, after it the new, never a gap', async () => {
    const logid = await finishedLog('atomic', 1500);
    const whole = await text(logid);
    const count = async () =>
      (await h.db.pool.query(sql`SELECT count(*)::int AS n FROM logchunks WHERE logid = ${logid}`))[0].n;
    const rowsBefore = await count();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let compressed!: () => void;
    const done = new Promise<void>((resolve) => {
      compressed = resolve;
    });
    const job = transact({ ...h.ctx, db: h.wide }, async (tx) => {
      await compressLog(tx, logid);
      compressed();
      await held;
    });
    await done;
    expect(await count()).toBe(rowsBefore);
    expect(await text(logid)).toBe(whole);
    release();
    await job;
    expect(await count()).toBeLessThan(rowsBefore);
    expect(await text(logid)).toBe(whole);
  });

  it('refuses a log that is still being written, and leaves an empty log alone', async () => {
    const open = await newLog('open');
    await h.run((tx) => appendLog(tx, open, 'oa\nob\n'));
    await expect(h.run((tx) => compressLog(tx, open))).rejects.toMatchObject({ code: 'LOG_NOT_FINISHED' });
    const empty = await newLog('empty');
    await h.run((tx) => finishLog(tx, empty));
    expect(await h.run((tx) => compressLog(tx, empty))).toBe(0);
    expect(await chunks(empty)).toEqual([]);
  });
});
