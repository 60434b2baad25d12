// The fault scenarios and how one is run: a fresh cluster, GET load on its APIs, BUILDS
// builds forced at once; when every build has printed a quarter of its lines, the fault;
// then the time until the cluster is whole again, the wait until every request has
// completed, and the checker's verdict (checker.ts).
//
// A scenario holds a fault for a while (Redis down 5 s, a master frozen 30 s): the runner
// holds it for those seconds, as the issue ran them; the tests (fixed: false) hold it
// instead until the cluster has noticed (a condition, never a sleep), which is the short
// form of the same fault. A 30 s outage's short form is held until the builds have shown
// what the 30 s are there to show: that they go on while the store is away.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../test/helpers/wait.js';
import { type Check, check } from './checker.js';
import { type Execution, readExecutions, rerunUnderWay, runningExecutions } from './records.js';
import { ChaosStack, type JobShape, type Proc, type StackOptions } from './stack.js';
import { Traffic, type TrafficCounts } from './traffic.js';
import { type WsOutcome, WsWatch } from './ws-watch.js';

export interface FaultContext {
  stack: ChaosStack;
  /** Keep the fault on for `seconds` (fixed) or until `until` holds (conditions). */
  hold(seconds: number, what: string, until: () => Promise<boolean>): Promise<void>;
  /** Record a moment of the fault (the result's timeline). */
  note(event: string): void;
  /** Measurements a scenario adds to its result. */
  extra: Record<string, unknown>;
  /** Faults are held for their seconds (the runner), not until a condition (the tests). */
  fixed: boolean;
}

export interface Scenario {
  name: string;
  /** What is done, as the results table says it. */
  fault: string;
  /** Extra environment for the masters. */
  masterEnv?: Record<string, string>;
  /**
   * A master_expiry_seconds of its own: an outage a build must ride out needs a lease (the
   * expiry less 3 s, services/master/liveness.ts) longer than the outage plus a heartbeat.
   */
  expirySeconds?: number;
  /** Redis as a Sentinel deployment (stack.ts) rather than one server. */
  sentinel?: boolean;
  inject(ctx: FaultContext): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ready(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

const probe = (p: Proc) => ready(`http://127.0.0.1:${p.probe}/readyz`);

/** Every master has noticed that a store is away (its /readyz says so). */
function mastersNotReady(s: ChaosStack): () => Promise<boolean> {
  return async () => (await Promise.all(s.of('master').map(probe))).every((ok) => !ok);
}

async function masterActive(s: ChaosStack, name: string): Promise<boolean> {
  const [m] = await s.query('SELECT active FROM masters WHERE name = $1', [name]);
  return Boolean(m?.active);
}

/** A request that had a build on master `name` has a newer build on another master. */
async function rerunElsewhere(s: ChaosStack, name: string): Promise<boolean> {
  const [r] = await s.query(
    `SELECT count(*)::int AS n FROM builds old JOIN masters m ON m.id = old.masterid AND m.name = $1
     JOIN builds again ON again.buildrequestid = old.buildrequestid AND again.id > old.id
       AND again.masterid <> old.masterid`,
    [name],
  );
  return r!.n > 0;
}

/**
 * The master a master fault hits: the one running the most builds (m1 on a tie, which is every
 * run of the runner, where each worker has a build). A master with no build to lose would make
 * the fault a no-op; a smaller cluster (the tests') may place its builds on either master.
 */
async function busiestMaster(s: ChaosStack): Promise<Proc> {
  const [m] = await s.query(
    `SELECT m.name FROM masters m LEFT JOIN builds b ON b.masterid = m.id AND b.complete_at IS NULL
     WHERE m.active = 1 GROUP BY m.name ORDER BY count(b.id) DESC, m.name LIMIT 1`,
  );
  return s.get(m!.name);
}

async function kill(ctx: FaultContext, p: Proc, sig: NodeJS.Signals): Promise<void> {
  ctx.stack.signal(p, sig);
  ctx.note(`${sig} ${p.name}`);
  await p.proc.exited;
  ctx.note(`${p.name} exited`);
}

/** The pids a process started, children and theirs (read from /proc before a kill). */
function descendants(pid: number, of: readonly number[]): number[] {
  const parent = (p: number): number => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return 0;
    }
  };
  return of.filter((p) => {
    for (let q = parent(p), depth = 0; q > 1 && depth < 20; q = parent(q), depth++)
      if (q === pid) return true;
    return false;
  });
}

/** The masters, requests, claims and builds as the database has them, for a wait's failure. */
async function clusterState(s: ChaosStack): Promise<string> {
  const rows = async (text: string) => JSON.stringify(await s.query(text)).replaceAll('"', '');
  try {
    return [
      `masters ${await rows('SELECT id, name, active, last_active FROM masters ORDER BY id')}`,
      `requests ${await rows('SELECT id, complete, results FROM buildrequests ORDER BY id')}`,
      `claims ${await rows('SELECT brid, masterid FROM buildrequest_claims ORDER BY brid')}`,
      `builds ${await rows('SELECT id, buildrequestid, masterid, workerid, results FROM builds ORDER BY id')}`,
      `workers ${await rows('SELECT workerid, masterid FROM connected_workers ORDER BY workerid')}`,
      // A session that holds locks (a frozen master's open transaction) or waits for one.
      `sessions ${await rows(
        `SELECT application_name AS app, state, wait_event_type AS waits, backend_xid IS NOT NULL AS writes
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
           AND application_name LIKE 'flotilla-master%' AND state <> 'idle' ORDER BY application_name`,
      )}`,
    ].join('; ');
  } catch (err) {
    return `the database could not be read: ${(err as Error).message}`;
  }
}

/** Every API and master answers its /readyz. */
async function allReady(s: ChaosStack): Promise<boolean> {
  return (await Promise.all([...s.of('api'), ...s.of('master')].map(probe))).every(Boolean);
}

const alive = (p: Proc) => p.proc.child.exitCode === null && p.proc.child.signalCode === null;

/** Every API and master that a fault did not leave down answers its /readyz. */
async function liveReady(s: ChaosStack): Promise<boolean> {
  return (await Promise.all([...s.of('api'), ...s.of('master')].filter(alive).map(probe))).every(Boolean);
}

/**
 * kill -9 of the Redis primary of a Sentinel deployment: the time until the sentinels have
 * promoted the replica, and until every API and master is ready again, go in the result.
 */
async function failOverRedis(ctx: FaultContext): Promise<void> {
  const d = ctx.stack.sentinel;
  if (!d) throw new Error('the stack has no Sentinel deployment');
  const t0 = Date.now();
  const since = () => (Date.now() - t0) / 1000;
  await d.killPrimary();
  ctx.note('redis primary killed');
  await d.waitForFailover();
  ctx.extra.promotedSeconds = since();
  ctx.note('the sentinels promoted the replica');
  await waitFor('every API and master ready', () => allReady(ctx.stack), { timeoutMs: 120_000 });
  ctx.extra.readySeconds = since();
  ctx.note('every API and master ready');
}

/**
 * kill -9 of Redis (or SIGTERM, `clean`), kept down (`seconds`, or until the masters noticed),
 * then started again.
 */
async function restartRedis(
  ctx: FaultContext,
  o: { empty: boolean; seconds: number; clean?: boolean },
): Promise<void> {
  await ctx.stack.killRedis(o.empty, o.clean ? 'SIGTERM' : 'SIGKILL');
  ctx.note(`redis ${o.clean ? 'stopped (SIGTERM)' : 'killed'}${o.empty ? ', data gone' : ''}`);
  await ctx.hold(o.seconds, 'the masters to notice', mastersNotReady(ctx.stack));
  await ctx.stack.startRedis();
  ctx.note(o.empty ? 'redis back, empty' : 'redis back');
}

/**
 * The commands of `running` have all printed their last line; `stopped` is told of one that
 * ended otherwise (killed, or stopped with SIGTERM), which no waiting will mend.
 */
function commandsEnded(
  s: ChaosStack,
  running: readonly Execution[],
  stopped: (e: Execution) => void,
  /** Count a command that printed this many batches more than it had in `running` as done. */
  progressed = Number.POSITIVE_INFINITY,
): boolean {
  const now = readExecutions(s.record);
  const live = new Set(runningExecutions(s.record).map((e) => `${e.token} ${e.build}`));
  return running.every((r) => {
    const e = now.find((x) => x.token === r.token && x.build === r.build);
    if (e?.end === 'end') return true;
    if (e?.end === 'term' || !live.has(`${r.token} ${r.build}`)) {
      stopped(r);
      return false;
    }
    return e !== undefined && e.ticks - r.ticks >= progressed;
  });
}

/**
 * PostgreSQL stopped as a crash stops it and kept away: `seconds` (the runner), or in the
 * tests until every master has noticed and every command that was running has printed
 * AWAY_BATCHES more batches meanwhile (or its last), so that its output waits in its master
 * until PostgreSQL is back (what the 30 s outage is there to show: the builds go on, their
 * output held back, and no build ends for it). Then started again; the checks that follow
 * ask for every line stored once, no RETRY and no second execution.
 *
 * Not until every command has ended, as it was first: under two CPU hogs beside a full suite
 * (2026-11-28 02:14) a 20 s build's last three quarters took longer than the masters' outage
 * limit, and its master rightly gave it up; how long an outage lasts must not depend on the
 * machine's load.
 */
const AWAY_BATCHES = 10;

async function postgresAway(ctx: FaultContext, seconds: number): Promise<void> {
  const { stack } = ctx;
  const running = runningExecutions(stack.record);
  let stopped: Execution | undefined;
  stack.stopPostgres('immediate');
  ctx.note('postgres stopped (immediate)');
  const noticed = mastersNotReady(stack);
  await ctx.hold(
    seconds,
    'every master to notice, and every running command to go on meanwhile',
    async () => {
      const ended = commandsEnded(
        stack,
        running,
        (e) => {
          stopped ??= e;
        },
        AWAY_BATCHES,
      );
      return stopped !== undefined || (ended && (await noticed()));
    },
  );
  stack.startPostgres();
  ctx.note('postgres back');
  if (stopped)
    throw new Error(
      `the command of ${stopped.token} (build ${stopped.build}) was stopped while PostgreSQL was away`,
    );
  if (!ctx.fixed) ctx.note(`${running.length} commands went on while PostgreSQL was away`);
}

/** No request, build or log left unfinished in PostgreSQL. */
async function allFinished(s: ChaosStack): Promise<boolean> {
  const [r] = await s.query(`
    SELECT (SELECT count(*) FROM buildrequests WHERE complete = 0)
         + (SELECT count(*) FROM builds WHERE complete_at IS NULL)
         + (SELECT count(*) FROM logs WHERE complete = 0) AS n`);
  return Number(r!.n) === 0;
}

/**
 * Redis killed (-9) and kept away: `seconds` (the runner), or in the tests until every master
 * has noticed and every build has finished meanwhile, its log stored and complete and its
 * request complete (Redis is a cache of liveness: a build must not wait for it, only its live
 * tail and its events may). Then started again with its data; the compress-log jobs of the
 * logs that finished meanwhile are queued once it is back.
 */
async function redisAway(ctx: FaultContext, seconds: number): Promise<void> {
  const { stack } = ctx;
  await stack.killRedis(false, 'SIGKILL');
  ctx.note('redis killed');
  const noticed = mastersNotReady(stack);
  await ctx.hold(
    seconds,
    'every master to notice, and every build to finish meanwhile',
    async () => (await noticed()) && (await allFinished(stack)),
  );
  await stack.startRedis();
  ctx.note('redis back');
}

/**
 * PostgreSQL stopped as a crash stops it (or cleanly, `fast`), kept down (`seconds`, or until
 * noticed), started again.
 */
async function restartPostgres(ctx: FaultContext, seconds: number, mode: 'immediate' | 'fast' = 'immediate') {
  ctx.stack.stopPostgres(mode);
  ctx.note(`postgres stopped (${mode})`);
  await ctx.hold(seconds, 'the masters to notice', mastersNotReady(ctx.stack));
  ctx.stack.startPostgres();
  ctx.note('postgres back');
}

/** kill -9 of a worker: its commands must die with it (how long the last one took is kept). */
async function killWorker(ctx: FaultContext, sig: NodeJS.Signals): Promise<void> {
  // w1, or the first worker running a command when w1 is idle (the tests' cluster has fewer
  // builds than workers): killing an idle worker would test nothing.
  const running = runningExecutions(ctx.stack.record).map((e) => e.pid);
  const live = ctx.stack.of('worker').filter(alive);
  const w = live.find((p) => descendants(p.proc.pid, running).length > 0) ?? ctx.stack.get('w1');
  const mine = descendants(w.proc.pid, running);
  const killedAt = performance.now();
  await kill(ctx, w, sig);
  const gone = () => mine.every((pid) => !runningExecutions(ctx.stack.record).some((e) => e.pid === pid));
  ctx.extra.workerCommands = mine.length;
  // How long its commands outlived it: polled finely up to 10 s, then given up as orphans.
  while (!gone() && performance.now() - killedAt < 10_000) await sleep(20);
  ctx.extra.commandsGoneMs = gone() ? Math.round(performance.now() - killedAt) : null;
}

/** The sessions of master `name` inside a transaction that wrote (and so holds row locks). */
async function openWrites(s: ChaosStack, name: string): Promise<number> {
  const [r] = await s.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1
       AND state = 'idle in transaction' AND backend_xid IS NOT NULL`,
    [`flotilla-master ${name}`],
  );
  return r!.n;
}

// Tries at stopping a master inside a write transaction before the scenario gives up: its two
// builds append a batch each 0.2-0.3 s, each append a transaction of a few statements.
const FREEZE_TRIES = 500;

/**
 * SIGSTOP of a master past its expiry, then SIGCONT. `inTransaction`: stopped at the worst
 * moment, while a transaction of its own that wrote is open (a heartbeat, a log append), so
 * that its row locks stay held while it is away: stopped, then continued again at once unless
 * PostgreSQL shows such a transaction, and tried again. A frozen master's transaction must not
 * hold up the master that expires it (a small form stalled so, at random, until the server
 * ended such sessions).
 */
async function freezeMaster(ctx: FaultContext, inTransaction: boolean): Promise<void> {
  const { stack } = ctx;
  const m = await busiestMaster(stack);
  stack.signal(m, 'SIGSTOP');
  if (inTransaction) {
    let tries = 1;
    while ((await openWrites(stack, m.name)) === 0) {
      stack.signal(m, 'SIGCONT');
      if (++tries > FREEZE_TRIES)
        throw new Error(`${m.name} was not caught inside a write transaction in ${FREEZE_TRIES} tries`);
      stack.signal(m, 'SIGSTOP');
    }
    ctx.extra.freezeTries = tries;
  }
  ctx.note(`SIGSTOP ${m.name}${inTransaction ? ' inside a write transaction' : ''}`);
  await holdFrozen(ctx, m, 30);
}

/**
 * Keep master `m` frozen (`seconds`, or until it is expired and a build of its requests has
 * been rerun elsewhere and is under way: two batches printed, so that a command of the frozen
 * master that nothing stopped would be seen beside it), then SIGCONT.
 */
async function holdFrozen(ctx: FaultContext, m: Proc, seconds: number): Promise<void> {
  const { stack } = ctx;
  // Which condition was last seen false, for a hold that times out.
  let seen = '';
  try {
    await ctx.hold(seconds, `${m.name} expired and a build of its requests rerun elsewhere`, async () => {
      const expired = !(await masterActive(stack, m.name));
      const rerun = expired && (await rerunElsewhere(stack, m.name));
      const underWay = rerun && rerunUnderWay(stack.record);
      seen = `expired ${expired}, rerun elsewhere ${rerun}, rerun under way ${underWay}`;
      return underWay;
    });
  } catch (err) {
    throw new Error(`${(err as Error).message} (last seen: ${seen}; ${await clusterState(stack)})`);
  }
  stack.signal(m, 'SIGCONT');
  ctx.note(`SIGCONT ${m.name}`);
}

export const SCENARIOS: readonly Scenario[] = [
  { name: 'baseline', fault: 'none', inject: async () => {} },
  {
    name: 'master-kill',
    fault: 'kill -9 of a master, left down',
    inject: async (ctx) => kill(ctx, await busiestMaster(ctx.stack), 'SIGKILL'),
  },
  {
    name: 'master-term',
    fault: 'SIGTERM of a master (5 s drain), left down',
    masterEnv: { MASTER_DRAIN_SECONDS: '5' },
    inject: async (ctx) => kill(ctx, await busiestMaster(ctx.stack), 'SIGTERM'),
  },
  {
    name: 'master-restart',
    fault: 'kill -9 of a master, started again under the same name 3 s later',
    inject: async (ctx) => {
      const m = await busiestMaster(ctx.stack);
      await kill(ctx, m, 'SIGKILL');
      await ctx.hold(3, 'the master down', async () => true);
      await ctx.stack.restart(m);
      ctx.note(`${m.name} ready again`);
    },
  },
  {
    name: 'master-freeze',
    fault: 'SIGSTOP of a master for 30 s (past its 15 s expiry), then SIGCONT',
    inject: (ctx) => freezeMaster(ctx, false),
  },
  {
    name: 'master-freeze-tx',
    fault: 'SIGSTOP of a master inside a write transaction, for 30 s (past its 15 s expiry), then SIGCONT',
    inject: (ctx) => freezeMaster(ctx, true),
  },
  {
    // Two faults at once: the master left must ride out the outage and then expire the frozen
    // one; the frozen one, continued, must find itself expired and write nothing.
    name: 'master-freeze-postgres-restart',
    fault:
      'SIGSTOP of a master for 30 s (past its 15 s expiry); meanwhile PostgreSQL stopped (immediate) and started again 5 s later; then SIGCONT',
    inject: async (ctx) => {
      const m = await busiestMaster(ctx.stack);
      ctx.stack.signal(m, 'SIGSTOP');
      ctx.note(`SIGSTOP ${m.name}`);
      const t0 = Date.now();
      await restartPostgres(ctx, 5);
      await holdFrozen(ctx, m, Math.max(0, 30 - (Date.now() - t0) / 1000));
    },
  },
  {
    name: 'worker-kill',
    fault: 'kill -9 of a worker, left down',
    inject: (ctx) => killWorker(ctx, 'SIGKILL'),
  },
  {
    name: 'worker-term',
    fault: 'SIGTERM of a worker, left down',
    inject: (ctx) => killWorker(ctx, 'SIGTERM'),
  },
  {
    name: 'api-kill',
    fault: 'kill -9 of an API, left down',
    inject: (ctx) => kill(ctx, ctx.stack.get('api1'), 'SIGKILL'),
  },
  {
    name: 'api-term',
    fault: 'SIGTERM of an API, left down',
    inject: (ctx) => kill(ctx, ctx.stack.get('api1'), 'SIGTERM'),
  },
  {
    name: 'redis-restart',
    fault: 'kill -9 of Redis, started again 5 s later with its data',
    inject: (ctx) => restartRedis(ctx, { empty: false, seconds: 5 }),
  },
  {
    name: 'redis-term',
    fault: 'SIGTERM of Redis (a clean stop), started again 5 s later with its data',
    inject: (ctx) => restartRedis(ctx, { empty: false, seconds: 5, clean: true }),
  },
  {
    name: 'redis-30s',
    fault: 'kill -9 of Redis, started again 30 s later with its data',
    inject: (ctx) => redisAway(ctx, 30),
  },
  {
    name: 'redis-empty',
    fault: 'kill -9 of Redis, started again 5 s later empty',
    inject: (ctx) => restartRedis(ctx, { empty: true, seconds: 5 }),
  },
  {
    name: 'redis-empty-master-kill',
    fault: 'Redis back empty, then kill -9 of a master, left down',
    inject: async (ctx) => {
      const { stack } = ctx;
      await restartRedis(ctx, { empty: true, seconds: 5 });
      await waitFor('the masters ready again', async () =>
        (await Promise.all(stack.of('master').map(probe))).every(Boolean),
      );
      await kill(ctx, await busiestMaster(stack), 'SIGKILL');
    },
  },
  {
    name: 'redis-failover',
    fault: 'kill -9 of the Redis primary (Sentinel: a replica, three sentinels), the replica promoted',
    sentinel: true,
    inject: failOverRedis,
  },
  {
    name: 'postgres-restart',
    fault: 'PostgreSQL stopped (immediate), started again 5 s later',
    inject: (ctx) => restartPostgres(ctx, 5),
  },
  {
    // PostgreSQL's clean stop is SIGINT (pg_ctl's default "fast" mode, and the STOPSIGNAL of
    // its official container image): SIGTERM asks for a "smart" stop, which waits for every
    // client to leave, and pooled clients never do, so whoever sent it ends with a SIGKILL.
    name: 'postgres-term',
    fault: 'PostgreSQL stopped cleanly (fast: SIGINT), started again 5 s later',
    inject: (ctx) => restartPostgres(ctx, 5, 'fast'),
  },
  {
    name: 'postgres-30s',
    fault: 'PostgreSQL stopped (immediate) for 30 s (expiry 60 s)',
    expirySeconds: 60,
    inject: (ctx) => postgresAway(ctx, 30),
  },
];

export interface RunOptions extends Omit<StackOptions, 'dir' | 'masterEnv'> {
  /** State of the run; emptied first. */
  dir: string;
  builds: number;
  /** GET requests a second to each API (0: none). */
  load: number;
  /** Hold faults for their seconds (the runner) or until noticed (the tests). */
  fixed: boolean;
  /** How long to wait for every request to complete after the fault. */
  settleSeconds: number;
  masterEnv?: Record<string, string>;
  /** /ws clients following builds and logs through the fault (ws-watch.ts); default none. */
  wsClients?: number;
  log?: (line: string) => void;
}

/**
 * What became of the background jobs: how many finished logs had their compress-log job
 * recorded as run (flotilla.job_runs, migration 0017: once per job by its primary key), and
 * how many deliveries found their job done already (flotilla_jobs_repeats_total, summed over
 * the masters). A log that finished while Redis was away may have no job (its master could not
 * queue it: the log stays readable, only in more chunks).
 */
export interface JobsOutcome {
  logs: number;
  /** compress-log runs recorded. */
  runs: number;
  repeats: number;
}

export interface RoundOutcome {
  scenario: string;
  /** Executions of the round's requests (the commands' records). */
  executions: number;
  /** The round's requests that ran more than once. */
  rerun: number;
  /** As ScenarioResult.recoverSeconds, for this round's fault. */
  recoverSeconds: number | null;
}

export interface ScenarioResult {
  scenario: string;
  fault: string;
  check: Check;
  traffic: TrafficCounts;
  /** Seconds from the fault until every request was progressing again (or done); null: never. */
  recoverSeconds: number | null;
  timeline: { at: number; event: string }[];
  extra: Record<string, unknown>;
  /** Each round's own counts, in order (one round but for runScenarios' several). */
  rounds: RoundOutcome[];
  /** With wsClients: what each /ws client saw. */
  ws: WsOutcome | null;
  jobs: JobsOutcome | null;
  options: Omit<RunOptions, 'log'>;
}

async function jobsOutcome(stack: ChaosStack): Promise<JobsOutcome | null> {
  const [t] = await stack.query(`SELECT to_regclass('flotilla.job_runs') IS NOT NULL AS present`);
  if (!t?.present) return null; // the services of a commit from before migration 0017
  const [r] = await stack.query(`
    SELECT (SELECT count(*) FROM logs WHERE complete = 1)::int AS logs,
           (SELECT count(*) FROM flotilla.job_runs WHERE queue = 'compress-log')::int AS runs`);
  let repeats = 0;
  for (const m of stack.of('master')) {
    try {
      const text = await (await fetch(`http://127.0.0.1:${m.probe}/metrics`)).text();
      for (const line of text.split('\n'))
        if (line.startsWith('flotilla_jobs_repeats_total{')) repeats += Number(line.split(' ').pop());
    } catch {
      // a master that is down has no metrics to give
    }
  }
  return { logs: r!.logs, runs: r!.runs, repeats };
}

function batches(job: JobShape): number {
  return Math.ceil(job.lines / job.batch);
}

/**
 * Recovery, watched from the fault on: every live API ready, no open build on an inactive
 * master, and every incomplete request's stored lines grown over the last `windowMs`
 * (stored: what PostgreSQL holds, so neither a frozen master's build nor one whose output
 * cannot be stored counts as progress). Only samples taken since the fault count, so the
 * answer is never earlier than one window.
 */
class RecoveryWatch {
  private readonly history: { at: number; lines: Map<number, number> }[] = [];
  private timer: NodeJS.Timeout | undefined;
  recoveredAt: number | null = null;

  constructor(
    private readonly stack: ChaosStack,
    readonly windowMs: number,
  ) {}

  start(): void {
    const loop = async () => {
      await this.sample().catch(() => undefined);
      if (this.recoveredAt === null) this.timer = setTimeout(loop, 250);
    };
    void loop();
  }

  private async sample(): Promise<void> {
    const s = this.stack;
    const rows = await s.query(`
      SELECT br.id, br.complete, coalesce(sum(l.num_lines), 0)::int AS lines,
             count(*) FILTER (WHERE b.complete_at IS NULL AND m.active = 0)::int AS stale
      FROM buildrequests br LEFT JOIN builds b ON b.buildrequestid = br.id
      LEFT JOIN masters m ON m.id = b.masterid
      LEFT JOIN steps st ON st.buildid = b.id LEFT JOIN logs l ON l.stepid = st.id
      GROUP BY br.id`);
    const now = Date.now();
    this.history.push({ at: now, lines: new Map(rows.map((r) => [r.id, r.lines])) });
    while (this.history.length > 1 && this.history[1]!.at <= now - this.windowMs) this.history.shift();
    const past = this.history[0]!;
    if (now - past.at < this.windowMs) return;
    const apis = s.of('api').filter(alive);
    const apisReady = (await Promise.all(apis.map(probe))).every(Boolean);
    const progressing = rows.every((r) => r.complete || r.lines > (past.lines.get(r.id) ?? 0));
    const stale = rows.some((r) => r.stale > 0);
    if (apisReady && progressing && !stale) this.recoveredAt = now;
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

export function runScenario(sc: Scenario, opts: RunOptions): Promise<ScenarioResult> {
  return runScenarios([sc], opts);
}

/**
 * Scenarios one after the other on one cluster (the tests' small forms share a cluster so):
 * each round forces its own builds, injects its fault once they are a quarter through, and
 * waits until every request is complete and nothing is open before the next; the checks then
 * cover every round's builds together, and `rounds` has each round's own counts. A fault that
 * leaves a process down (a worker killed) leaves it down for the rounds after it. The first
 * scenario's expiry and master environment are the cluster's; a later one may ask only for
 * what the cluster has already (the caller passes it in `opts`), and none for Sentinel.
 */
export async function runScenarios(scs: readonly Scenario[], opts: RunOptions): Promise<ScenarioResult> {
  const [sc, ...more] = scs;
  if (!sc) throw new Error('no scenario to run');
  const expirySeconds = sc.expirySeconds ?? opts.expirySeconds;
  const masterEnv = { ...opts.masterEnv, ...sc.masterEnv };
  const misfits = more.filter(
    (m) =>
      m.sentinel ||
      (m.expirySeconds !== undefined && m.expirySeconds !== expirySeconds) ||
      Object.entries(m.masterEnv ?? {}).some(([k, v]) => masterEnv[k] !== v),
  );
  if (misfits.length > 0 || (more.length > 0 && sc.sentinel))
    throw new Error(
      `these scenarios need a cluster of their own: ${[sc, ...misfits].map((m) => m.name).join(', ')}`,
    );
  const log = opts.log ?? (() => {});
  rmSync(opts.dir, { recursive: true, force: true });
  mkdirSync(opts.dir, { recursive: true });
  const stack = new ChaosStack({
    ...opts,
    ...(sc.sentinel ? { sentinel: true } : {}),
    expirySeconds,
    masterEnv,
  });
  const timeline: ScenarioResult['timeline'] = [];
  const t0 = Date.now();
  const note = (event: string) => {
    timeline.push({ at: (Date.now() - t0) / 1000, event });
    log(`  ${((Date.now() - t0) / 1000).toFixed(1)} s: ${event}`);
  };
  const traffic = new Traffic(() => stack.of('api').map((p) => stack.apiBase(p)), opts.load);
  const windowMs = Math.max(2000, opts.job.pause * 4000);
  let watch = new RecoveryWatch(stack, windowMs);
  const ws = new WsWatch();
  try {
    await stack.startStores();
    await stack.startServices();
    note('cluster ready');
    if (opts.wsClients) {
      await ws.open(
        stack.of('api').map((a) => `http://127.0.0.1:${a.port}`),
        opts.wsClients,
      );
      note(`${opts.wsClients} /ws clients following`);
    }
    traffic.start();
    const extra: Record<string, unknown> = {};
    const recovered: (number | null)[] = [];
    const roundTokens: string[][] = [];
    for (const [round, scenario] of scs.entries()) {
      const tokens = Array.from({ length: opts.builds }, (_, i) =>
        round ? `r${round + 1}t${i + 1}` : `t${i + 1}`,
      );
      roundTokens.push(tokens);
      for (const t of tokens) await stack.force(t);
      note(`${tokens.length} builds forced`);
      const quarter = Math.max(1, Math.floor(batches(opts.job) / 4));
      await waitFor(
        'every build a quarter through',
        async () => {
          const ex = readExecutions(stack.record);
          return tokens.every((t) => ex.some((e) => e.token === t && e.ticks >= quarter));
        },
        { timeoutMs: 600_000 },
      );
      const faultAt = Date.now();
      if (round === 0) ws.fault(faultAt);
      note(`fault: ${scenario.fault}`);
      watch = new RecoveryWatch(stack, windowMs);
      watch.start();
      await scenario.inject({
        stack,
        note,
        extra,
        fixed: opts.fixed,
        hold: async (seconds, what, until) => {
          if (opts.fixed) await sleep(seconds * 1000);
          else await waitFor(what, until, { timeoutMs: opts.settleSeconds * 1000 });
        },
      });
      await waitFor(
        'every request complete',
        async () => {
          const [r] = await stack.query('SELECT count(*)::int AS n FROM buildrequests WHERE complete = 0');
          return r!.n === 0;
        },
        { timeoutMs: opts.settleSeconds * 1000 },
      ).catch((err) => note((err as Error).message));
      note('every request complete');
      // Nothing may stay open: allow what a stale master's housekeeping takes.
      await waitFor(
        'nothing open',
        async () => {
          const [r] = await stack.query(`
            SELECT (SELECT count(*) FROM builds WHERE complete_at IS NULL)
                 + (SELECT count(*) FROM logs WHERE complete = 0) AS n`);
          return Number(r!.n) === 0;
        },
        { timeoutMs: opts.expirySeconds * 3000 + 10_000 },
      ).catch(() => note('something is still open'));
      // The cluster whole again before the next round or the checks: a store that just came
      // back is still being reconnected to (seen: the checks found no API ready 0.1 s after
      // Redis was back, its client still waiting out its reconnect delay).
      await waitFor('every API and master left ready', () => liveReady(stack), {
        timeoutMs: opts.settleSeconds * 1000,
      }).catch(() => note('not every API and master left is ready'));
      watch.stop();
      recovered.push(watch.recoveredAt === null ? null : (watch.recoveredAt - faultAt) / 1000);
    }
    // A finished log's compress-log job comes after its build: wait a while for each to run.
    await waitFor(
      'every finished log compressed',
      async () => {
        const j = await jobsOutcome(stack);
        return j === null || j.runs >= j.logs;
      },
      { timeoutMs: Math.min(60, opts.settleSeconds) * 1000 },
    ).catch(() => note('not every finished log had its compress-log job run'));
    const jobs = await jobsOutcome(stack).catch(() => null);
    const buildids = (await stack.query('SELECT id FROM builds WHERE complete_at IS NOT NULL')).map(
      (b) => b.id as number,
    );
    const wsOutcome = opts.wsClients ? ws.judge(buildids) : null;
    ws.close();
    const counts = await traffic.stop();
    const result = await check({
      query: (text, values) => stack.query(text, values),
      api: async () => {
        for (const a of stack.of('api')) if (await probe(a)) return stack.apiBase(a);
        throw new Error('no API answers');
      },
      record: stack.record,
      lines: opts.job.lines,
    });
    // The slowest round's recovery; never, if any round's was.
    const recoverSeconds = recovered.includes(null) ? null : Math.max(...(recovered as number[]));
    const executions = readExecutions(stack.record);
    const rounds = scs.map((m, i): RoundOutcome => {
      const mine = executions.filter((e) => roundTokens[i]!.includes(e.token));
      const counts = new Map<string, number>();
      for (const e of mine) counts.set(e.token, (counts.get(e.token) ?? 0) + 1);
      return {
        scenario: m.name,
        executions: mine.length,
        rerun: [...counts.values()].filter((n) => n > 1).length,
        recoverSeconds: recovered[i] ?? null,
      };
    });
    const { log: _, ...options } = opts;
    const out: ScenarioResult = {
      scenario: scs.map((m) => m.name).join('+'),
      fault: scs.map((m) => m.fault).join('; then '),
      check: result,
      traffic: counts,
      recoverSeconds,
      timeline,
      extra,
      rounds,
      ws: wsOutcome,
      jobs,
      options,
    };
    writeFileSync(join(opts.dir, 'result.json'), `${JSON.stringify(out, null, 2)}\n`);
    return out;
  } finally {
    watch.stop();
    ws.close();
    await traffic.stop();
    await stack.stop();
  }
}
