// Phase S of the fleet run (run.ts): builds STARTED a second with nothing else competing, the
// measure issue 35 §1 item 2 asks for ("builds started per second across the masters while
// 1,000 idle workers wait and requests are pending"). The drain (phase B) runs short builds,
// whose steps, logs and ends cost most of the machine's CPU, so its start rate is not what a
// start costs; pgbench (pgbench.sh) measures a start's writes alone.
//
// Here every worker is connected and idle, the masters run on an empty queue; PENDING
// requests are written into the database without their events, then the mark of events lost
// wakes the masters to a pass over every builder (run.ts says why). Every build's command is held by the generated workers (workers.ts'
// `holding`: a step running longer than the window), so each worker slot, once taken, stays
// taken. A build has started when its `builds/N/new` event is on the bus (its row and
// properties committed, as phase C counts it); the window runs from the first such event to
// the last slot's command on a worker (what follows a build's row until then, the
// worker_preparation step and the step's first rows, is in the window and its costs). Over
// it: starts a second, and per start the masters' CPU, PostgreSQL's (the whole cluster), the
// APIs', Redis's and this process's (the generated workers and the listener timing the starts), and
// the statements PostgreSQL ran (pg_stat_statements, when the bench cluster loads it:
// load/results/fleet.md says how).
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import type { ConnectionPool } from '../../services/core/db/pool.js';
import { sql } from '../../services/core/db/pool.js';
import { waitFor } from '../../test/helpers/wait.js';
import { claimPasses, postgresCpuSeconds, redisCpuSeconds, redisTraffic } from './costs.js';
import { listenBuildsStarted } from './first-started.js';
import { oneLine, statements, statementsBetween } from './pg-statements.js';
import { cpuSeconds, threadCpuSeconds } from './procstat.js';
import { cancelUnclaimed, writePending } from './queue.js';
import { fleetState, stallGuard } from './stall.js';
import type { WorkerFleet } from './workers.js';

export interface BurstInput {
  /** Which burst this is, as printed ("1 of 2"). */
  round: string;
  db: ConnectionPool;
  redisUrl: string;
  masters: readonly { pid: number; probePort: number }[];
  /** The API processes: what they spend on a start (hearing its events and notices) is printed too. */
  apis: readonly { pid: number }[];
  workers: WorkerFleet;
  /** Worker slots in all: the starts that fill them. */
  slots: number;
  sourcestampId: number;
  pending: number;
  /** Wakes the masters (a force through the API). */
  wake: () => Promise<unknown>;
  say: (line: string) => void;
}

const load1 = () => loadavg()[0]!.toFixed(1);

/** The masters' pooled connections now (their probes' own apart), with when each opened. */
async function masterConnections(db: ConnectionPool) {
  const rows = await db.query(sql`
    SELECT now() AS at, coalesce(array_agg(backend_start), '{}') AS starts FROM pg_stat_activity
    WHERE datname = current_database() AND application_name LIKE 'flotilla-master %'
      AND application_name NOT LIKE '% probes'`);
  const { at, starts } = rows[0] as { at: Date; starts: Date[] };
  return {
    at,
    open: starts.length,
    openedSince: (t: Date) => starts.filter((s) => s > t).length,
  };
}

/** The masters' CPU seconds so far by thread kind, summed over the masters. */
function mastersThreads(masters: readonly { pid: number }[]): Map<string, number> {
  const sum = new Map<string, number>();
  for (const m of masters)
    for (const [kind, s] of threadCpuSeconds(m.pid)) sum.set(kind, (sum.get(kind) ?? 0) + s);
  return sum;
}

/** The command times the burst sees; run.ts's fleet calls `command` for every command. */
export class BurstClock {
  private times: number[] | null = null;
  command(atMs: number): void {
    this.times?.push(atMs);
  }
  begin(): void {
    this.times = [];
  }
  get count(): number {
    return this.times?.length ?? 0;
  }
  end(): number[] {
    const t = this.times ?? [];
    this.times = null;
    return t;
  }
}

/** Resolves with the burst's builds started a second (printed among its lines). */
export async function startBurst(input: BurstInput, clock: BurstClock): Promise<number> {
  const { db, masters, workers, say } = input;
  input.workers.holding = true;
  // Counted from the queue's first moment: a master's periodic pass (every 10 s) may find it
  // before the wake below and start builds then, which a clock begun at the wake never counted
  // (its wait for every slot then stalled: 2026-11-29 09:54, 965 of 1,000 counted).
  clock.begin();
  await writePending(db, input.sourcestampId, input.pending);
  // Redis's own CPU (its INFO), asked on a connection of its own: the one below subscribes.
  const bus = new Redis(input.redisUrl);
  const cpu = async () => ({
    masters: masters.reduce((n, m) => n + cpuSeconds(m.pid), 0),
    postgres: await postgresCpuSeconds(db),
    apis: input.apis.reduce((n, a) => n + cpuSeconds(a.pid), 0),
    redis: await redisCpuSeconds(bus),
    traffic: await redisTraffic(bus),
    runner: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    threads: mastersThreads(masters),
    passes: (await Promise.all(masters.map((m) => claimPasses(m.probePort)))).reduce(
      (n, p) => n + p.count,
      0,
    ),
  });
  const rows = async () => Number((await db.query(sql`SELECT count(*) AS n FROM builds`))[0].n);
  const [rows0, s0, cpu0, l0, conns0] = [
    await rows(),
    await statements(db),
    await cpu(),
    load1(),
    await masterConnections(db),
  ];
  // Each build's `new` event as it reaches this process: on the masters' channel, a kind they
  // act on (services/core/events/master-kinds.ts), so this listener costs Redis what a fourth
  // master would.
  const started: number[] = [];
  const stopListening = await listenBuildsStarted(input.redisUrl, (_masterid, at) => started.push(at));
  const t0 = performance.timeOrigin + performance.now();
  await input.wake();
  const state = () =>
    fleetState(
      db,
      workers,
      masters.map((m) => m.probePort),
    );
  const slots = stallGuard(() => clock.count, state);
  await waitFor(
    'every worker slot taken',
    async () => {
      await slots.moved();
      return clock.count >= input.slots;
    },
    { timeoutMs: 600_000, everyMs: 20, gaveUp: slots.gaveUp },
  );
  const times = clock.end();
  const [cpu1, s1, rows1, conns1] = [
    await cpu(),
    await statements(db),
    await rows(),
    await masterConnections(db),
  ];
  stopListening();
  bus.disconnect();
  const n = times.length;
  const window = (times[n - 1]! - started[0]!) / 1000;
  say(
    `## S (${input.round}). Builds started with ${input.slots} idle worker slots and ${input.pending} pending, every build held running (load average ${l0} before, ${load1()} after)\n`,
  );
  say(
    `wake to the first build's new event ${((started[0]! - t0) / 1000).toFixed(2)} s, to its first command ${((times[0]! - t0) / 1000).toFixed(2)} s; ` +
      `${n} builds over ${window.toFixed(2)} s from the first new event to the last slot's command: **${(n / window).toFixed(1)} builds started/s** ` +
      `(new events alone, first to last: ${started.length} in ${((started.at(-1)! - started[0]!) / 1000).toFixed(2)} s)`,
  );
  say(`build rows written meanwhile: ${rows1 - rows0} (a command is a build's: one \`true\` step each)`);
  const early = times.filter((t) => t < t0).length;
  if (early)
    say(
      `${early} of them started before the wake (a master's periodic pass found the queue first): ` +
        'their cost before it is not in the figures below, their commands are',
    );
  const per = (s: number) => `${((s * 1000) / n).toFixed(2)} ms`;
  say(
    `per start: master CPU ${per(cpu1.masters - cpu0.masters)}, PostgreSQL CPU ${per(cpu1.postgres - cpu0.postgres)}; ` +
      `the APIs' ${per(cpu1.apis - cpu0.apis)}, Redis ${per(cpu1.redis - cpu0.redis)}, the runner's (the generated workers and the listener timing the starts) ${per(cpu1.runner - cpu0.runner)}; ` +
      `claim passes ${cpu1.passes - cpu0.passes} (${(n / Math.max(1, cpu1.passes - cpu0.passes)).toFixed(1)} starts a pass)`,
  );
  // The masters' CPU by thread: the main thread's JavaScript apart from V8's workers (its
  // optimizing compiler and the collector's helpers), which a first burst keeps busier.
  say(
    `the masters' CPU a start by thread: ${[...cpu1.threads]
      .map(([kind, s]) => [kind, s - (cpu0.threads.get(kind) ?? 0)] as const)
      .filter(([, s]) => s > 0)
      .map(([kind, s]) => `${kind} ${per(s)}`)
      .join(', ')}`,
  );
  // A connection the burst opens costs the master its authentication and PostgreSQL a new
  // backend, whose catalog caches and plans start empty.
  say(
    `the masters' pooled connections: ${conns0.open} open before the wake, ${conns1.open} after, ` +
      `${conns1.openedSince(conns0.at)} of them opened during the burst`,
  );
  const [tr0, tr1] = [cpu0.traffic, cpu1.traffic];
  const events = tr1.xadds - tr0.xadds;
  say(
    `events: ${(events / n).toFixed(1)} a start on the stream; on the masters' channel ${((tr1.publishes - tr0.publishes - events) / n).toFixed(1)} a start ` +
      `(PUBLISH calls less one a stream event); Redis sent its clients ${((tr1.outBytes - tr0.outBytes) / n / 1024).toFixed(1)} KiB a start`,
  );
  if (!s0 || !s1) say('statements: pg_stat_statements is not loaded on this cluster');
  else {
    const d = statementsBetween(s0, s1);
    const calls = d.reduce((a, s) => a + s.calls, 0);
    const ms = d.reduce((a, s) => a + s.ms, 0);
    // Plans are counted only under pg_stat_statements.track_planning (a prepared statement's
    // first five runs on a connection are planned each, then its generic plan once, or a
    // custom plan each run if PostgreSQL keeps preferring them).
    const plans = d.reduce((a, s) => a + s.plans, 0);
    const planMs = d.reduce((a, s) => a + s.planMs, 0);
    say(
      `statements: ${calls} (${(calls / n).toFixed(1)} a start), ${(ms / n).toFixed(2)} ms of execution a start; ` +
        `plans ${plans} (${(plans / n).toFixed(2)} a start), ${(planMs / n).toFixed(3)} ms of planning a start\n`,
    );
    // The costliest first: by calls, the triggers' own small statements (under track = all,
    // counted again inside the statement that fired them) hid the start's largest ones.
    say('| calls | a start | ms in all | ms a start | plans | planning ms | statement |');
    say('|---|---|---|---|---|---|---|');
    for (const s of [...d].sort((a, b) => b.ms - a.ms).slice(0, 16))
      say(
        `| ${s.calls} | ${(s.calls / n).toFixed(2)} | ${s.ms.toFixed(0)} | ${(s.ms / n).toFixed(2)} | ${s.plans} | ${s.planMs.toFixed(0)} | ${oneLine(s.query, 140)} |`,
      );
  }
  // The rest of the queue cancelled, the held builds let end: the phases after start on
  // their own queue.
  await cancelUnclaimed(db);
  const released = workers.release();
  say(
    `released ${released.sent} held commands` +
      (released.dropped ? `; ${released.dropped} dropped, their connection closed while held` : ''),
  );
  let open = Number.NaN;
  const held = stallGuard(() => open, state);
  await waitFor(
    'the held builds ended',
    async () => {
      open = Number((await db.query(sql`SELECT count(*) AS n FROM builds WHERE complete_at IS NULL`))[0].n);
      await held.moved();
      return open === 0;
    },
    { timeoutMs: 600_000, everyMs: 500, gaveUp: held.gaveUp },
  );
  return n / window;
}
