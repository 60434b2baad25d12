// Logs moved to the object store read as they did from PostgreSQL, byte for byte: /contents by
// line range, /raw and /raw_inline (with and without gzip), through a binary COPY (an API
// with its own read connections) and through a cursor (one without), each compared with the
// answers of the same log before its move. A range read fetches only the bytes of the chunks
// it needs (one ranged GET); the same lines again come from the spans the pod kept, or again
// from the store by an API that keeps none (the benchmark's first reads). Reads during a move
// (the upload held in the store, then the swap) answer right on either side. An API without
// object_store answers a moved log with a 503 in the contract's shape, not a 500.
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { masterConfigSchema } from '../../services/core/config/master-config.js';
import { addLog, appendLog, compressLog, finishLog } from '../../services/core/data/logs.js';
import { ObjectStore } from '../../services/core/objstore/client.js';
import { type MoveLogData, moveLogProcessor } from '../../services/master/jobs/move-log.js';
import { type Harness, openHarness } from '../core/data/harness.js';
import { apiInProcess, type InProcessApi } from '../helpers/api.js';
import { S3Server, TEST_S3_CREDENTIALS } from '../helpers/s3-server.js';
import { waitFor } from '../helpers/wait.js';
import { Logs, quiet } from '../master/jobs/helpers.js';

let h: Harness;
let logs: Logs;
let s3: S3Server;
let store: ObjectStore;
let copying: InProcessApi;
let cursor: InProcessApi;
let storeless: InProcessApi;

// Nothing kept between reads: every answer comes from PostgreSQL or the store.
const www = masterConfigSchema.shape.www.parse({
  page_cache: { enabled: false },
  raw_log_cache: { enabled: false },
});

beforeAll(async () => {
  [h, s3] = await Promise.all([openHarness(), S3Server.start({ bucket: 'reads' })]);
  logs = await Logs.open(h);
  store = new ObjectStore({
    endpoint: s3.endpoint,
    bucket: 'reads',
    region: 'us-east-1',
    prefix: '',
    pathStyle: true,
    credentials: TEST_S3_CREDENTIALS,
  });
  [copying, cursor, storeless] = await Promise.all([
    apiInProcess({ db: { pool: h.db.pool, url: h.db.url }, www, objectStore: store }),
    // This one keeps no span: every range it reads is a first read (the benchmark's setting).
    apiInProcess({ db: { pool: h.db.pool }, www, objectStore: store, objectSpansBytes: 0 }),
    apiInProcess({ db: { pool: h.db.pool }, www }),
  ]);
});
afterAll(async () => {
  await Promise.all([copying?.stop(), cursor?.stop(), storeless?.stop()]);
  await s3?.close();
  await h?.close();
});

const move = (logid: number) =>
  moveLogProcessor(h.ctx, store, quiet)({ data: { logid }, id: `move-${logid}` } as Job<MoveLogData>);

/** A text or html log of `n` lines, finished. */
async function typedLog(name: string, type: 't' | 'h', n: number): Promise<number> {
  const logid = await h.run((tx) => addLog(tx, logs.stepid, name, type));
  await h.run(async (tx) => {
    for (let i = 0; i < n; i += 11) {
      const lines = Array.from(
        { length: Math.min(11, n - i) },
        (_, j) => `<b>${type} ${i + j}</b> ${'é'.repeat((i + j) % 7)}`,
      );
      await appendLog(tx, logid, `${lines.join('\n')}\n`);
    }
  });
  await h.run((tx) => finishLog(tx, logid));
  return logid;
}

// What says what the body is (the rest is the rate limit's and the session's).
const KEPT_HEADERS = [
  'content-type',
  'content-encoding',
  'content-length',
  'content-disposition',
  'etag',
  'vary',
];

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/** Every answer compared: a few ranges of /contents, /raw and /raw_inline, plain and gzipped. */
async function answers(api: InProcessApi, logid: number, n: number, few = false): Promise<Answer[]> {
  const all = [
    ...[
      [0, n],
      [0, 1],
      [n - 1, 1],
      [999, 3],
      [17, 1200],
      [n + 5, 10],
    ].map(([offset, limit]) => `/api/v2/logs/${logid}/contents?offset=${offset}&limit=${limit}`),
    `/api/v2/logs/${logid}/contents`,
    `/api/v2/logs/${logid}/raw`,
    `/api/v2/logs/${logid}/raw_inline`,
  ];
  const urls = few ? [all[4]!, all[7]!] : all;
  const out: Answer[] = [];
  for (const url of urls) {
    for (const encoding of ['identity', 'gzip']) {
      const res = await api.app.inject({ method: 'GET', url, headers: { 'accept-encoding': encoding } });
      const headers = Object.fromEntries(KEPT_HEADERS.map((k) => [k, res.headers[k]]));
      out.push({ status: res.statusCode, headers, body: res.rawPayload.toString('base64') });
    }
  }
  return out;
}

describe('logs in the object store', () => {
  it('answer /contents, /raw and /raw_inline as they did from PostgreSQL, byte for byte', async () => {
    const cases = [
      { logid: await logs.write('stdio', 2600, { per: 20 }), n: 2600 },
      { logid: await typedLog('text', 't', 1500), n: 1500 },
      { logid: await typedLog('html', 'h', 300), n: 300 },
    ];
    for (const { logid, n } of cases) {
      const before = [await answers(copying, logid, n), await answers(cursor, logid, n)];
      expect(before[0]!.every((a) => a.status === 200)).toBe(true);
      expect(await move(logid)).toBe('moved');
      expect(await logs.rows(logid)).toEqual([]);
      expect(await answers(copying, logid, n)).toEqual(before[0]);
      expect(await answers(cursor, logid, n)).toEqual(before[1]);
    }
    expect(s3.refused).toEqual([]);
  });

  it('reads a line range with one ranged GET of only the chunks that hold it, then from memory (if kept)', async () => {
    const logid = await logs.write('ranged', 5000, { per: 50 });
    await h.run((tx) => compressLog(tx, logid));
    expect(await move(logid)).toBe('moved');
    const objectBytes = [...s3.objects.entries()].find(([k]) => k.startsWith(`logs/${logid}/`))![1].length;
    const before = s3.requests.length;
    const res = await copying.app.inject({
      method: 'GET',
      url: `/api/v2/logs/${logid}/contents?offset=2500&limit=2`,
    });
    expect(res.json().logchunks[0].content).toBe(
      `oline 2500 ${'x'.repeat(2500 % 60)}\noline 2501 ${'x'.repeat(2501 % 60)}\n`,
    );
    const gets = s3.requests.slice(before);
    expect(gets).toHaveLength(1);
    const [, start, end] = /^bytes=(\d+)-(\d+)$/.exec(gets[0]!.range!)!.map(Number);
    expect(end! - start! + 1).toBeLessThan(objectBytes / 2);
    // The same lines again: from the span this pod kept, no GET.
    const again = await copying.app.inject({
      method: 'GET',
      url: `/api/v2/logs/${logid}/contents?offset=2500&limit=2`,
    });
    expect(again.json()).toEqual(res.json());
    expect(s3.requests.length).toBe(before + 1);
    // An API that keeps no span fetches them each time, the same bytes.
    for (let i = 0; i < 2; i++) {
      const fetched = await cursor.app.inject({
        method: 'GET',
        url: `/api/v2/logs/${logid}/contents?offset=2500&limit=2`,
      });
      expect(fetched.json()).toEqual(res.json());
    }
    expect(s3.requests.slice(before + 1).map((r) => r.range)).toEqual([gets[0]!.range, gets[0]!.range]);
  });

  it('answers right during a move: the upload held, then the swap', async () => {
    const n = 3000;
    const logid = await logs.write('read while moving', n, { per: 5 });
    const expected = await answers(cursor, logid, n, true);
    const release = s3.hold();
    const moving = move(logid);
    let wrong = 0;
    let reads = 0;
    const seen = new Set<boolean>();
    const reader = (async () => {
      for (;;) {
        const isMoved = (await logs.rows(logid)).length === 0;
        const api = reads % 2 ? copying : cursor;
        if (JSON.stringify(await answers(api, logid, n, true)) !== JSON.stringify(expected)) wrong++;
        reads++;
        seen.add(isMoved);
        if (seen.has(true) && reads > 3) return;
      }
    })();
    // Reads go on from PostgreSQL while the object is being uploaded...
    await waitFor('reads while the upload is held', () => s3.putsWaiting === 1 && reads >= 2);
    // ...and from the store once it is recorded.
    release();
    expect(await moving).toBe('moved');
    await reader;
    expect(wrong).toBe(0);
    expect([...seen].sort()).toEqual([false, true]);
  });

  it('an API without object_store answers a moved log with a 503, not a 500', async () => {
    const logid = await logs.write('no store here', 50);
    expect(await move(logid)).toBe('moved');
    const res = await storeless.app.inject({ method: 'GET', url: `/api/v2/logs/${logid}/contents` });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBeDefined();
    for (const path of ['raw', 'raw_inline']) {
      const raw = await storeless.app.inject({ method: 'GET', url: `/api/v2/logs/${logid}/${path}` });
      expect(raw.statusCode).toBe(503);
    }
  });
});
