// Finished logs' downloads kept on the API's disk: the second download of a finished log is
// the kept file (shown by taking the chunks away underneath it), never one of an open log;
// Buildbot's janitor (type 'd') and a longer log are new bodies; a download cut short keeps
// nothing; the disk used stays under max_mb; closing the API removes its folder; and an
// unusable folder only turns the cache off. raw_inline puts Buildbot's header lines before a
// stdio log's text, never into the kept file.
import { mkdtemp, readdir, readlink, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENCODINGS } from '../../services/api/reply/compress.js';
import { masterConfigSchema } from '../../services/core/config/master-config.js';
import { sql } from '../../services/core/db/pool.js';
import { listenOn } from '../helpers/api.js';
import { DECODE } from '../helpers/decode.js';
import { eventually } from '../helpers/wait.js';
import { ApiUnderTest } from './lib/harness.js';
import { addOneStep } from './lib/one-step.js';

const PAD = 600;
/** A stdio log of `lines` lines (about `lines` * 610 bytes raw), chunks of 100 lines. */
const addLog = (id: number, lines: number, complete: 0 | 1) => [
  sql`INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type)
      VALUES (${id}, ${`log${id}`}, ${`log${id}`}, 1, ${complete}, ${lines}, 's')`,
  sql`INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
      SELECT ${id}, min(n), max(n),
             convert_to(string_agg('o' || lpad(n::text, 7, '0') || ' ' || repeat('y', ${PAD}::int), chr(10) ORDER BY n), 'UTF8'), 0
      FROM generate_series(0, ${lines - 1}::int) n GROUP BY n / 100`,
];

let api: ApiUnderTest;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'raw-log-cache-test-'));
  api = await ApiUnderTest.start('migrated', {
    www: masterConfigSchema.shape.www.parse({ raw_log_cache: { max_mb: 1, dir } }),
  });
  await addOneStep(api.db.pool, 'cache');
  // 1-3 finished (1, 2: 0.6 MB each; 3: 40 MB), 4 open.
  for (const q of [
    ...addLog(1, 1000, 1),
    ...addLog(2, 1000, 1),
    ...addLog(3, 65_000, 1),
    ...addLog(4, 100, 0),
  ]) {
    await api.db.pool.query(q);
  }
});

afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

async function counts(): Promise<{ hit: number; miss: number }> {
  const body = (await api.app.probes.metrics()).body;
  const n = (outcome: string) =>
    Number(
      new RegExp(`^flotilla_raw_log_cache_downloads_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(
        body,
      )?.[1],
    );
  return { hit: n('hit'), miss: n('miss') };
}

/** Every file under the cache's folder, with its size. */
async function files(): Promise<{ name: string; bytes: number }[]> {
  const out: { name: string; bytes: number }[] = [];
  for (const sub of await readdir(dir)) {
    for (const name of await readdir(join(dir, sub))) {
      // A file being written is renamed (or removed) the moment it is done.
      const bytes = await stat(join(dir, sub, name)).then(
        (s) => s.size,
        () => null,
      );
      if (bytes !== null) out.push({ name: `${sub}/${name}`, bytes });
    }
  }
  return out;
}

const download = async (id: number) => (await api.get(`/logs/${id}/raw`, {})).raw;

/** A copy is renamed into place just after its download ends: wait until `probe` holds. */
const keptNames = async () => (await files()).map((f) => f.name.split('/')[1]!);

describe('kept downloads', () => {
  it('a finished log is downloaded again from the kept file, byte for byte', async () => {
    const first = await download(1);
    await eventually(keptNames, (n) => n.includes('1-1000-s'));
    // Each line loses its stream character: 7 digits, a space and PAD, joined by newlines.
    expect(first.length).toBe(1000 * (7 + 1 + PAD) + 999);
    const before = await counts();
    // Take the chunks away: only the kept file can still answer.
    await api.db.pool.query(sql`DELETE FROM logchunks WHERE logid = 1`);
    const again = await api.get('/logs/1/raw', {});
    expect(again.raw.equals(first)).toBe(true);
    expect(again.headers['content-length']).toBe(String(first.length));
    expect(await counts()).toEqual({ hit: before.hit + 1, miss: before.miss });
  });

  it("is a new body once Buildbot's janitor marks the log deleted (type 'd')", async () => {
    await api.db.pool.query(sql`UPDATE logs SET type = 'd' WHERE id = 1`);
    const after = await api.get('/logs/1/raw', {});
    expect(after.status).toBe(200);
    expect(after.raw.length).toBe(0);
  });

  it('never keeps an open log', async () => {
    const first = await download(4);
    expect(first.length).toBeGreaterThan(0);
    await api.db.pool.query(sql`DELETE FROM logchunks WHERE logid = 4`);
    expect((await download(4)).length).toBe(0);
    expect((await files()).some((f) => f.name.endsWith('/4-100-s'))).toBe(false);
  });

  it('keeps no more than max_mb: the least recently used goes', async () => {
    await download(2);
    // Log 2 is kept first and log 1 evicted after it: wait for both, not only the first.
    expect(await eventually(keptNames, (n) => n.length === 1 && n[0] === '2-1000-s')).toEqual(['2-1000-s']);
    expect((await files()).reduce((s, f) => s + f.bytes, 0)).toBeLessThanOrEqual(1024 * 1024);
    // Log 3 (40 MB) is more than the whole cache: sent, never kept, nothing else evicted for it.
    const big = await download(3);
    expect(big.length).toBeGreaterThan(39_000_000);
    expect((await files()).map((f) => f.name.split('/')[1])).toEqual(['2-1000-s']);
  });

  it('HEAD and If-None-Match answer as before, with the type in the ETag', async () => {
    const head = await api.request('HEAD', '/logs/2/raw', {});
    expect(head.headers.etag).toBe('W/"log-2-1000-1-s"');
    const again = await api.request('GET', '/logs/2/raw', {
      headers: { 'if-none-match': 'W/"log-2-1000-1-s"' },
    });
    expect(again.status).toBe(304);
  });

  it('go out compressed as the client accepts, decoding to the same body, with an ETag per encoding', async () => {
    // An open log: read from the database each time (the kept file's case is below).
    for (const q of addLog(6, 200, 0)) await api.db.pool.query(q);
    const plain = await api.get('/logs/6/raw', {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(String(plain.headers.vary)).toContain('Accept-Encoding');
    for (const enc of ENCODINGS) {
      const a = await api.get('/logs/6/raw', { 'accept-encoding': enc });
      expect([a.status, a.headers['content-encoding']]).toEqual([200, enc]);
      expect(a.raw.length).toBeLessThan(plain.raw.length / 10);
      expect((await DECODE[enc]!(a.raw)).equals(plain.raw), enc).toBe(true);
      expect(a.headers.etag).toBe(`W/"log-6-200-0-s-${enc}"`);
      const again = await api.get('/logs/6/raw', {
        'accept-encoding': enc,
        'if-none-match': `W/"log-6-200-0-s-${enc}"`,
      });
      expect(again.status).toBe(304);
    }
  });
});

describe('raw_inline', () => {
  it("starts a stdio log with Buildbot's Builder, Build number and Worker name lines, kept or not, compressed or not", async () => {
    const [w] = await api.db.pool.query(sql`
      SELECT bl.name AS builder, b.number, wk.name AS worker FROM steps s JOIN builds b ON b.id = s.buildid
      JOIN builders bl ON bl.id = b.builderid LEFT JOIN workers wk ON wk.id = b.workerid WHERE s.id = 1`);
    const prefix = Buffer.from(
      `Builder: ${w.builder}\nBuild number: ${w.number}\n${w.worker === null ? '' : `Worker name: ${w.worker}\n`}`,
    );
    for (const q of addLog(7, 200, 1)) await api.db.pool.query(q);
    // From the database (the first download, which keeps the bare text), then from the kept file.
    const fresh = await api.get('/logs/7/raw_inline', {});
    await eventually(keptNames, (n) => n.includes('7-200-s'));
    const raw = await api.get('/logs/7/raw', {});
    expect(raw.raw.subarray(0, 8).toString()).toBe('0000000 '); // the bare text, its stream character cut
    const want = Buffer.concat([prefix, raw.raw]);
    expect(fresh.raw.equals(want)).toBe(true);
    const kept = await api.get('/logs/7/raw_inline', {});
    expect(kept.raw.equals(want)).toBe(true);
    expect(kept.headers['content-length']).toBe(String(want.length));
    for (const enc of ENCODINGS) {
      const a = await api.get('/logs/7/raw_inline', { 'accept-encoding': enc });
      expect((await DECODE[enc]!(a.raw)).equals(want), enc).toBe(true);
    }
  });
});

/** Starts a download, reads its first piece, and hangs up. */
function hangUp(url: string, headers: Record<string, string> = {}): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
      res.on('error', () => {});
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
  });
}

describe('downloads cut short', () => {
  it('keep nothing, leave no partial file, and leave no kept file open', async () => {
    // A body far larger than the sockets between server and client hold (about 20 MB), so
    // that the client hangs up while the server is still sending.
    const cutDir = await mkdtemp(join(tmpdir(), 'raw-log-cache-cut-'));
    const cut = await ApiUnderTest.start('migrated', {
      www: masterConfigSchema.shape.www.parse({ raw_log_cache: { max_mb: 64, dir: cutDir } }),
    });
    try {
      await addOneStep(cut.db.pool, 'cut');
      for (const q of addLog(1, 33_000, 1)) await cut.db.pool.query(q);
      const base = `${await listenOn(cut.app)}/api/v2`;
      await hangUp(`${base}/logs/1/raw`);
      const inFolder = async () =>
        (await readdir(cutDir)).length && readdir(join(cutDir, (await readdir(cutDir))[0]!));
      expect(await eventually(inFolder, (n) => (n || []).length === 0)).toEqual([]);
      // The next whole download is kept.
      const whole = (await cut.get('/logs/1/raw', {})).raw;
      expect(whole.length).toBe(33_000 * (7 + 1 + PAD) + 32_999);
      expect(await eventually(inFolder, (n) => (n || []).length > 0)).toEqual(['1-33000-s']);
      // Clients that hang up while the kept file is being sent: the file is closed each time,
      // and the next download is whole.
      const openFiles = async () => {
        let n = 0;
        for (const fd of await readdir('/proc/self/fd')) {
          const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
          if (target.startsWith(cutDir)) n++;
        }
        return n;
      };
      // The same when the kept file goes out compressed.
      for (let i = 0; i < 5; i++)
        await hangUp(`${base}/logs/1/raw`, i % 2 ? {} : { 'accept-encoding': 'gzip' });
      expect(await eventually(openFiles, (n) => n === 0)).toBe(0);
      const again = await fetch(`${base}/logs/1/raw`, { headers: { 'accept-encoding': 'identity' } });
      expect(again.headers.get('content-length')).toBe(String(whole.length));
      expect(Buffer.from(await again.arrayBuffer()).equals(whole)).toBe(true);
      // fetch asks for an encoding of its own and decodes it: the kept file, compressed.
      const encoded = await fetch(`${base}/logs/1/raw`);
      expect(encoded.headers.get('content-encoding')).not.toBeNull();
      expect(Buffer.from(await encoded.arrayBuffer()).equals(whole)).toBe(true);
    } finally {
      await cut.close();
      await rm(cutDir, { recursive: true, force: true });
    }
  });
});

describe('the folder', () => {
  it('goes when the API closes; a folder that cannot be used turns the cache off, not the downloads', async () => {
    // A folder beneath a plain file cannot be made.
    const file = join(dir, 'a-file');
    await writeFile(file, '');
    const other = await ApiUnderTest.start('migrated', {
      www: masterConfigSchema.shape.www.parse({ raw_log_cache: { dir: join(file, 'raw') } }),
    });
    try {
      await addOneStep(other.db.pool, 'nocache');
      for (const q of addLog(1, 10, 1)) await other.db.pool.query(q);
      const a = await other.get('/logs/1/raw', {});
      expect([a.status, a.text.split('\n').length]).toEqual([200, 10]);
    } finally {
      await other.close();
    }
    await rm(file);
    expect(await readdir(dir)).toHaveLength(1);
    await api.close();
    expect(await readdir(dir)).toEqual([]);
    api = undefined as unknown as ApiUnderTest;
  });
});
