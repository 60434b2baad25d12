// Reads of finished logs from the object store against the same reads from PostgreSQL
// (issue 33 §2: "as fast as from PostgreSQL (measure both)"): LOGS logs stay in PostgreSQL
// (compressed, as compress-log leaves them) and LOGS logs of the same lines are moved with
// the move-log job's own code, so that PostgreSQL and store runs alternate pair by pair on
// a shared machine (PAIRS pairs of each read and connection count; the ratio is taken per
// pair). Two reads: /contents of a 100-line range and /raw (the whole log, uncompressed on
// the wire), each at 1 and 8 connections (autocannon, closed loop).
//
//   load/bench/object-store/run.sh          (LOGS=4 LINES=100000 DURATION=10 PAIRS=2)
//
// READS says which /contents reads are measured:
// - `first` (default): the API keeps no span of a moved log (OBJECT_SPANS_BYTES=0), so every
//   range read from the store fetches its bytes, at RANGES offsets a log spread at random
//   over its lines: what the first look at a build's failure costs.
// - `repeat`: the API keeps spans as it does by default (read/object-spans.ts) and 5 ranges a
//   log are asked over and over: after the warm-up every range is served from memory.
//
// The API (buildApp with no page cache, no raw log cache, no rate limit) and the S3 server
// (test/helpers/s3-server.ts: in memory, every SigV4 signature checked) each run in a
// process of their own; this process seeds, moves and drives the load. The store is on
// loopback and in memory: a real S3 or MinIO adds its own latency per GET (tens of ms on
// AWS S3), which a range read pays once and a raw download once per 4 MiB.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { Job } from 'bullmq';
import { newBuild } from '../../../services/core/data/builds.js';
import { addLog, appendLog, compressLog, finishLog } from '../../../services/core/data/logs.js';
import { newStep } from '../../../services/core/data/steps.js';
import { type DataContext, transact } from '../../../services/core/data/transaction.js';
import { createPool } from '../../../services/core/db/pool.js';
import { ObjectStore } from '../../../services/core/objstore/client.js';
import { createRedis } from '../../../services/core/redis.js';
import { createLogger } from '../../../services/core/telemetry/logger.js';
import { type MoveLogData, moveLogProcessor } from '../../../services/master/jobs/move-log.js';
import { buildParts } from '../../../test/core/data/harness.js';
import { start } from '../../../test/helpers/processes.js';
import { TEST_S3_CREDENTIALS } from '../../../test/helpers/s3-server.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { hammer, type Run } from '../../measure.js';
import { cpuNow, cpuPerResponse } from './cpu.js';

const LOGS = Number(process.env.LOGS ?? 4);
const LINES = Number(process.env.LINES ?? 100_000);
const DURATION = Number(process.env.DURATION ?? 10);
const PAIRS = Number(process.env.PAIRS ?? 2);
const READS = process.env.READS ?? 'first';
if (READS !== 'first' && READS !== 'repeat') throw new Error(`READS is first or repeat, not ${READS}`);
const RANGES = Number(process.env.RANGES ?? 200);
// `contents,raw` (default), or one of them.
const KINDS = (process.env.KINDS ?? 'contents,raw').split(',');
// The bench PostgreSQL's postmaster (run.sh): its backends' CPU is counted per run (cpu.ts).
const POSTMASTER = Number(process.env.PG_PID ?? 0);
const databaseUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!databaseUrl || !redisUrl) throw new Error('set DATABASE_URL and REDIS_URL');

const db = createPool(databaseUrl);
const redis = createRedis(redisUrl, 'bench-objstore');
const ctx: DataContext = { db, redis };

const line = (i: number) => `step output line ${i}: ${'lorem ipsum '.repeat(1 + (i % 9))}`;

async function seed(count: number): Promise<number[]> {
  const stepid = await transact(ctx, async (tx) => {
    const parts = await buildParts(tx);
    const { buildid } = await newBuild(tx, { ...parts, buildrequestid: parts.brid });
    return (await newStep(tx, buildid, 'compile')).stepid;
  });
  const ids: number[] = [];
  for (let l = 0; l < count; l++) {
    const logid = await transact(ctx, (tx) => addLog(tx, stepid, `log ${l}`, 's'));
    for (let i = 0; i < LINES; i += 1000) {
      const text = Array.from({ length: Math.min(1000, LINES - i) }, (_, j) => `o${line(i + j)}\n`).join('');
      await transact(ctx, (tx) => appendLog(tx, logid, text));
    }
    await transact(ctx, (tx) => finishLog(tx, logid));
    await transact(ctx, (tx) => compressLog(tx, logid));
    ids.push(logid);
  }
  return ids;
}

// PROFILE=<folder>: the API and the S3 server write CPU profiles there (node --cpu-prof) as they stop.
const node = (script: string) => [
  ...(process.env.PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE}`] : []),
  '--import',
  'tsx',
  script,
];
const s3 = start(process.execPath, node('load/bench/object-store/s3.ts'), {});
let api: ReturnType<typeof start> | undefined;
try {
  await waitFor('the S3 server', () => s3.output().includes('http://'), { proc: s3 });
  const endpoint = s3.output().trim().split('\n')[0]!;
  api = start(process.execPath, node('load/bench/object-store/api.ts'), {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    S3_ENDPOINT: endpoint,
    ...(READS === 'first' ? { OBJECT_SPANS_BYTES: '0' } : {}),
  });
  const all = await seed(2 * LOGS);
  const logids = { postgresql: all.slice(0, LOGS), 'object store': all.slice(LOGS) };
  const a = api;
  await waitFor('the API', () => /http:\/\/\S+\n/.test(a.output()), { proc: a });
  const base = `${/http:\/\/\S+/.exec(a.output())![0]}/api/v2`;
  // The same offsets on both sides (a fixed generator: runs are comparable).
  let seedState = 33;
  const random = () => {
    seedState = (seedState * 1103515245 + 12345) % 2 ** 31;
    return seedState / 2 ** 31;
  };
  const fractions =
    READS === 'first' ? Array.from({ length: RANGES }, random) : [0.01, 0.37, 0.5, 0.83, 0.99];
  const pathsOf = (ids: number[]) => ({
    contents: ids.flatMap((id) =>
      fractions.map((f) => `/logs/${id}/contents?offset=${Math.floor((LINES - 100) * f)}&limit=100`),
    ),
    raw: ids.map((id) => `/logs/${id}/raw`),
  });
  const paths = { postgresql: pathsOf(logids.postgresql), 'object store': pathsOf(logids['object store']) };
  const measure = async (paths: string[], connections: number): Promise<Run> =>
    hammer({ base, paths, connections, durationSeconds: DURATION, timeoutSeconds: 60, headers: {} });
  const rows: {
    where: string;
    read: string;
    connections: number;
    pair: number;
    rps: number;
    p50: number;
    p99: number;
    failed: number;
    cpu: Record<string, number>;
    load: number;
  }[] = [];
  const pct = (xs: number[], p: number) =>
    xs[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? Number.NaN;
  const store = new ObjectStore({
    endpoint,
    bucket: 'bench',
    region: 'us-east-1',
    prefix: '',
    pathStyle: true,
    credentials: TEST_S3_CREDENTIALS,
  });
  const move = moveLogProcessor(ctx, store, createLogger('bench', 'silent'));
  for (const logid of logids['object store']) {
    const outcome = await move({ data: { logid }, id: `move-${logid}` } as Job<MoveLogData>);
    if (outcome !== 'moved') throw new Error(`log ${logid}: ${outcome}`);
  }
  const sides = ['postgresql', 'object store'] as const;
  for (const read of (['contents', 'raw'] as const).filter((k) => KINDS.includes(k))) {
    for (const where of sides) await measure(paths[where][read], 8); // warm-up
    for (const connections of [1, 8]) {
      for (let pair = 1; pair <= PAIRS; pair++) {
        for (const where of sides) {
          const pids = { api: a.pid, s3: s3.pid, postmaster: POSTMASTER };
          const before = cpuNow(pids);
          const r = await measure(paths[where][read], connections);
          const after = cpuNow(pids);
          // CPU ms a response cost in each process.
          const cpu = cpuPerResponse(before, after, r.responses);
          rows.push({
            where,
            read: read === 'contents' ? `contents (100 lines, ${READS} reads)` : 'raw',
            connections,
            pair,
            rps: Math.round(r.rps * 10) / 10,
            p50: pct(r.latencies, 0.5),
            p99: pct(r.latencies, 0.99),
            failed: r.failed,
            cpu,
            load: Math.round(loadavg()[0]! * 10) / 10,
          });
          console.log(JSON.stringify(rows.at(-1)));
        }
        const [pg, st] = rows.slice(-2);
        console.log(
          `  ${read} c=${connections} pair ${pair}: store / PostgreSQL ${(st!.rps / pg!.rps).toFixed(2)}`,
        );
      }
    }
  }
  const out = process.env.OUT ?? 'load/results/object-store.json';
  writeFileSync(
    out,
    `${JSON.stringify({ logs: LOGS, lines: LINES, duration: DURATION, reads: READS, pairs: PAIRS, rows }, null, 2)}\n`,
  );
  console.log(`written ${out}`);
} finally {
  await api?.stop('SIGTERM', 5000);
  await s3.stop('SIGTERM', 5000);
  await db.dispose();
  redis.disconnect();
}
