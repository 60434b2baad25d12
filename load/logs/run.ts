// Log ingestion benchmark: one master, 10 concurrent builds streaming output, measured as
// log lines stored per second; and the delay from a worker printing a line to that line
// being served by GET /logs/N/contents.
//
//   DATABASE_URL=postgresql://...  REDIS_URL=redis://...  node --import tsx load/logs/run.ts [lines per build]
//
// It creates a fresh database next to DATABASE_URL's (the role needs CREATEDB), migrates it,
// starts an API, a master and 5 workers (2 builds each) as real processes, and stops them
// all by pid at the end. Prints a markdown table.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../../services/core/db/migrate.js';
import { createPool, sql } from '../../services/core/db/pool.js';
import { freePort } from '../../test/helpers/processes.js';
import { waitFor } from '../../test/helpers/wait.js';
import { forceChecked } from '../force.js';

const LINES = Number(process.argv[2] ?? 100_000);
const BUILDS = 10;
const WORKERS = 5;
const base = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!base || !redisUrl) throw new Error('set DATABASE_URL and REDIS_URL');

const procs: ReturnType<typeof spawn>[] = [];
/** `input`: written to its standard input (a worker's password). */
function start(name: string, env: Record<string, string>, input?: string) {
  const p = spawn(process.execPath, ['--import', 'tsx', `services/${name}/main.ts`], {
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, LOG_LEVEL: 'warn', ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'inherit'],
  });
  if (input !== undefined) p.stdin!.end(input);
  procs.push(p);
}

const dir = mkdtempSync(join(tmpdir(), 'flotilla-logbench-'));
const dbName = `logbench_${Date.now()}`;
const admin = createPool(base, { poolSize: 1 });
const url = new URL(base);
url.pathname = `/${dbName}`;
const db = createPool(url.toString(), { poolSize: 2 });
try {
  await admin.query(sql`CREATE DATABASE ${sql.ident(dbName)}`);
  await migrate(db);
  const workers = Array.from({ length: WORKERS }, (_, i) => `lw${i}`);
  writeFileSync(
    join(dir, 'master.yaml'),
    `workers:\n${workers.map((w) => `  - { name: ${w}, password: pw, max_builds: 2 }`).join('\n')}
builders:
  # Two builders: a worker runs one build of a builder at a time, so 5 workers with 2 slots
  # run 10 builds at once only across two builders.
  - name: spew-a
    workers: [${workers.join(', ')}]
    steps:
      - { type: shell, name: spew, command: 'seq 1 ${LINES} | sed "s/^/log line number /"' }
  - name: spew-b
    workers: [${workers.join(', ')}]
    steps:
      - { type: shell, name: spew, command: 'seq 1 ${LINES} | sed "s/^/log line number /"' }
  - name: ticker
    workers: [${workers.join(', ')}]
    steps:
      - { type: shell, name: tick, command: 'for i in $(seq 1 100); do echo "tick $(date +%s%N)"; sleep 0.05; done' }
force_schedulers:
  - { name: spew, builders: [spew-a, spew-b] }
  - { name: ticker, builders: [ticker] }
# The latency probe polls every few milliseconds, past the default per-client rate limit.
www:
  rate_limit: { enabled: false }
`,
  );
  const [apiPort, workerPort, probe] = [await freePort(), await freePort(), await freePort()];
  const common = {
    DATABASE_URL: url.toString(),
    REDIS_URL: redisUrl,
    MASTER_CONFIG: join(dir, 'master.yaml'),
  };
  start('api', { ...common, PORT: String(apiPort) });
  start('master', {
    ...common,
    MASTER_NAME: 'logbench',
    WORKER_PORT: String(workerPort),
    PROBE_PORT: String(probe),
  });
  for (const w of workers) {
    start(
      'worker',
      {
        MASTER_URL: `ws://127.0.0.1:${workerPort}/worker`,
        WORKER_NAME: w,
        WORKER_DIR: join(dir, w),
        PROBE_PORT: String(await freePort()),
      },
      'pw\n',
    );
  }
  const api = `http://127.0.0.1:${apiPort}/api/v2`;
  const get = async (p: string) =>
    (await (await fetch(api + p, { headers: { accept: 'application/json' } })).json()) as any;
  await waitFor('workers connected', async () =>
    (await get('/workers')).workers.every((w: any) => w.connected_to.length > 0),
  );

  // Throughput: 10 builds at once, each streaming LINES lines.
  for (let i = 0; i < BUILDS / 2; i++) await forceChecked(api, 'spew', 2);
  await waitFor('spew builds done', async () => (await get('/builds?complete=true')).meta.total >= BUILDS, {
    timeoutMs: 600_000,
    everyMs: 50,
  });
  const [t] = await db.query(sql`
    SELECT sum(l.num_lines)::bigint AS lines, min(s.started_at) AS first, max(s.complete_at) AS last,
           extract(epoch FROM now())::bigint AS now
    FROM steps s JOIN logs l ON l.stepid = s.id WHERE s.name = 'spew'`);
  const seconds = Math.max(1, t.last - t.first);
  const perSecond = Number(t.lines) / seconds;

  // Latency: a build prints a timestamped line every 50 ms; poll /contents for new lines.
  await forceChecked(api, 'ticker', 1);
  let logid = 0;
  await waitFor('ticker log', async () => {
    const ticker = (await get('/builders?name=ticker')).builders[0].builderid;
    const b = (await get(`/builds?builderid=${ticker}&limit=1`)).builds[0];
    if (!b) return false;
    const s = (await get(`/builds/${b.buildid}/steps?name=tick`)).steps[0];
    if (!s) return false;
    const l = (await get(`/steps/${s.stepid}/logs`)).logs[0];
    logid = l?.logid ?? 0;
    return logid > 0;
  });
  const delays: number[] = [];
  let offset = 0;
  for (let done = false; !done; ) {
    const r = await fetch(`${api}/logs/${logid}/contents?offset=${offset}`, {
      headers: { accept: 'application/json' },
    });
    const now = Date.now();
    if (r.ok) {
      const chunk = ((await r.json()) as any).logchunks[0];
      const lines: string[] = chunk.content.split('\n').slice(0, -1);
      offset += lines.length;
      for (const line of lines) {
        const m = /^otick (\d+)$/.exec(line);
        if (m) delays.push(now - Number(BigInt(m[1]!) / 1_000_000n));
        if (line.startsWith('helapsedTime')) done = true;
      }
    } else await r.arrayBuffer();
    await new Promise((res) => setTimeout(res, 5));
  }
  delays.sort((a, b) => a - b);
  const pct = (p: number) => delays[Math.min(delays.length - 1, Math.floor((p / 100) * delays.length))]!;
  console.log(`| measure | value |\n|---|---|`);
  console.log(`| lines stored | ${t.lines} (${BUILDS} builds × ${LINES} lines + headers) |`);
  console.log(`| ingestion time (first step start to last step end, whole seconds) | ${seconds} s |`);
  console.log(`| ingestion rate, one master | ${Math.round(perSecond)} lines/s |`);
  console.log(
    `| line visible at /logs/N/contents after the worker printed it: p50 / p99 / max (${delays.length} lines) | ${pct(50)} / ${pct(99)} / ${delays.at(-1)} ms |`,
  );
} finally {
  for (const p of procs) p.kill('SIGKILL');
  await db.dispose();
  await admin.query(sql`DROP DATABASE IF EXISTS ${sql.ident(dbName)} WITH (FORCE)`).catch(() => {});
  await admin.dispose();
  rmSync(dir, { recursive: true, force: true });
}
