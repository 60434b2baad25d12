// Masters in the test's own process, on a real database and a private Redis (so no other
// suite's events or jobs reach them), with scripted workers in place of worker processes:
// the distributor, the runner and the step kinds run exactly as in a master process, and a
// test decides what each command prints, how it ends, and when a worker goes away.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { Redis } from 'ioredis';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import { addBuildset, type DataContext, findBuilderId, transact } from '../../services/core/data/index.js';
import { type BusMessage, busSubscription } from '../../services/core/events/bus.js';
import type {
  CommandOutcome,
  CommandRequest,
  OutputStream,
  WorkerInfo,
} from '../../services/core/protocol/messages.js';
import { createLogger } from '../../services/core/telemetry/logger.js';
import { type Master, type MasterDeps, startMaster } from '../../services/master/master.js';
import type {
  CommandEnd,
  ConnectedWorkers,
  OutputSink,
  TransferEnd,
  WorkerConnection,
  WorkerEvents,
} from '../../services/master/workers/connection.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { type Running, startRedis } from '../helpers/processes.js';
import { eventually } from '../helpers/wait.js';

const INFO: WorkerInfo = { admin: 'test', host: 'scripted', access_uri: '', version: 'scripted' };

/** A command as a script sees it. */
export interface ScriptedCommand {
  request: CommandRequest;
  /** The command as one line of text. */
  text: string;
  /** Send output; resolves once the master has stored it (as a real worker's acknowledgement). */
  write(stream: OutputStream, text: string): Promise<void>;
  /** Send text of one of the command's logfiles, as a worker following that file does. */
  writeLog(name: string, text: string): Promise<void>;
  signal: AbortSignal;
}

export type Script = (cmd: ScriptedCommand) => Promise<Partial<CommandOutcome> | undefined>;

const outcome = (o: Partial<CommandOutcome> = {}): CommandOutcome => ({
  rc: 0,
  signal: null,
  interrupted: false,
  timedOut: false,
  elapsedSeconds: 0,
  ...o,
});

/** Resolves once the signal aborts, as an interrupted command ends. */
export function interrupted(signal: AbortSignal): Promise<Partial<CommandOutcome>> {
  return new Promise((resolve) => {
    const end = () => resolve({ rc: null, signal: 'SIGKILL', interrupted: true });
    if (signal.aborted) end();
    else signal.addEventListener('abort', end, { once: true });
  });
}

/**
 * The default script: a tiny shell of `;`-separated commands. `echo TEXT` prints a line
 * (`echo TEXT >&2` to stderr), `log NAME TEXT` writes a line to logfile NAME, `exit N` ends
 * with N, `hang` waits until interrupted.
 */
export const tinyShell: Script = async (cmd) => {
  for (const part of cmd.text.split(';').map((p) => p.trim())) {
    if (cmd.signal.aborted) return interrupted(cmd.signal);
    const echo = /^echo (.*?)( >&2)?$/.exec(part);
    const log = /^log (\S+) (.*)$/.exec(part);
    if (echo) await cmd.write(echo[2] ? 'e' : 'o', `${echo[1]}\n`);
    else if (log) await cmd.writeLog(log[1]!, `${log[2]}\n`);
    else if (/^exit \d+$/.test(part)) return { rc: Number(part.slice(5)) };
    else if (part === 'hang') return interrupted(cmd.signal);
    else if (part) throw new Error(`the scripted worker cannot run ${JSON.stringify(part)}`);
  }
  return {};
};

export class ScriptedWorker implements WorkerConnection {
  readonly info = INFO;
  private readonly link = new AbortController();
  /** Every command it was given, in order. */
  readonly commands: CommandRequest[] = [];
  /** Commands running now. */
  running = 0;

  constructor(
    readonly name: string,
    private readonly script: Script = tinyShell,
  ) {}

  get lost(): AbortSignal {
    return this.link.signal;
  }

  async run(request: CommandRequest, sink: OutputSink, signal?: AbortSignal): Promise<CommandEnd> {
    if (this.lost.aborted) return { lost: true, reason: String(this.lost.reason) };
    this.commands.push(request);
    this.running++;
    const stop = signal ?? new AbortController().signal;
    const text = typeof request.command === 'string' ? request.command : request.command.join(' ');
    // Output goes through the sink one piece after another, in the order it was written, as
    // both real connections pass it on (a script may write without waiting for each piece).
    let chain: Promise<void> = Promise.resolve();
    const ordered = (...args: Parameters<OutputSink>) => {
      const next = chain.then(() => sink(...args));
      chain = next.catch(() => {});
      return next;
    };
    try {
      const ran = this.script({
        request,
        text,
        write: (stream, t) => ordered(stream, t),
        writeLog: (name, t) => ordered('o', t, name),
        signal: stop,
      });
      // A worker that goes away ends its commands lost, whatever they were doing.
      const gone = new Promise<'lost'>((resolve) => {
        if (this.lost.aborted) resolve('lost');
        else this.lost.addEventListener('abort', () => resolve('lost'), { once: true });
      });
      const end = await Promise.race([ran, gone]);
      if (end === 'lost') return { lost: true, reason: String(this.lost.reason) };
      return outcome(end);
    } finally {
      this.running--;
    }
  }

  /** Its base directory is /scripted/<name>. */
  workerPath(...parts: string[]): string {
    return posix.join('/scripted', this.name, ...parts);
  }

  // Scripted workers move no files: a test that needs transfers uses a real agent.
  async upload(): Promise<TransferEnd> {
    return { rc: 1, text: 'the scripted worker moves no files\n' };
  }

  uploadDirectory(): Promise<TransferEnd> {
    return this.upload();
  }

  download(): Promise<TransferEnd> {
    return this.upload();
  }

  shutdown(reason: string): void {
    this.drop(reason);
  }

  /** The link goes: running commands are lost. */
  drop(reason = 'worker disconnected'): void {
    this.link.abort(reason);
  }
}

/** What scripted workers connect to: a master's ConnectedWorkers. */
export class ScriptedWorkers implements ConnectedWorkers {
  private readonly byName = new Map<string, ScriptedWorker>();
  private events: WorkerEvents = {};

  attach(events: WorkerEvents): this {
    this.events = events;
    return this;
  }

  connect(worker: ScriptedWorker): ScriptedWorker {
    this.byName.set(worker.name, worker);
    this.events.connected?.(worker);
    return worker;
  }

  disconnect(name: string, reason?: string): void {
    const w = this.byName.get(name);
    if (!w) return;
    this.byName.delete(name);
    w.drop(reason);
    this.events.disconnected?.(w);
  }

  connected(): ScriptedWorker[] {
    return [...this.byName.values()];
  }

  get(name: string): ScriptedWorker | undefined {
    return this.byName.get(name);
  }

  async close(): Promise<void> {
    for (const name of [...this.byName.keys()]) this.disconnect(name, 'master stopping');
  }
}

export interface InProcessMaster {
  master: Master;
  workers: ScriptedWorkers;
  /** Stop it as SIGTERM would (its builds drain, then it leaves the cluster). */
  stop(): Promise<void>;
}

/** How many claim passes the master has made (its flotilla_claim_pass_seconds count). */
export async function claimPasses(m: InProcessMaster): Promise<number> {
  const line = (await m.master.metrics()).body
    .split('\n')
    .find((l) => l.startsWith('flotilla_claim_pass_seconds_count'));
  return Number(line?.split(' ')[1] ?? 0);
}

/** A database and a private Redis, on which masters start in-process. */
export class Stage {
  private readonly started: InProcessMaster[] = [];
  private readonly conns: Redis[] = [];
  private constructor(
    readonly db: TestDatabase,
    readonly redis: { url: string; proc: Running },
    readonly ctx: DataContext,
    private readonly dir: string,
  ) {}

  static async open(): Promise<Stage> {
    const [db, r] = await Promise.all([createDatabase('migrated'), startRedis()]);
    const redis = new Redis(r.url, { maxRetriesPerRequest: 3 });
    const stage = new Stage(db, r, { db: db.pool, redis }, mkdtempSync(join(tmpdir(), 'flotilla-inproc-')));
    stage.conns.push(redis);
    return stage;
  }

  /** A master named `name` on this YAML configuration, its workers not yet connected. */
  async master(
    name: string,
    yaml: string,
    more: Partial<Pick<MasterDeps, 'drainMs' | 'timing' | 'db' | 'env' | 'failAt'>> & {
      /** Events the master never hears (as if Redis had lost them). */
      deafTo?: (key: string) => boolean;
      /** Real workers in place of scripted ones (a worker server the test starts). */
      listenForWorkers?: MasterDeps['listenForWorkers'];
    } = {},
  ): Promise<InProcessMaster> {
    const redis = new Redis(this.redis.url, { maxRetriesPerRequest: 3 });
    const subscriber = new Redis(this.redis.url);
    this.conns.push(redis, subscriber);
    const bus = busSubscription(subscriber);
    await bus.ready;
    const deaf = more.deafTo ?? (() => false);
    const events = Object.assign((h: (m: BusMessage) => void) => bus((m) => !deaf(m.k) && h(m)), {
      ready: bus.ready,
    });
    const workers = new ScriptedWorkers();
    const master = await startMaster({
      db: more.db ?? this.db.pool,
      redis,
      jobsRedis: this.redis.url,
      events,
      config: parseMasterConfig(yaml),
      name,
      log: createLogger(`master ${name}`, 'silent'),
      listenForWorkers: more.listenForWorkers ?? (async (e) => workers.attach(e)),
      workdir: this.dir,
      env: more.env ?? {},
      ...(more.drainMs !== undefined ? { drainMs: more.drainMs } : {}),
      ...(more.failAt !== undefined ? { failAt: more.failAt } : {}),
      timing: { distributorPollMs: 500, ...more.timing },
    });
    let stopped: Promise<void> | null = null;
    const m: InProcessMaster = { master, workers, stop: () => (stopped ??= master.stop()) };
    this.started.push(m);
    return m;
  }

  /**
   * A master that never polls, `worker` connected, its start's pass and the connection's (each
   * over every builder) done: from here only what it hears asks for a pass.
   */
  async quietMaster(
    name: string,
    yaml: string,
    worker: string,
    deafTo: (key: string) => boolean,
  ): Promise<InProcessMaster> {
    const m = await this.master(name, yaml, { deafTo, timing: { distributorPollMs: 3_600_000 } });
    m.workers.connect(new ScriptedWorker(worker));
    await eventually(
      () => claimPasses(m),
      (n) => n >= 2,
      { timeoutMs: 60_000 },
    );
    return m;
  }

  /** One build set of one request for this builder, as a force of one stamp leaves it. */
  request(
    builder: string,
    properties?: Record<string, readonly [unknown, string]>,
  ): Promise<{ bsid: number; brid: number }> {
    return transact(this.ctx, async (tx) => {
      const builderid = (await findBuilderId(tx, builder, false))!;
      const added = await addBuildset(tx, {
        scheduler: 'test',
        sourcestamps: [{ codebase: '', repository: 'r', branch: 'main', revision: 'abc', project: '' }],
        reason: 'test',
        builderids: [builderid],
        ...(properties ? { properties } : {}),
      });
      return { bsid: added.bsid, brid: added.brids[builderid]! };
    });
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.started.map((m) => m.stop()));
    for (const c of this.conns) c.disconnect();
    await this.redis.proc.stop('SIGKILL');
    await this.db.drop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
