// Retention through real masters (issue 33 §1): the cleanup as the cluster runs it, a real
// master's retention job (BullMQ), deleting CHUNKS log chunks (1,000,000) of BUILDS old builds
// (100,000) while RUNNING builds (20) run on two real masters and their Flotilla agents. It
// reports the p99 of the claims' and the log writes' statements quiet (before the cleanup) and
// during it, and that no build failed. Its in-process twin is run.ts beside it.
//
//   DATABASE_URL=postgresql://...  REDIS_URL=redis://...  node --import tsx load/bench/retention/masters.ts
//   (environment: CHUNKS, BUILDS, RUNNING, QUIET_SECONDS; `MODE=masters load/bench/retention/run.sh`
//   starts the bench PostgreSQL and a Redis for it)
//
// How: a fresh database next to DATABASE_URL's is seeded (seed.ts) and gets the API, masters
// m1 and m2 without a retention section, RUNNING agents (half on each), and a build load that
// forces a build whenever fewer than RUNNING are unfinished (load/busy/builds.ts, through the
// REST API). After QUIET_SECONDS a third master, m3, starts with the same configuration plus
// `retention:` (build_horizon and request_horizon 365 days, an hour's period): a master with
// horizons schedules the cluster's job, which BullMQ runs at once on one of the three masters.
// The cleanup ends when a master's /metrics counts the retention job done.
//
// What is timed: every statement the masters' sessions run, as PostgreSQL logs it
// (log_min_duration_statement 0, set on this database alone, so the server's log has these
// and nothing of other databases): a claim's two statements (the lock of the requests, FOR
// NO KEY UPDATE, and the claim's INSERT), and a log write's two (the lock of the log's row
// and the INSERT of its chunks), `execute` durations. That is the database's time, where the
// cleanup could make them wait (locks, I/O, the server's CPU); the masters' own time around
// it (a pooled connection, the event loop) is not in it. The log is read from where it stood
// before the masters started. (The masters' own traces would not do: their PostgreSQL spans
// need a parent span, services/core/telemetry/tracing.ts, and a claim has none.)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../../../services/core/db/migrate.js';
import { sql } from '../../../services/core/db/pool.js';
import { apiProcess } from '../../../test/helpers/api.js';
import { freePort, type Running, startService } from '../../../test/helpers/processes.js';
import { sample } from '../../../test/helpers/prometheus.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { BuildLoad } from '../../busy/builds.js';
import { scratchDatabase } from '../../scratch-database.js';
import { SIZES, seed } from './seed.js';

const { chunks: CHUNKS, builds: BUILDS, running: RUNNING } = SIZES;
const QUIET_SECONDS = Number(process.env.QUIET_SECONDS ?? 60);
const base = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
// The bench cluster's folder (load/bench/cluster.sh): its socket, for a superuser's setting,
// and its server log.
const pgDir = process.env.BENCH_PG_DIR;
if (!base || !redisUrl || !pgDir) throw new Error('set DATABASE_URL, REDIS_URL and BENCH_PG_DIR');

// The statements timed, by their text (services/core/data/buildrequests.ts and logs.ts).
const TIMED = {
  'claim: lock requests': /^SELECT id FROM buildrequests WHERE id = ANY\(.*FOR NO KEY UPDATE/s,
  'claim: insert': /^INSERT INTO buildrequest_claims/,
  'log write: lock log': /^SELECT num_lines, complete FROM logs WHERE id = .* FOR NO KEY UPDATE/s,
  'log write: insert chunks': /^INSERT INTO logchunks/,
} as const;
type Timed = keyof typeof TIMED;
const TIMED_KINDS = Object.keys(TIMED) as Timed[];

interface Logged {
  at: number;
  ms: number;
  kind: Timed;
}

// The server log's entries from `from` (a byte offset) on: `%m [%p] LOG:  duration: X ms
// execute <name>: TEXT`, TEXT running on over the next lines until the next entry.
function loggedStatements(from: number): Logged[] {
  const text = readFileSync(join(pgDir!, 'postgres.log')).subarray(from).toString('utf8');
  const out: Logged[] = [];
  const entry =
    /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) UTC \[\d+\] LOG: {2}duration: ([\d.]+) ms {2}execute [^:]*: ([\s\S]*?)(?=^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} |(?![\s\S]))/gm;
  for (const m of text.matchAll(entry)) {
    const kind = TIMED_KINDS.find((k) => TIMED[k].test(m[3]!.trim()));
    if (kind) out.push({ at: Date.parse(`${m[1]!.replace(' ', 'T')}Z`), ms: Number(m[2]), kind });
  }
  return out;
}

const p99 = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? Number.NaN;
};

// A build: one step printing ten lines a second for ten seconds, as a test run prints.
const configYaml = (workers: string[], retention: boolean) => `workers:
${workers.map((w) => `  - { name: ${w}, password: pw }`).join('\n')}
builders:
  - name: live
    workers: [${workers.join(', ')}]
    steps:
      - type: shell
        name: test
        command: 'for s in $(seq 1 10); do for i in $(seq 1 10); do echo "test: second $s, line $i of a running build"; done; sleep 1; done'
force_schedulers:
  - { name: live, builders: [live] }
${retention ? 'retention: { build_horizon: 365d, request_horizon: 365d, period_seconds: 3600, max_run_seconds: 86400 }\n' : ''}`;

const dir = mkdtempSync(join(tmpdir(), 'flotilla-retention-masters-'));
const scratch = await scratchDatabase(base, 'retentionmasters');
const { db, url, name: dbName } = scratch;
const procs: Running[] = [];
try {
  await migrate(db);
  const [old] = await db.query(
    sql`INSERT INTO builders (name, name_hash) VALUES ('old', md5('old')) RETURNING id`,
  );
  const [gone] = await db.query(
    sql`INSERT INTO masters (name, name_hash, active, last_active) VALUES ('gone', md5('gone'), 0, 0) RETURNING id`,
  );
  let t = performance.now();
  await seed(db, { builderid: old.id, masterid: gone.id, builds: BUILDS, chunks: CHUNKS });
  const seeded = (performance.now() - t) / 1000;
  const [size] = await db.query(sql`SELECT pg_database_size(current_database())::bigint AS bytes`);
  // Every statement of the sessions opened from now on is logged with its duration, without
  // its parameters (log chunks' text).
  execFileSync('runuser', [
    '-u',
    'postgres',
    '--',
    'psql',
    '-h',
    pgDir,
    '-p',
    new URL(url).port,
    '-d',
    'postgres',
    '-qAt',
    '-c',
    `ALTER DATABASE ${dbName} SET log_min_duration_statement = 0`,
    '-c',
    `ALTER DATABASE ${dbName} SET log_parameter_max_length = 0`,
  ]);
  const logFrom = statSync(join(pgDir, 'postgres.log')).size;

  const workers = Array.from({ length: RUNNING }, (_, i) => `r${i + 1}`);
  writeFileSync(join(dir, 'plain.yaml'), configYaml(workers, false));
  writeFileSync(join(dir, 'retention.yaml'), configYaml(workers, true));
  writeFileSync(join(dir, 'password'), 'pw\n', { mode: 0o600 });
  const common = {
    DATABASE_URL: url,
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'warn',
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
  const api = await apiProcess({
    databaseUrl: url,
    redisUrl,
    config: join(dir, 'plain.yaml'),
    env: { OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' },
  });
  procs.push(api.proc);
  // A master on its own ports; ready once its /readyz answers.
  const master = async (name: string, config: string) => {
    const m = { worker: await freePort(), probe: await freePort() };
    const proc = startService('master', {
      ...common,
      MASTER_CONFIG: join(dir, config),
      MASTER_NAME: name,
      WORKER_PORT: String(m.worker),
      PROBE_PORT: String(m.probe),
    });
    procs.push(proc);
    const probes = `http://127.0.0.1:${m.probe}`;
    await waitFor(`master ${name} ready`, async () => (await fetch(`${probes}/readyz`)).ok, { proc });
    return { ...m, probes, proc };
  };
  const m1 = await master('m1', 'plain.yaml');
  const m2 = await master('m2', 'plain.yaml');
  for (const [i, w] of workers.entries())
    procs.push(
      startService('worker', {
        MASTER_URL: `ws://127.0.0.1:${(i % 2 ? m2 : m1).worker}/worker`,
        WORKER_NAME: w,
        WORKER_PASSWORD_FILE: join(dir, 'password'),
        WORKER_DIR: join(dir, w),
        PROBE_PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
      }),
    );
  const load = new BuildLoad(api.base, 'live', 'live', RUNNING);
  await waitFor('the builder on its masters', async () => {
    const b = (await (await fetch(`${api.base}/builders?name=live`)).json()) as any;
    return b.builders[0]?.masterids.length === 2;
  });
  await load.start();
  await load.fullyRunning();
  const quietFrom = Date.now();
  await load.mark();
  await new Promise((r) => setTimeout(r, QUIET_SECONDS * 1000));
  const quiet = await load.report();
  const quietTo = Date.now();

  await load.mark();
  t = performance.now();
  // The job may start before m3 answers /readyz: the cleanup is counted from m3's start.
  const duringFrom = Date.now();
  const m3 = await master('m3', 'retention.yaml');
  const masters = [m1, m2, m3];
  const metric = async (name: string, labels: Record<string, string>) => {
    let sum = 0;
    for (const m of masters)
      sum += sample(await (await fetch(`${m.probes}/metrics`)).text(), name, labels) ?? 0;
    return sum;
  };
  const runs = (outcome: string) =>
    metric('flotilla_jobs_duration_seconds_count', { queue: 'retention', outcome });
  await waitFor(
    'the retention run done',
    async () => (await runs('completed')) + (await runs('failed')) >= 1,
    { timeoutMs: 3_600_000, everyMs: 2000 },
  );
  if ((await runs('failed')) > 0) throw new Error('the retention run failed (see the masters’ logs)');
  const duringTo = Date.now();
  const cleanup = (performance.now() - t) / 1000;
  const during = await load.report();
  const deleted: Record<string, number> = {};
  for (const kind of ['log_chunks', 'logs', 'builds', 'buildrequests', 'buildsets'])
    deleted[kind] = await metric('flotilla_retention_deleted_total', { kind });
  const failedRuns = await metric('flotilla_jobs_failures_total', { queue: 'retention' });
  await load.stop();
  await waitFor(
    'the last builds done',
    async () => {
      const [r] = await db.query(sql`SELECT count(*)::int AS n FROM buildrequests WHERE complete = 0`);
      return r.n === 0;
    },
    { timeoutMs: 300_000, everyMs: 1000 },
  );
  const [left] = await db.query(sql`SELECT
      (SELECT count(*) FROM builds WHERE builderid = ${old.id})::int AS old_builds,
      (SELECT count(*) FROM logchunks WHERE logid <= ${BUILDS})::int AS old_chunks,
      (SELECT count(*) FROM builds WHERE builderid <> ${old.id})::int AS live_builds,
      (SELECT count(*) FROM builds WHERE builderid <> ${old.id} AND results IS DISTINCT FROM 0)::int AS live_failed`);
  const logged = loggedStatements(logFrom);

  const f = (x: number) => x.toFixed(1);
  console.log(
    `seeded ${BUILDS} builds, ${CHUNKS} chunks in ${f(seeded)} s (database ${(Number(size.bytes) / 1e6).toFixed(0)} MB)`,
  );
  console.log(
    `cleanup by a master's retention job: ${f(cleanup)} s from m3's start to the job done (m3's own start included); deleted ${JSON.stringify(deleted)}; failed runs ${failedRuns}; left ${left.old_builds} old builds, ${left.old_chunks} old chunks`,
  );
  console.log(
    `builds on the live builder: ${left.live_builds}, not successful: ${left.live_failed}; running (min/mean/max) quiet ${quiet.running.min}/${f(quiet.running.mean)}/${quiet.running.max}, during ${during.running.min}/${f(during.running.mean)}/${during.running.max}; load average (1 min) at the end ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log('');
  console.log(
    `| phase | seconds | builds finished | ${TIMED_KINDS.map((k) => `${k}: n, p99 ms`).join(' | ')} |`,
  );
  console.log(
    `|---|---|---|${Object.keys(TIMED)
      .map(() => '---|')
      .join('')}`,
  );
  const window = (from: number, to: number) => logged.filter((s) => s.at >= from && s.at < to);
  for (const [name, from, to, report] of [
    ['quiet', quietFrom, quietTo, quiet],
    ['during the cleanup', duringFrom, duringTo, during],
  ] as const) {
    const seen = window(from, to);
    const cells = TIMED_KINDS.map((k) => {
      const ms = seen.filter((s) => s.kind === k).map((s) => s.ms);
      return `${ms.length}, ${f(p99(ms))}`;
    });
    console.log(`| ${name} | ${f((to - from) / 1000)} | ${report.finished} | ${cells.join(' | ')} |`);
  }
} finally {
  for (const p of procs.reverse()) await p.stop('SIGKILL');
  await scratch.drop();
  rmSync(dir, { recursive: true, force: true });
}
