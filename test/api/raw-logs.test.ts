// Raw log downloads through a binary COPY (the API with its read pool) and through a cursor
// (an API without one): the same bytes for stdio logs whose chunks use every compression
// code, start lines with multi-byte characters and hold empty lines; and clients that hang up
// in the middle of a download leave no connection behind.
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadPool } from '../../services/api/db-routing/read-pool.js';
import { masterConfigSchema } from '../../services/core/config/master-config.js';
import { sql } from '../../services/core/db/pool.js';
import { apiInProcess, type InProcessApi, listenOn } from '../helpers/api.js';
import { encodeAnyCode } from '../helpers/log-vectors/encode.js';
import { eventually, waitFor } from '../helpers/wait.js';
import { ApiUnderTest } from './lib/harness.js';
import { addOneStep } from './lib/one-step.js';

// Log 1: stdio, one row per compression code (0-5), then a raw row holding two lines past
// num_lines (a log whose row count ran ahead of its length).
const ROWS: string[][] = [
  ['o✓ passed', '', 'e😀 smile', 'h\u00e9t\u00e9', 'oplain'],
  ['', '', 'o'],
  ['e✓', 'o'.repeat(200), '😀'],
  ['i\u00e9', 'oa b c', ''],
  ['o0123456789abcdef', 'e\u00e9\u00e9\u00e9'],
  ['o✓✓✓', '', 'e✓x'],
  ['olast', 'obeyond', 'obeyond too'],
];
const CODES = [0, 1, 2, 3, 4, 5, 0];
const NUM_LINES = ROWS.flat().length - 2;
const WANT = ROWS.flat()
  .slice(0, NUM_LINES)
  .map((l) => [...l].slice(1).join(''))
  .join('\n');

// Log 2: about 20 MB, far more than sockets hold, so a client that hangs up after the first
// piece leaves the server in the middle of the COPY.
const BIG_LINES = 40_000;
const BIG_PAD = 500;
const BIG_BYTES = BIG_LINES * (7 + 1 + BIG_PAD) + (BIG_LINES - 1);

let api: ApiUnderTest;
let cursor: InProcessApi;
let cursorApp: FastifyInstance;

beforeAll(async () => {
  // Every download here reads the database (raw-log-cache.test.ts tests the kept files).
  api = await ApiUnderTest.start('migrated', {
    www: masterConfigSchema.shape.www.parse({
      rate_limit: { enabled: false },
      raw_log_cache: { enabled: false },
    }),
  });
  await addOneStep(api.db.pool, 'raw');
  const setup = [
    sql`INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type)
        VALUES (1, 'stdio', 'stdio', 1, 1, ${NUM_LINES}, 's'), (2, 'big', 'big', 1, 1, ${BIG_LINES}, 's')`,
    sql`INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
        SELECT 2, min(n), max(n),
               convert_to(string_agg('o' || lpad(n::text, 7, '0') || ' ' || repeat('x', ${BIG_PAD}::int), chr(10) ORDER BY n), 'UTF8'), 0
        FROM generate_series(0, ${BIG_LINES - 1}::int) n GROUP BY n / 100`,
  ];
  for (const q of setup) await api.db.pool.query(q);
  let first = 0;
  for (const [i, lines] of ROWS.entries()) {
    const content = Buffer.from(encodeAnyCode(CODES[i]!, Buffer.from(lines.join('\n'))));
    await api.db.pool.query(sql`INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
      VALUES (1, ${first}, ${first + lines.length - 1}, ${content}, ${CODES[i]!})`);
    first += lines.length;
  }
  // The same API without a read pool of its own: downloads go through a cursor.
  cursor = await apiInProcess({
    www: masterConfigSchema.shape.www.parse({
      rate_limit: { enabled: false },
      raw_log_cache: { enabled: false },
    }),
    db: { pool: api.db.pool },
  });
  cursorApp = cursor.app;
});

afterAll(async () => {
  await cursor?.stop();
  await api?.close();
});

describe('raw stdio downloads', () => {
  it('every code, multi-byte first characters, empty lines: each line loses its first character', async () => {
    const viaCopy = await api.get('/logs/1/raw', {});
    expect(viaCopy.status).toBe(200);
    expect(viaCopy.text).toBe(WANT);
    const viaCursor = await cursorApp.inject({ method: 'GET', url: '/api/v2/logs/1/raw' });
    expect(viaCursor.statusCode).toBe(200);
    expect(viaCursor.rawPayload.equals(viaCopy.raw)).toBe(true);
  });

  it('a large log arrives whole, the same through COPY and through a cursor', async () => {
    const viaCopy = await api.get('/logs/2/raw', {});
    expect(viaCopy.raw.length).toBe(BIG_BYTES);
    expect(viaCopy.text.endsWith(`\n${String(BIG_LINES - 1).padStart(7, '0')} ${'x'.repeat(BIG_PAD)}`)).toBe(
      true,
    );
    const viaCursor = await cursorApp.inject({ method: 'GET', url: '/api/v2/logs/2/raw' });
    expect(viaCursor.rawPayload.equals(viaCopy.raw)).toBe(true);
  });
});

describe('clients that hang up in the middle of a download', () => {
  let base: string;
  beforeAll(async () => {
    base = `${await listenOn(api.app)}/api/v2`;
  });

  /** Starts a download, reads its first piece, and hangs up. */
  function hangUp(path: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = http.get(`${base}${path}`, (res) => {
        res.once('data', (piece: Buffer) => {
          req.destroy();
          resolve(piece.length);
        });
        res.on('error', () => {});
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    });
  }

  /** Backends of the test database (other than this query's) still running a COPY. */
  async function copiesRunning(): Promise<number> {
    const rows = await api.db.pool.query(sql`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'COPY%' AND state <> 'idle'`);
    return rows[0].n as number;
  }

  /** The download pool's connections in use and requests waiting for one (from /metrics). */
  async function downloadPool(): Promise<{ inUse: number; waiting: number }> {
    const body = (await api.app.probes.metrics()).body;
    const sample = (state: string) =>
      Number(
        new RegExp(`^flotilla_db_pool_connections\\{pool="download",state="${state}"\\} (\\d+)$`, 'm').exec(
          body,
        )?.[1],
      );
    return { inUse: sample('in_use'), waiting: sample('waiting') };
  }

  /** Waits until no download holds or waits for a connection, nor runs a COPY (or the time is up). */
  async function downloadsSettled(): Promise<void> {
    await eventually(
      async () => ({ ...(await downloadPool()), copies: await copiesRunning() }),
      (s) => s.inUse === 0 && s.waiting === 0 && s.copies === 0,
    );
  }

  it('downloads that their clients stop reading hold no connection a page needs', async () => {
    // More stalled downloads than the read pool has connections (10).
    const stalled: http.ClientRequest[] = [];
    try {
      for (let i = 0; i < 12; i++) {
        stalled.push(
          http.get(`${base}/logs/2/raw`, (res) => {
            res.once('data', () => res.pause());
            res.on('error', () => {});
          }),
        );
        stalled.at(-1)!.on('error', () => {});
      }
      // The four download connections are all held, and the other eight downloads wait.
      await waitFor('the downloads to stall', async () => {
        const pool = await downloadPool();
        return pool.inUse === 4 && pool.waiting === 8;
      });
      // Not a kept page: read from the database. Had it waited for a download connection, it
      // would wait for as long as the stalled downloads are held.
      const res = await fetch(`${base}/builders?limit=3&order=-builderid`, {
        signal: AbortSignal.timeout(60_000),
      });
      expect(res.status).toBe(200);
    } finally {
      for (const req of stalled) req.destroy();
    }
    await downloadsSettled();
    expect(await downloadPool()).toEqual({ inUse: 0, waiting: 0 });
    expect(await copiesRunning()).toBe(0);
  });

  it('a reader that stops after the first row ends the COPY, even with the connection paused mid-COPY', async () => {
    const pool = new ReadPool(api.db.url, 1, 1);
    try {
      const big = sql`SELECT first_line, content FROM logchunks WHERE logid = current_setting('flotilla.test_log')::int ORDER BY first_line`;
      for (let i = 0; i < 3; i++) {
        for await (const row of pool.copyRows(big, { 'flotilla.test_log': '2' })) {
          expect(row.length).toBe(2);
          // Until PostgreSQL has filled the socket and blocks in its write.
          await waitFor('the COPY to block on its client', async () => {
            const [r] = await api.db.pool.query(sql`
              SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND query LIKE 'COPY%' AND wait_event = 'ClientWrite'`);
            return r.n > 0;
          });
          break;
        }
      }
      expect(await eventually(copiesRunning, (n) => n === 0)).toBe(0);
      expect(pool.downloadStats()).toEqual({ total: 0, idle: 0, waiting: 0 });
      // A download whose client left while it waited for a connection runs nothing.
      const gone = new AbortController();
      gone.abort();
      const rows = [];
      for await (const row of pool.copyRows(big, { 'flotilla.test_log': '2' }, gone.signal)) rows.push(row);
      expect(rows).toEqual([]);
      expect(pool.downloadStats().total).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it('more hang-ups than the read pool has connections: none left in a COPY, and the next download whole', async () => {
    for (let i = 0; i < 12; i++) expect(await hangUp('/logs/2/raw')).toBeGreaterThan(0);
    await downloadsSettled();
    expect(await downloadPool()).toEqual({ inUse: 0, waiting: 0 });
    expect(await copiesRunning()).toBe(0);
    const res = await fetch(`${base}/logs/2/raw`);
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(BIG_BYTES);
    expect((await fetch(`${base}/logs/1/raw`).then((r) => r.text())) === WANT).toBe(true);
  });
});
