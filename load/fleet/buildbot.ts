// Buildbot 3.7 on the fleet's queue (issue 35 §1 item 6): a real Buildbot master (Debian's
// `buildbot`, test/helpers/buildbot-master.ts) given load/fleet/buildbot.cfg, the shape
// load/fleet/config.ts gives Flotilla (BUILDERS builders of one `true` step, WORKERS
// configured workers of one slot, builder b on workers b..b+2), on a database of its own
// (DATABASE_URL: Flotilla's migrations, which are Buildbot 3.7's schema), with real
// `buildbot-worker` PB workers, one process each. Phases, each printed as it ends:
//
//   0. the master started on an empty queue (its configuration loaded: spawn to "running");
//      then PB workers started in steps (WORKER_STEPS, default 10,50,100,200,400), each step's
//      master RSS and the workers' own RSS once every one of them shows in
//      `connected_workers`; the steps stop early when the next would leave less than
//      RESERVE_MIB of the machine's memory available;
//   A. start: the master stopped, PENDING one-request build sets written into its database as
//      Buildbot's own addBuildset leaves them (buildsets, buildset_sourcestamps,
//      buildrequests; complete 0, results -1), then the master started again while its
//      workers retry: spawn to "running", spawn to the first row in `builds`, and its CPU by
//      then. Given up after START_LIMIT_S (900: the bound the task sets);
//   B. throughput: builds started and completed a second while the queue drains (a window of
//      DRAIN_SECONDS), and master CPU per completed build.
//
//   load/fleet/buildbot.sh        (a fresh database on the benchmark cluster; see there)
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freemem, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool, sql } from '../../services/core/db/pool.js';
import { type BuildbotMaster, startBuildbotMaster } from '../../test/helpers/buildbot-master.js';
import { startBuildbotWorker } from '../../test/helpers/buildbot-worker.js';
import { freePort, type Running } from '../../test/helpers/processes.js';
import { waitFor } from '../../test/helpers/wait.js';
import { WORKER_PASSWORD, workerName } from './config.js';
import { cpuSeconds, rssKiB } from './procstat.js';
import { unclaimed, writePending } from './queue.js';

const BUILDERS = Number(process.env.BUILDERS ?? 1000);
const WORKERS = Number(process.env.WORKERS ?? 1000);
const PENDING = Number(process.env.PENDING ?? 25_000);
const DRAIN_SECONDS = Number(process.env.DRAIN_SECONDS ?? 60);
const STEPS = (process.env.WORKER_STEPS ?? '10,50,100,200,400').split(',').map(Number);
const RESERVE_MIB = Number(process.env.RESERVE_MIB ?? 8192);
const START_LIMIT_S = Number(process.env.START_LIMIT_S ?? 900);
const dbUrl = process.env.DATABASE_URL;
if (!dbUrl) throw new Error('set DATABASE_URL (load/fleet/buildbot.sh does)');

const say = (line: string) => console.log(line);
const load1 = () => loadavg()[0]!.toFixed(1);
const seconds = (ms: number) => (ms / 1000).toFixed(2);
const mib = (kib: number) => (kib / 1024).toFixed(0);
// MemAvailable, not MemFree: the page cache PostgreSQL's data sits in is memory a worker can have.
const availableMiB = () => {
  const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'));
  return m ? Number(m[1]) / 1024 : freemem() / 2 ** 20;
};

const dir = mkdtempSync(join(tmpdir(), 'flotilla-bbfleet-'));
const db = createPool(dbUrl, { poolSize: 2 });
// One port for every master started here: the workers retry the one they were made with.
const pbPort = await freePort();
const workers: Running[] = [];
let master: BuildbotMaster | undefined;
let proc: Running | undefined;

async function count(q: ReturnType<typeof sql>): Promise<number> {
  const [row] = await db.query(q);
  return Number(row.n);
}
// Connected to the masters registered after `since` (a masters id): a master killed at the
// end of its stop's grace leaves its rows behind it, still marked active.
const connected = (since = 0) =>
  count(sql`SELECT count(*) AS n FROM connected_workers WHERE masterid > ${since}`);
const builds = () => count(sql`SELECT count(*) AS n FROM builds`);
const completed = () => count(sql`SELECT count(*) AS n FROM builds WHERE complete_at IS NOT NULL`);

/** A Buildbot master on pbPort; `spawned` gets its process at once, before it runs. */
function startMaster(spawned: (proc: Running, atMs: number) => void, readyMs: number) {
  return startBuildbotMaster('load/fleet/buildbot.cfg', dbUrl!, {
    pbPort,
    readyMs,
    env: { FLEET_BUILDERS: String(BUILDERS), FLEET_WORKERS: String(WORKERS) },
    onSpawn: (proc) => spawned(proc, Date.now()),
  });
}

// Workers: the first made by `buildbot-worker create-worker` (PB, its default), the others
// from its buildbot.tac with their own name and basedir, which is all create-worker writes
// differently for them (and a Python start each would cost minutes here). maxdelay is cut
// from 300 s to 2 s so that a worker's backoff while the master restarts (phase A) does not
// add up to 5 minutes to the master's start.
const workersDir = join(dir, 'workers');
mkdirSync(workersDir);
execFileSync(
  'buildbot-worker',
  ['create-worker', join(workersDir, workerName(0)), `127.0.0.1:${pbPort}`, workerName(0), WORKER_PASSWORD],
  { stdio: 'ignore' },
);
const tac = readFileSync(join(workersDir, workerName(0), 'buildbot.tac'), 'utf8');
function startWorker(w: number): Running {
  const wdir = join(workersDir, workerName(w));
  mkdirSync(wdir, { recursive: true });
  const own = tac
    .replace(/^basedir = .*$/m, `basedir = ${JSON.stringify(wdir)}`)
    .replace(/^workername = .*$/m, `workername = ${JSON.stringify(workerName(w))}`)
    .replace(/^maxdelay = .*$/m, 'maxdelay = 2');
  writeFileSync(join(wdir, 'buildbot.tac'), own);
  return startBuildbotWorker(wdir);
}

try {
  say(
    `Buildbot 3.7 fleet: 1 master, ${BUILDERS} builders, ${WORKERS} workers configured, PB workers in steps of ${STEPS.join(', ')}, ${PENDING} pending; load average (1 min) at start ${load1()}\n`,
  );

  // 0. The configuration loaded on an empty queue; then workers, step by step.
  let spawnedAt = 0;
  master = await startMaster((p, at) => {
    proc = p;
    spawnedAt = at;
  }, START_LIMIT_S * 1000);
  const runningAt = Date.now();
  const registered = await count(sql`SELECT count(*) AS n FROM builders WHERE name LIKE 'fleet-%'`);
  say('## 0. Configuration and memory per connected worker (empty queue)\n');
  say(
    `spawn to "BuildMaster is running": ${seconds(runningAt - spawnedAt)} s (its CPU ${cpuSeconds(proc!.pid).toFixed(2)} s), ${registered} builders registered; master RSS ${mib(rssKiB(proc!.pid))} MiB; load average ${load1()}\n`,
  );
  say(
    '| PB workers | time to all connected (s) | master RSS (MiB) | master KiB per worker (from the step before) | worker RSS, mean (MiB) | memory available after (MiB) | load average (1 min) |',
  );
  say('|---|---|---|---|---|---|---|');
  let rssBefore = rssKiB(proc!.pid);
  let perWorkerMiB = 0;
  for (const step of STEPS.filter((s) => s <= WORKERS)) {
    const more = step - workers.length;
    // Stop before a step the machine cannot hold: what the last step cost per worker (the
    // worker's own RSS), for every worker this one adds, must leave the reserve.
    if (perWorkerMiB > 0 && availableMiB() - more * perWorkerMiB < RESERVE_MIB) {
      say(
        `\n(stopped before ${step}: ${more} more at ${perWorkerMiB.toFixed(0)} MiB each would leave less than ${RESERVE_MIB} MiB of ${availableMiB().toFixed(0)} available)`,
      );
      break;
    }
    const t0 = Date.now();
    while (workers.length < step) workers.push(startWorker(workers.length));
    await waitFor(`${step} PB workers connected`, async () => (await connected()) === step, {
      timeoutMs: 120_000 + step * 3_000,
      everyMs: 500,
      proc: proc!,
    });
    const took = Date.now() - t0;
    const rss = rssKiB(proc!.pid);
    const workerRss = workers.map((w) => rssKiB(w.pid));
    perWorkerMiB = workerRss.reduce((a, b) => a + b, 0) / workerRss.length / 1024;
    say(
      `| ${step} | ${seconds(took)} | ${mib(rss)} | ${((rss - rssBefore) / more).toFixed(0)} | ${perWorkerMiB.toFixed(1)} | ${availableMiB().toFixed(0)} | ${load1()} |`,
    );
    rssBefore = rss;
  }
  // A clean stop with 200 workers took more than the helper's 10 s at load 50-80 (20:16), and
  // the master killed then left its rows active: it is given two minutes here.
  await proc!.stop('SIGTERM', 120_000);
  await master.stop();
  master = undefined;
  const [{ id: lastMaster }] = await db.query(sql`SELECT coalesce(max(id), 0) AS id FROM masters`);

  // A. Start with PENDING requests waiting, as Buildbot's addBuildset writes them.
  const now = Math.floor(Date.now() / 1000);
  const [{ id: ssid }] = await db.query(sql`
    INSERT INTO sourcestamps (ss_hash, branch, revision, repository, codebase, project, created_at)
    VALUES (md5('fleet'), 'main', 'fleet', '', '', '', ${now}) RETURNING id`);
  await writePending(db, ssid, PENDING);
  const pending = () => unclaimed(db);
  say(`\n## A. Start with ${await pending()} pending requests and ${workers.length} PB workers retrying\n`);
  const loadA = load1();
  let firstBuildAt = 0;
  let cpuAtFirst = 0;
  let connectedAtFirst = 0;
  let runAt = 0;
  let startError: unknown;
  const starting = startMaster((p, at) => {
    proc = p;
    spawnedAt = at;
  }, START_LIMIT_S * 1000).then(
    (m) => {
      master = m;
      runAt = Date.now();
    },
    (err) => {
      startError = err;
    },
  );
  const firstBuild = waitFor(
    'the first build',
    async () => {
      if (firstBuildAt === 0 && (await builds()) > 0) {
        firstBuildAt = Date.now();
        cpuAtFirst = cpuSeconds(proc!.pid);
        connectedAtFirst = await connected(lastMaster);
      }
      return firstBuildAt > 0;
    },
    {
      timeoutMs: START_LIMIT_S * 1000,
      everyMs: 100,
      gaveUp: () => (startError ? `the master did not start: ${String(startError)}` : undefined),
    },
  ).catch((err: unknown) => err);
  const noBuild = await firstBuild;
  if (firstBuildAt === 0) {
    // The task's bound: a master that has not started a build in START_LIMIT_S is stopped.
    say(
      `no build started within ${START_LIMIT_S} s of the spawn (${runAt ? `"running" after ${seconds(runAt - spawnedAt)} s` : 'not "running" yet'}; its CPU ${cpuSeconds(proc!.pid).toFixed(1)} s; load average ${loadA}, ${load1()}): stopped there\n${String(noBuild)}`,
    );
    process.exitCode = 1;
    throw new Error('stopped at the start bound');
  }
  await starting;
  if (startError) throw startError;
  say(
    '| spawn to "BuildMaster is running" (s) | spawn to first build started (s) | its CPU by then (s) | workers connected then | load average (1 min) before, after |',
  );
  say('|---|---|---|---|---|');
  say(
    `| ${seconds(runAt - spawnedAt)} | ${seconds(firstBuildAt - spawnedAt)} | ${cpuAtFirst.toFixed(2)} | ${connectedAtFirst} | ${loadA}, ${load1()} |`,
  );
  // The shape works end to end: a build of the queue ran its step and succeeded.
  await waitFor(
    'a build to succeed',
    async () => (await count(sql`SELECT count(*) AS n FROM builds WHERE results = 0`)) > 0,
    {
      timeoutMs: 300_000,
      everyMs: 500,
      proc: proc!,
    },
  );

  // B. Throughput while the queue drains.
  const cpu0 = cpuSeconds(proc!.pid);
  const [s0, c0, t0, l0] = [await builds(), await completed(), Date.now(), load1()];
  await waitFor(
    'the drain window',
    async () => Date.now() - t0 >= DRAIN_SECONDS * 1000 || (await pending()) === 0,
    { timeoutMs: (DRAIN_SECONDS + 60) * 1000, everyMs: 1000, proc: proc! },
  );
  const [s1, c1, t1] = [await builds(), await completed(), Date.now()];
  const cpu = cpuSeconds(proc!.pid) - cpu0;
  const window = (t1 - t0) / 1000;
  say(
    `\n## B. Throughput over ${window.toFixed(1)} s of the drain, ${workers.length} PB workers (load average ${l0} before, ${load1()} after)\n`,
  );
  say(
    `builds started: ${s1 - s0} (${((s1 - s0) / window).toFixed(1)}/s); completed: ${c1 - c0} (${((c1 - c0) / window).toFixed(1)}/s)`,
  );
  say(
    `master CPU: ${cpu.toFixed(1)} s = ${(cpu / window).toFixed(2)} cores; ${((cpu * 1000) / Math.max(1, c1 - c0)).toFixed(1)} ms per completed build, ${((cpu * 1000) / Math.max(1, s1 - s0)).toFixed(1)} per started; master RSS now ${mib(rssKiB(proc!.pid))} MiB`,
  );
} finally {
  await Promise.all(workers.map((w) => w.stop('SIGTERM', 10_000)));
  await master?.stop();
  await proc?.stop('SIGTERM', 10_000);
  await db.dispose();
  rmSync(dir, { recursive: true, force: true });
}
