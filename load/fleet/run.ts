// The fleet scenario (issue 35 §1 items 1-4): MASTERS master processes (3) and two API
// processes on one PostgreSQL and one Redis, BUILDERS builders (1,000), WORKERS generated
// workers (1,000, load/fleet/workers.ts, all in this process) and PENDING pending requests
// (25,000). Phases, each printed as it ends:
//
//   0. cost of a connection: the masters started on an empty queue, their resident memory with
//      a tenth of the workers connected and with all of them; one forced build, end to end;
//   S. builds started a second with every worker idle and PENDING requests of builds held
//      running, until every worker slot is taken, and their cost per start (burst.ts);
//   A. start: the masters stopped, PENDING one-request build sets written straight into the
//      database (as 25,000 forces would leave them), then all masters started at once while
//      every worker connects: each master's time from its spawn to its first build started
//      (its `new` event: running, as Buildbot counts a build) and to its first command;
//  A2. then one master stopped and started again while the others drain the queue and its
//      workers reconnect to it (a rolling update): the same two times for it;
//   B. throughput: builds started and completed a second across the masters while the queue
//      drains (a window of DRAIN_SECONDS, or until it is empty), and master CPU per build;
//   C. latency: the rest of the queue cancelled, then the fleet_forces scenario of
//      load/scenarios.json (load/fleet/forces.ts, the twin of load/k6/fleet-forces.js)
//      through the two APIs (by turns) at 10 forces a second and at 80% of B's start rate,
//      each from its POST to its build's `new` event on the API's /ws: p50 and p99; API CPU
//      per force. Until 2026-11-28 the event was read on the bus itself (Redis), a relay
//      shorter: the figures of load/results/fleet.md before then were taken that way;
//   D. API CPU per request of two read classes (a collection, one entity).
//
//   load/fleet/run.sh        (starts PostgreSQL and Redis for it; see there)
//
// FLEET_HEAP=1 starts each master with --inspect on a free port of 127.0.0.1 and adds to phase
// 0 each master's heap after a full collection (memory.ts); FLEET_HEAP_SNAPSHOT=DIR (which implies
// it) also writes a heap snapshot of each master at both readings into DIR, for
// load/fleet/heap-classes.ts. STOP_AFTER=0 ends the run once phase 0 is printed.
//
// STOP_AFTER=A ends the run once phases A and A2 are printed (a start measured again, in a
// minute); STOP_AFTER=S once phase S is (the start rate again). S_ROUNDS (2) is how many
// bursts phase S runs on the same masters, each printed: the first on masters fresh from their
// start, the next on masters whose code has run 1,000 starts already. S_GAP_SECONDS (0) is a
// quiet time before each burst after the first, as between two pushes. STALL_SECONDS (120): a
// burst's wait that has not moved for that long gives up, printing what it saw (stall.ts).
// S_PGBENCH_SECONDS=N puts a round of pgbench.sh (PostgreSQL alone on a start's statements, N
// seconds at each of S_PGBENCH_CLIENTS, "2 3") before the first burst and after each, the fleet
// idle, and prints each warm burst against the better round beside it (pairs.ts): goal 2 taken
// in the same minutes as its limit.
//
// MASTER_LOG=DIR runs the masters at LOG_LEVEL=debug and writes each one's output into
// DIR/fleet-N.PID.log at the end: among it, the time each of its parts took to start
// (core/lifecycle/parts.ts, "part started"). Best with STOP_AFTER=A (a drain's debug lines are many).
//
// MASTER_CPU_PROF=DIR writes each master's CPU profile (node --cpu-prof) into DIR as it
// stops: the masters are then stopped with SIGTERM at the end, not killed, so that phases
// A-D's masters write theirs too (phase 0's are written when they stop before phase A).
// API_CPU_PROF=DIR does the same for the two APIs (stopped with SIGTERM at the end).
//
// MASTER_NODE_OPTIONS=... adds node options to the masters' (a V8 flag under trial, say).
//
// FLEET_BUILD=files runs the services from a file-by-file build (esbuild, no maps: what the
// image ran before deploy/bundle.ts) instead of the image's bundles, to compare the two.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createPool, sql } from '../../services/core/db/pool.js';
import { EVENTS_LOST_KEY, publish } from '../../services/core/events/bus.js';
import { type ApiProcess, apiProcess } from '../../test/helpers/api.js';
import { freePort, type Running, startService, status } from '../../test/helpers/processes.js';
import { buildServices, SERVICES_BUILD_ENV } from '../../test/helpers/service-build.js';
import { waitFor } from '../../test/helpers/wait.js';
import { forceOneRequest } from '../force.js';
import { loadScenarios } from '../scenario.js';
import { BurstClock, startBurst } from './burst.js';
import {
  builderName,
  type FleetShape,
  FORCE_SCHEDULER,
  fleetYaml,
  masterOf,
  WORKER_PASSWORD,
  workerName,
} from './config.js';
import { claimPasses, postgresCpuSeconds, redisCpuSeconds } from './costs.js';
import { listenBuildsStarted } from './first-started.js';
import { fleetForces } from './forces.js';
import { memoryTable, readMemory } from './memory.js';
import { best, pairLines, pairsConfig, pgbenchRound, quiet, seedPgbench } from './pairs.js';
import { pgWindow } from './pg-window.js';
import { cpuSeconds, rssKiB } from './procstat.js';
import { cancelUnclaimed, unclaimed, writePending } from './queue.js';
import { WorkerFleet } from './workers.js';

const shape: FleetShape = {
  builders: Number(process.env.BUILDERS ?? 1000),
  workers: Number(process.env.WORKERS ?? 1000),
  masters: Number(process.env.MASTERS ?? 3),
};
const PENDING = Number(process.env.PENDING ?? 25_000);
const DRAIN_SECONDS = Number(process.env.DRAIN_SECONDS ?? 60);
const PROFILE_DIR = process.env.MASTER_CPU_PROF;
const API_PROFILE_DIR = process.env.API_CPU_PROF;
const LOG_DIR = process.env.MASTER_LOG;
const MASTER_NODE_OPTIONS = process.env.MASTER_NODE_OPTIONS;
const LATENCY_SECONDS = Number(process.env.LATENCY_SECONDS ?? 30);
const STOP_AFTER = process.env.STOP_AFTER;
const S_ROUNDS = Number(process.env.S_ROUNDS ?? 2);
const HEAP_SNAPSHOTS = process.env.FLEET_HEAP_SNAPSHOT;
const HEAP = process.env.FLEET_HEAP === '1' || HEAP_SNAPSHOTS !== undefined;
// S_GAP_SECONDS: a quiet time before each burst after the first, to see what a lull undoes
// (a pool closes a connection idle 30 s; the masters' own periodic statements kept all thirty
// of theirs open over 150 s: load/results/fleet.md, 2026-11-29 08:20-08:58).
const S_GAP_SECONDS = Number(process.env.S_GAP_SECONDS ?? 0);
/** Thrown once the phase STOP_AFTER names is printed: the rest is skipped, the clean-up runs. */
const STOPPED = new Error(`stopped after phase ${STOP_AFTER}`);
const dbUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!dbUrl || !redisUrl) throw new Error('set DATABASE_URL and REDIS_URL (load/fleet/run.sh does)');

const say = (line: string) => console.log(line);
const load1 = () => loadavg()[0]!.toFixed(1);
const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : Number.NaN;
const seconds = (ms: number) => (ms / 1000).toFixed(2);

interface MasterRun {
  index: number;
  proc: Running;
  spawnedAt: number;
  workerPort: number;
  probePort: number;
  inspectPort?: number;
}

const dir = mkdtempSync(join(tmpdir(), 'flotilla-fleet-'));
const config = join(dir, 'master.yaml');
writeFileSync(config, fleetYaml(shape));
// The services as the image runs them: its bundles (deploy/bundle.ts), no source maps, no
// --enable-source-maps (the suite's build carries both, for its stack traces, at 0.1 s more of
// a master's start CPU).
process.env[SERVICES_BUILD_ENV] = await buildServices(
  process.env.FLEET_BUILD === 'files' ? { sourceMaps: false } : { bundled: true },
);
const db = createPool(dbUrl, { poolSize: 2 });
const running: Running[] = [];
const profiled: Running[] = [];
const logged: { name: string; proc: Running }[] = [];
const apis: ApiProcess[] = [];
const workerPorts = await Promise.all(Array.from({ length: shape.masters }, () => freePort()));

async function startMaster(i: number): Promise<MasterRun> {
  const probePort = await freePort();
  const inspectPort = HEAP ? await freePort() : undefined;
  const nodeOptions = [
    ...(MASTER_NODE_OPTIONS ? [MASTER_NODE_OPTIONS] : []),
    ...(PROFILE_DIR ? [`--cpu-prof --cpu-prof-dir=${PROFILE_DIR}`] : []),
    ...(inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : []),
  ].join(' ');
  const spawnedAt = Date.now();
  const proc = startService('master', {
    DATABASE_URL: dbUrl!,
    REDIS_URL: redisUrl!,
    MASTER_CONFIG: config,
    MASTER_NAME: `fleet-${i + 1}`,
    WORKER_PORT: String(workerPorts[i]),
    PROBE_PORT: String(probePort),
    LOG_LEVEL: LOG_DIR ? 'debug' : 'warn',
    ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
  });
  running.push(proc);
  if (PROFILE_DIR) profiled.push(proc);
  if (LOG_DIR) logged.push({ name: `fleet-${i + 1}`, proc });
  return {
    index: i,
    proc,
    spawnedAt,
    workerPort: workerPorts[i]!,
    probePort,
    ...(inspectPort ? { inspectPort } : {}),
  };
}

/** A process's CPU seconds, NaN once it has exited (a master stopped before A2). */
function cpuIfRunning(pid: number): number {
  try {
    return cpuSeconds(pid);
  } catch {
    return Number.NaN;
  }
}

/** Each master's id by its index in the fleet (its name is fleet-N, index N - 1). */
async function masterIds(): Promise<Map<number, number>> {
  const rows = (await db.query(sql`SELECT id, name FROM masters`)) as { id: number; name: string }[];
  const ids = new Map<number, number>();
  for (const { id, name } of rows) {
    const n = /^fleet-(\d+)$/.exec(name)?.[1];
    if (n) ids.set(Number(n) - 1, id);
  }
  return ids;
}

async function startMasters(): Promise<MasterRun[]> {
  const ms: MasterRun[] = [];
  for (let i = 0; i < shape.masters; i++) ms.push(await startMaster(i));
  return ms;
}

async function ready(ms: MasterRun[], cpuAt: Record<number, number> = {}): Promise<Record<number, number>> {
  const at: Record<number, number> = {};
  await Promise.all(
    ms.map((m) =>
      waitFor(
        `master ${m.index + 1} ready`,
        async () => {
          const ok = (await status(`http://127.0.0.1:${m.probePort}/readyz`)) === 200;
          if (ok) {
            at[m.index] = Date.now();
            cpuAt[m.index] = cpuSeconds(m.proc.pid);
          }
          return ok;
        },
        { timeoutMs: 600_000, everyMs: 20, proc: m.proc },
      ),
    ),
  );
  return at;
}

function fleet(onCommand?: (master: number, atMs: number) => void): WorkerFleet {
  const byName = new Map<string, number>();
  const workers = Array.from({ length: shape.workers }, (_, w) => {
    byName.set(workerName(w), masterOf(w, shape));
    return {
      name: workerName(w),
      password: WORKER_PASSWORD,
      url: `ws://127.0.0.1:${workerPorts[masterOf(w, shape)]}/worker`,
    };
  });
  return new WorkerFleet({
    workers,
    basedir: join(dir, 'workers'),
    env: { PATH: '/usr/bin:/bin' },
    ...(onCommand ? { onCommand: (name, _r, atMs) => onCommand(byName.get(name)!, atMs) } : {}),
  });
}

async function stopMasters(ms: MasterRun[]): Promise<void> {
  await Promise.all(ms.map((m) => m.proc.stop('SIGTERM', 60_000)));
}

async function count(q: ReturnType<typeof sql>): Promise<number> {
  const [row] = await db.query(q);
  return Number(row.n);
}

const force = (api: ApiProcess, builder: string): Promise<number> =>
  forceOneRequest(api.base, FORCE_SCHEDULER, {
    username: 'fleet <fleet@example.com>',
    builderNames: [builder],
  });

try {
  for (let i = 0; i < 2; i++)
    apis.push(
      await apiProcess({
        databaseUrl: dbUrl,
        redisUrl,
        config,
        readyMs: 300_000,
        ...(API_PROFILE_DIR ? { env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${API_PROFILE_DIR}` } } : {}),
      }),
    );
  running.push(...apis.map((a) => a.proc));
  if (API_PROFILE_DIR) profiled.push(...apis.map((a) => a.proc));
  say(
    `Flotilla fleet: ${shape.masters} masters, 2 APIs, ${shape.builders} builders, ${shape.workers} generated workers, ${PENDING} pending; load average (1 min) at start ${load1()}\n`,
  );

  // 0. Memory per connected worker, on an empty queue; one build end to end.
  // A tenth of the workers first, and the masters' memory read with them: what a master
  // loads and compiles at its first logins (the modules its first use imports) is then in
  // both readings, and the difference is the other nine tenths' (2026-11-29 07:10: read from
  // before any worker, it showed 39-58 KiB a worker once modules were loaded on first use).
  let masters = await startMasters();
  await ready(masters);
  const clock = new BurstClock();
  let workers = fleet((_m, at) => clock.command(at));
  const first = Math.ceil(shape.workers / 10);
  workers.start(first);
  await waitFor('a tenth of the workers connected', () => workers.connected === first, {
    timeoutMs: 300_000,
  });
  const measured = masters.map((m) => ({ index: m.index, pid: m.proc.pid, inspectPort: m.inspectPort }));
  if (HEAP_SNAPSHOTS) mkdirSync(HEAP_SNAPSHOTS, { recursive: true });
  const memBefore = await readMemory(measured, 'tenth', HEAP_SNAPSHOTS);
  workers.start();
  await waitFor('every worker connected', () => workers.connected === shape.workers, { timeoutMs: 300_000 });
  // Each master has written its workers' rows as connected: the API lists them so.
  await waitFor(
    'the API to list every worker connected',
    async () => {
      const res = await fetch(`${apis[0]!.base}/workers?field=connected_to&limit=100000`);
      const list = ((await res.json()) as { workers: { connected_to: unknown[] }[] }).workers;
      return list.filter((w) => w.connected_to.length > 0).length === shape.workers;
    },
    { timeoutMs: 300_000, everyMs: 500 },
  );
  const memAfter = await readMemory(measured, 'all', HEAP_SNAPSHOTS);
  say('## 0. Memory per connected worker (empty queue)\n');
  // Worker w is master (w mod masters)'s (config.ts): its count among the first and in all.
  const on = (m: number, of: number) => Math.ceil((of - m) / shape.masters);
  const workersOf = (m: number) => ({ all: on(m, shape.workers), rest: on(m, shape.workers) - on(m, first) });
  for (const line of memoryTable(measured, memBefore, memAfter, workersOf)) say(line);
  const checkBrid = await force(apis[0]!, builderName(0));
  await waitFor(
    'the check build',
    async () =>
      (await count(
        sql`SELECT count(*) AS n FROM buildrequests WHERE id = ${checkBrid} AND complete = 1 AND results = 0`,
      )) === 1,
  );
  say(`\none forced build ran and succeeded (request ${checkBrid}); load average ${load1()}\n`);
  if (STOP_AFTER === '0') {
    await workers.close();
    throw STOPPED;
  }
  const [{ ssid }] = await db.query(sql`
    SELECT sourcestampid AS ssid FROM buildset_sourcestamps bs JOIN buildrequests br ON br.buildsetid = bs.buildsetid
    WHERE br.id = ${checkBrid}`);

  // The APIs' CPU with the fleet up and nothing happening (API_IDLE_SECONDS, 10): S's figures
  // per start include it. A measured window, not a wait for a condition.
  const idleSeconds = Number(process.env.API_IDLE_SECONDS ?? 10);
  const idle0 = apis.map((a) => cpuSeconds(a.pid));
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const idleMs = apis.map((a, i) => (((cpuSeconds(a.pid) - idle0[i]!) * 1000) / idleSeconds).toFixed(1));
  say(`the APIs idle, fleet up: ${idleMs.join(', ')} ms of CPU a second; load average ${load1()}\n`);

  // S. Builds started a second, every worker idle and the queue full: S_ROUNDS bursts on the
  // same masters, each printed. The first meets masters that have run one build since their
  // start, so its JavaScript is still being compiled and optimized as it goes; the later ones
  // meet them as a master that has run for a while is (load/results/fleet.md, 2026-11-29 06:10).
  // With S_PGBENCH_SECONDS, each burst between two rounds of PostgreSQL alone (pairs.ts).
  const pairs = pairsConfig(process.env, S_ROUNDS);
  const [rates, limits]: [number[], number[]] = [[], []];
  const fleetPids = () => [...masters.map((m) => m.proc.pid), ...apis.map((a) => a.proc.pid)];
  const quietly = async () => {
    const took = await quiet(db, fleetPids());
    return took === null ? 'not quiet within 180 s' : `quiet after ${took.toFixed(0)} s`;
  };
  const limitRound = async () => {
    const waited = await quietly();
    const r = await pgbenchRound(pairs!);
    limits.push(best(r));
    say(
      `pgbench alone, the fleet idle (${waited}): ${r
        .map((x) => `${x.clients} clients ${x.tps.toFixed(1)}/s (PostgreSQL ${x.pgMs ?? '?'} ms a start)`)
        .join(', ')}; load average ${load1()}\n`,
    );
  };
  if (pairs) {
    await seedPgbench(pairs);
    await limitRound();
  }
  const wakeRedis = new Redis(redisUrl);
  for (let round = 1; round <= S_ROUNDS; round++) {
    if (round > 1 && S_GAP_SECONDS > 0) {
      say(`(${S_GAP_SECONDS} s with nothing to start)\n`);
      await new Promise((resolve) => setTimeout(resolve, S_GAP_SECONDS * 1000));
    }
    // Every burst, paired or not, after the last one's aftermath: its builds' ends are waited
    // for (burst.ts), but the masters compress their logs after, in BullMQ's compress-log jobs
    // (7% of a master's busy samples in a window of phase S, profiled 2026-11-29 11:00).
    say(`(before burst ${round}: ${await quietly()})`);
    const rate = await startBurst(
      {
        round: `${round} of ${S_ROUNDS}`,
        db,
        redisUrl,
        masters: masters.map((m) => ({ pid: m.proc.pid, probePort: m.probePort })),
        apis: apis.map((a) => ({ pid: a.proc.pid })),
        workers,
        slots: shape.workers, // one slot each (config.ts)
        sourcestampId: ssid,
        pending: PENDING,
        // The requests were written without their events (queue.ts), as when events are
        // lost: the mark of events lost wakes each master to a pass over every builder, as its
        // start or a worker's connection does. Until 2026-11-29 23:30 a force's event woke them
        // so; since, a request's event wakes a pass over its own builder alone (distributor.ts).
        wake: () => publish(wakeRedis, EVENTS_LOST_KEY.split('/'), { lost: PENDING }),
        say,
      },
      clock,
    );
    rates.push(rate);
    if (pairs) await limitRound();
  }
  wakeRedis.disconnect();
  if (pairs) for (const line of pairLines(rates, limits)) say(line);
  if (STOP_AFTER === 'S') {
    await workers.close();
    throw STOPPED;
  }
  await workers.close();
  await stopMasters(masters);

  // A. Start with PENDING requests waiting.
  await writePending(db, ssid, PENDING);
  const pending = () => unclaimed(db);
  say(`## A. Start with ${await pending()} pending requests\n`);
  let firstCommand: Record<number, number> = {};
  // CPU seconds a master had spent when its first command came: what its start costs, apart
  // from the wait for a core that a busy machine adds to the wall time.
  let cpuAtFirst: Record<number, number> = {};
  const loadA = load1();
  // Each master's first build started (its `new` event), with every master's CPU then: which
  // master it was is known by id only once they have registered (masterIds).
  const firstStarted = new Map<number, { at: number; cpu: number[] }>();
  const stopListening = await listenBuildsStarted(redisUrl!, (masterid, at) => {
    if (!firstStarted.has(masterid))
      firstStarted.set(masterid, { at, cpu: masters.map((m) => cpuIfRunning(m.proc.pid)) });
  });
  masters = await startMasters();
  workers = fleet((m, at) => {
    if (firstCommand[m] !== undefined) return;
    firstCommand[m] = at;
    cpuAtFirst[m] = cpuSeconds(masters[m]!.proc.pid);
  });
  workers.start();
  // Readiness is not waited for: a master draining a full queue answered /readyz 503 for
  // minutes (its database check queued behind the builds' statements, 2026-11-28 18:15).
  const readyAt: Record<number, number> = {};
  const cpuAtReady: Record<number, number> = {};
  void ready(masters, cpuAtReady).then(
    (at) => Object.assign(readyAt, at),
    () => {},
  );
  await waitFor('a build on every master', () => Object.keys(firstCommand).length === shape.masters, {
    timeoutMs: 600_000,
    everyMs: 20,
  });
  await waitFor('a build started on every master', () => firstStarted.size >= shape.masters, {
    timeoutMs: 60_000,
    everyMs: 20,
  });
  const ids = await masterIds();
  const started = (index: number) => {
    const first = firstStarted.get(ids.get(index)!)!;
    return { at: first.at, cpu: first.cpu[index]! };
  };
  say(
    '| master | spawn to ready (s) | its CPU by then (s) | spawn to its first build started (s) | its CPU by then (s) | spawn to first command on a worker (s) | its CPU by then (s) | load average (1 min) before, after |',
  );
  say('|---|---|---|---|---|---|---|---|');
  for (const m of masters)
    say(
      `| fleet-${m.index + 1} | ${readyAt[m.index] ? seconds(readyAt[m.index]! - m.spawnedAt) : 'not yet'} | ${cpuAtReady[m.index]?.toFixed(2) ?? '-'} | ${seconds(started(m.index).at - m.spawnedAt)} | ${started(m.index).cpu.toFixed(2)} | ${seconds(firstCommand[m.index]! - m.spawnedAt)} | ${cpuAtFirst[m.index]!.toFixed(2)} | ${loadA}, ${load1()} |`,
    );

  // A2. One master restarted while the others run, as a rolling update does (in production
  // each master is a pod on its own node): fleet-1 stopped (SIGTERM, its builds drained),
  // then started again on the same worker port while the queue is still full; its workers,
  // retrying as the agent does, log in again as soon as the port is open.
  // Its stop is waited for to the end (the drain, 60 s by default, and the shutdown's margin):
  // one killed at 60 s (2026-11-29 01:28, its 334 starting builds still draining) came back as
  // a master that had not stopped: it waited out the lost-master bound (20 s) and cleaned up first.
  const stopping = Date.now();
  await masters[0]!.proc.stop('SIGTERM', 150_000);
  const stopSeconds = seconds(Date.now() - stopping);
  const loadA2 = load1();
  // Only fleet-1's next first command is recorded: the others count as having had theirs.
  [firstCommand, cpuAtFirst] = [{}, {}];
  for (const other of masters.slice(1)) firstCommand[other.index] = 0;
  firstStarted.clear();
  const othersCpu0 = masters.slice(1).map((m) => cpuSeconds(m.proc.pid));
  masters[0] = await startMaster(0);
  const restarted = masters[0];
  const [restartReady, restartCpuReady]: [Record<number, number>, Record<number, number>] = [{}, {}];
  void ready([restarted], restartCpuReady).then(
    (at) => Object.assign(restartReady, at),
    () => {},
  );
  await waitFor('a build on the restarted master', () => firstCommand[0] !== undefined, {
    timeoutMs: 600_000,
    everyMs: 20,
  });
  // The others' builds go on starting: the restarted master's own first is the one wanted.
  const restartedId = (await masterIds()).get(0)!;
  await waitFor('a build started on the restarted master', () => firstStarted.has(restartedId), {
    timeoutMs: 60_000,
    everyMs: 20,
  });
  const restartStarted = {
    at: firstStarted.get(restartedId)!.at,
    cpu: firstStarted.get(restartedId)!.cpu[0]!,
  };
  stopListening();
  const othersCpu = masters.slice(1).map((m, i) => cpuSeconds(m.proc.pid) - othersCpu0[i]!);
  say(
    `\n## A2. fleet-1 restarted while the other ${shape.masters - 1} drain the queue (${await pending()} pending; its stop took ${stopSeconds} s)\n`,
  );
  say(
    "| master | spawn to ready (s) | its CPU by then (s) | spawn to its first build started (s) | its CPU by then (s) | spawn to first command on a worker (s) | its CPU by then (s) | the others' CPU meanwhile (s) | load average (1 min) before, after |",
  );
  say('|---|---|---|---|---|---|---|---|---|');
  say(
    `| fleet-1 | ${restartReady[0] ? seconds(restartReady[0] - restarted.spawnedAt) : 'not yet'} | ${restartCpuReady[0]?.toFixed(2) ?? '-'} | ${seconds(restartStarted.at - restarted.spawnedAt)} | ${restartStarted.cpu.toFixed(2)} | ${seconds(firstCommand[0]! - restarted.spawnedAt)} | ${cpuAtFirst[0]!.toFixed(2)} | ${othersCpu.map((c) => c.toFixed(2)).join(' + ')} | ${loadA2}, ${load1()} |`,
  );
  if (STOP_AFTER === 'A') {
    await workers.close();
    throw STOPPED;
  }

  // B. Throughput while the queue drains.
  const builds = () => count(sql`SELECT count(*) AS n FROM builds`);
  const completed = () => count(sql`SELECT count(*) AS n FROM builds WHERE complete_at IS NOT NULL`);
  const redis = new Redis(redisUrl);
  // Everything else the machine spends on a build, read at both ends of the window.
  const others = async () => ({
    apis: apis.reduce((sum, a) => sum + cpuSeconds(a.proc.pid), 0),
    runner: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    postgres: await postgresCpuSeconds(db),
    redis: await redisCpuSeconds(redis),
  });
  const passes = () => Promise.all(masters.map((m) => claimPasses(m.probePort)));
  const [cpu0, others0, passes0] = [
    masters.map((m) => cpuSeconds(m.proc.pid)),
    await others(),
    await passes(),
  ];
  const statements = await pgWindow(db);
  const [s0, c0, t0, l0] = [await builds(), await completed(), Date.now(), load1()];
  await waitFor(
    'the drain window',
    async () => Date.now() - t0 >= DRAIN_SECONDS * 1000 || (await pending()) === 0,
    {
      timeoutMs: (DRAIN_SECONDS + 60) * 1000,
      everyMs: 1000,
    },
  );
  const [s1, c1, t1] = [await builds(), await completed(), Date.now()];
  const cpu = masters.map((m, i) => cpuSeconds(m.proc.pid) - cpu0[i]!);
  const [others1, passes1] = [await others(), await passes()];
  redis.disconnect();
  const window = (t1 - t0) / 1000;
  const endStatements = statements && (async () => (await statements())(c1 - c0, say));
  const startRate = (s1 - s0) / window;
  say(
    `\n## B. Throughput over ${window.toFixed(1)} s of the drain (load average ${l0} before, ${load1()} after)\n`,
  );
  say(
    `builds started: ${s1 - s0} (${startRate.toFixed(1)}/s); completed: ${c1 - c0} (${((c1 - c0) / window).toFixed(1)}/s)`,
  );
  say(
    `master CPU: ${cpu.map((c) => c.toFixed(1)).join(' + ')} s = ${(cpu.reduce((a, b) => a + b, 0) / window).toFixed(2)} cores; ` +
      `${((cpu.reduce((a, b) => a + b, 0) * 1000) / Math.max(1, c1 - c0)).toFixed(1)} ms per completed build`,
  );
  say(`master RSS now: ${masters.map((m) => (rssKiB(m.proc.pid) / 1024).toFixed(0)).join(', ')} MiB`);
  const perBuild = (seconds: number) => `${((seconds * 1000) / Math.max(1, c1 - c0)).toFixed(1)} ms`;
  say(
    `CPU per completed build beside the masters': ${(Object.keys(others1) as (keyof typeof others1)[])
      .map((k) => `${k} ${perBuild(others1[k] - others0[k])}`)
      .join(', ')} (the runner: the 1,000 generated workers and this measurement)`,
  );
  const passCount = passes1.reduce((n, p, i) => n + p.count - passes0[i]!.count, 0);
  const passSeconds = passes1.reduce((n, p, i) => n + p.seconds - passes0[i]!.seconds, 0);
  say(
    `claim passes: ${passCount} (${(passCount / window).toFixed(1)}/s across the masters), ` +
      `${((passSeconds * 1000) / Math.max(1, passCount)).toFixed(0)} ms each on average, ` +
      `${((s1 - s0) / Math.max(1, passCount)).toFixed(1)} builds started a pass`,
  );
  await endStatements?.();

  // C. Latency, request to build, on an empty queue.
  await cancelUnclaimed(db);
  await waitFor('no build running', async () => (await builds()) === (await completed()), {
    timeoutMs: 300_000,
  });
  // The fleet_forces scenario of scenarios.json (load/k6/fleet-forces.js; here its twin,
  // load/fleet/forces.ts), through the two APIs by turns; every forced build must start.
  const forcesSpec = loadScenarios();
  say(
    `\n## C. Request submitted (force POST) to build started (its builds/N/new event on the API's /ws), ${LATENCY_SECONDS} s each\n`,
  );
  say(
    "| rate (forces/s) | requests | p50 (ms) | p99 (ms) | max (ms) | API CPU per force (ms) | masters' CPU per force (ms) | PostgreSQL CPU per force (ms) | load average (1 min) |",
  );
  say('|---|---|---|---|---|---|---|---|---|');
  // PostgreSQL's statements at the steady 10 a second, printed after the table (pg-window.ts).
  let steadyStatements: (() => Promise<void>) | undefined;
  for (const rate of [10, Math.max(10, Math.round(startRate * 0.8))]) {
    const apiCpu0 = apis.map((a) => cpuSeconds(a.pid));
    const statementsWindow = rate === 10 && !steadyStatements ? await pgWindow(db) : null;
    // At a steady rate, what the masters and PostgreSQL spend on a build (forced, run, ended):
    // the pool's order of connections shows here, where few statements run at once.
    const [masterCpu0, pgCpu0] = [masters.map((m) => cpuSeconds(m.proc.pid)), await postgresCpuSeconds(db)];
    const sc = {
      ...forcesSpec.scenarios.fleet_forces!,
      rate,
      duration: `${LATENCY_SECONDS}s`,
      scheduler: FORCE_SCHEDULER,
      startTimeout: '300s',
    };
    const m = await fleetForces(
      sc,
      apis.map((a) => a.base),
      forcesSpec.headers,
    );
    const [failed, dropped] = [m.build_start_failed!, m.dropped_iterations!];
    if (failed.kind !== 'rate' || failed.passes > 0 || (dropped.kind === 'counter' && dropped.count > 0))
      throw new Error(`at ${rate} forces/s: ${JSON.stringify({ failed, dropped })}`);
    const apiCpu = apis.reduce((sum, a, i) => sum + cpuSeconds(a.pid) - apiCpu0[i]!, 0);
    const masterCpu = masters.reduce((sum, m, i) => sum + cpuSeconds(m.proc.pid) - masterCpu0[i]!, 0);
    const pgCpu = (await postgresCpuSeconds(db)) - pgCpu0;
    const perForce = (seconds: number) => ((seconds * 1000) / failed.total).toFixed(1);
    if (statementsWindow) {
      const print = await statementsWindow();
      steadyStatements = async () => print(failed.total, say);
    }
    const lat = m.build_start!.kind === 'trend' ? [...m.build_start!.samples].sort((a, b) => a - b) : [];
    say(
      `| ${rate} | ${failed.total} | ${pct(lat, 50)} | ${pct(lat, 99)} | ${lat.at(-1)} | ${perForce(apiCpu)} | ${perForce(masterCpu)} | ${perForce(pgCpu)} | ${load1()} |`,
    );
    await waitFor('no build running', async () => (await builds()) === (await completed()), {
      timeoutMs: 300_000,
    });
  }

  if (steadyStatements) {
    say('\nPostgreSQL at 10 forces a second, per forced build:');
    await steadyStatements();
  }

  // D. API CPU per read, by route class.
  say('\n## D. API CPU per request by route class (one API, 8 at a time)\n');
  say('| route class | path | requests | refused (429) | API CPU per request (ms) | load average (1 min) |');
  say('|---|---|---|---|---|---|');
  const [{ id: someBuild }] = await db.query(sql`SELECT max(id) AS id FROM builds`);
  const READS = 2000;
  for (const [cls, path] of [
    ['collection', '/builds?order=-buildid&limit=50'],
    ['entity', `/builds/${someBuild}`],
    ['collection, filtered', `/builders/${1 + (someBuild % shape.builders)}/builds?limit=50`],
  ] as const) {
    const api = apis[0]!;
    const c0 = cpuSeconds(api.pid);
    let next = 0;
    let refused = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next++ < READS) {
          const res = await fetch(api.base + path, { headers: { accept: 'application/json' } });
          // The API's rate limit answered 429 to the third class once (18:26): counted, not fatal.
          if (res.status === 429) refused++;
          else if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
          await res.arrayBuffer();
        }
      }),
    );
    say(
      `| ${cls} | ${path} | ${READS} | ${refused} | ${(((cpuSeconds(api.pid) - c0) * 1000) / READS).toFixed(2)} | ${load1()} |`,
    );
  }
  await workers.close();
} catch (err) {
  if (err !== STOPPED) throw err;
} finally {
  await Promise.all(profiled.map((p) => p.stop('SIGTERM', 60_000)));
  await Promise.all(running.map((p) => p.stop('SIGKILL')));
  // Made here rather than asked of the caller: a missing directory lost a whole run's logs.
  if (LOG_DIR) mkdirSync(LOG_DIR, { recursive: true });
  for (const { name, proc } of logged)
    writeFileSync(join(LOG_DIR!, `${name}.${proc.pid}.log`), proc.output());
  await db.dispose();
  rmSync(process.env[SERVICES_BUILD_ENV]!, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}
