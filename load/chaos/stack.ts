// A whole Flotilla cluster of real processes to torture: its own PostgreSQL server (so that
// it can be stopped and started without touching anyone else's), its own Redis (append-only,
// so that a restart keeps its data unless a scenario throws the data away), APIs, masters
// and workers, each started as `npm run <name>` starts it and signalled by its pid. Nothing
// here reaches into a service: faults are signals to processes, and everything observed is
// observed over HTTP, the database and the files the build commands write.
//
// Needs root (PostgreSQL runs as the postgres OS user, as deploy/local/lib.sh runs it).
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort, type Running, start, status } from '../../test/helpers/processes.js';
import { type SentinelDeployment, startSentinelDeployment } from '../../test/helpers/sentinel.js';
import { serviceCommand } from '../../test/helpers/service-build.js';
import { waitFor } from '../../test/helpers/wait.js';
import { forceOneRequest } from '../force.js';
import { leftoverCommands } from './records.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const LIB = join(ROOT, 'deploy/local/lib.sh');
const JOB = join(ROOT, 'load/chaos/job.sh');

export interface JobShape {
  /** Numbered lines each build prints. */
  lines: number;
  /** Lines per batch. */
  batch: number;
  /** Seconds between batches. */
  pause: number;
}

export interface StackOptions {
  /** Folder for every server's state, the logs and the shared record file. */
  dir: string;
  apis: number;
  masters: number;
  /** Workers, spread over the masters in turn (w1 on m1, w2 on m2, ...). */
  workers: number;
  /** Builds each worker runs at once. */
  maxBuilds: number;
  expirySeconds: number;
  job: JobShape;
  /** First of the ports to use (the runner's range); without it, free ports. */
  basePort?: number;
  /** LOG_LEVEL of the services (their output is kept in DIR/logs). */
  logLevel?: string;
  /** Extra environment for every master (MASTER_DRAIN_SECONDS, ...). */
  masterEnv?: Record<string, string>;
  /** Extra YAML appended to the masters' configuration. */
  extraYaml?: string;
  /** The folder whose services/ run (a snapshot of another commit); default: this tree. */
  src?: string;
  /**
   * A migrated database to use instead of a PostgreSQL server of the stack's own (the test
   * suite's, which has one already); PostgreSQL faults cannot be injected then.
   */
  databaseUrl?: string;
  /**
   * Redis as a Sentinel deployment (a primary, a replica, three sentinels:
   * test/helpers/sentinel.ts), which the services find through REDIS_SENTINELS, instead of
   * one server.
   */
  sentinel?: boolean;
}

export interface Proc {
  name: string;
  kind: 'api' | 'master' | 'worker';
  proc: Running;
  /** The port of /readyz. */
  probe: number;
  /** API: its HTTP port; master: its worker port. */
  port: number;
  env: Record<string, string>;
}

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });

/**
 * How node runs a script of services/ (`services/api/main.ts`): under vitest, from the suite's
 * build of this tree, as every other process a test starts (test/helpers/service-build.ts:
 * half the CPU of tsx's loader); a snapshot of another commit (`src`), or this tree outside
 * vitest, through tsx.
 */
function nodeArgs(src: string | undefined, script: string): string[] {
  return src === undefined ? serviceCommand(script) : ['--import', 'tsx', join(src, script)];
}

function pgBin(): string {
  return execFileSync('bash', ['-c', `source ${LIB} && pg_bin`], { encoding: 'utf8' }).trim();
}

export class ChaosStack {
  readonly procs: Proc[] = [];
  readonly record: string;
  readonly config: string;
  pgPort = 0;
  redisPort = 0;
  databaseUrl = '';
  redisUrl = '';
  redis: Running | null = null;
  sentinel: SentinelDeployment | null = null;
  /** Processes held by SIGSTOP right now (continued before they are stopped for good). */
  readonly frozen = new Set<Proc>();
  private nextPort: number;
  private readonly pgDir: string;
  private readonly redisDir: string;
  private readonly logs: string;
  private binDir: string | undefined;
  private pool: pg.Pool | null = null;
  private stopped = false;

  constructor(readonly opts: StackOptions) {
    this.nextPort = opts.basePort ?? 0;
    this.pgDir = join(opts.dir, 'pg');
    this.redisDir = join(opts.dir, 'redis');
    this.logs = join(opts.dir, 'logs');
    this.record = join(opts.dir, 'record.txt');
    this.config = join(opts.dir, 'master.yaml');
  }

  private async port(): Promise<number> {
    if (!this.nextPort) return freePort();
    return this.nextPort++;
  }

  /** PostgreSQL (a fresh database), Redis (empty), the configuration: everything but the services. */
  async startStores(): Promise<void> {
    mkdirSync(this.logs, { recursive: true });
    writeFileSync(this.record, '');
    this.writeConfig();
    if (this.opts.databaseUrl) this.databaseUrl = this.opts.databaseUrl;
    else await this.startOwnPostgres();
    if (this.opts.sentinel) {
      this.sentinel = await startSentinelDeployment({ port: () => this.port() });
      return;
    }
    this.redisPort = await this.port();
    this.redisUrl = `redis://127.0.0.1:${this.redisPort}`;
    await this.startRedis();
  }

  /** How the services find Redis: its URL, or the sentinels. */
  private redisEnv(): Record<string, string> {
    if (!this.sentinel) return { REDIS_URL: this.redisUrl };
    const { sentinels, masterName } = this.sentinel.target;
    return {
      REDIS_SENTINELS: sentinels.map((s) => `${s.host}:${s.port}`).join(','),
      REDIS_SENTINEL_NAME: masterName,
    };
  }

  /** A PostgreSQL server of the stack's own, with a fresh database, migrated. */
  private async startOwnPostgres(): Promise<void> {
    this.pgPort = await this.port();
    // Durable, as a production server is: a PostgreSQL without fsync and synchronous commits
    // (pg_up's "fast") forgets transactions it acknowledged when it is stopped as a crash
    // stops it, and a build's log then misses a batch that the master was told was stored
    // (seen: 2,000 lines of a SUCCESS build gone in the 30 s outage) — the harness's loss,
    // not the cluster's.
    execFileSync('bash', ['-c', `source ${LIB} && pg_up "$0" "$1"`, this.pgDir, String(this.pgPort)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const admin = `postgresql://flotilla:flotilla@127.0.0.1:${this.pgPort}/flotilla`;
    const db = `chaos_${Date.now().toString(36)}`;
    await this.sql(admin, `CREATE DATABASE ${db}`);
    this.databaseUrl = `postgresql://flotilla:flotilla@127.0.0.1:${this.pgPort}/${db}`;
    execFileSync(process.execPath, nodeArgs(this.opts.src, 'services/core/db/migrate-cli.ts'), {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: this.databaseUrl, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  }

  private writeConfig(): void {
    const { job, workers, maxBuilds, expirySeconds } = this.opts;
    const names = Array.from({ length: workers }, (_, i) => `w${i + 1}`);
    const command = `sh ${JOB} %(prop:token)s %(prop:buildnumber)s ${job.lines} ${job.batch} ${job.pause} ${this.record}`;
    const yaml = [
      'title: Flotilla chaos',
      `master_expiry_seconds: ${expirySeconds}`,
      // The GET load comes from one address: it must not be rate limited.
      'www: { rate_limit: { enabled: false } }',
      'workers:',
      ...names.map((n) => `  - { name: ${n}, password: chaos-${n}, max_builds: ${maxBuilds} }`),
      'builders:',
      '  - name: chaos',
      `    workers: [${names.join(', ')}]`,
      '    steps:',
      `      - { type: shell, name: print, command: ${JSON.stringify(command)} }`,
      'force_schedulers:',
      '  - name: chaos',
      '    builders: [chaos]',
      '    properties: [{ type: string, name: token }]',
      this.opts.extraYaml ?? '',
    ].join('\n');
    writeFileSync(this.config, `${yaml}\n`);
  }

  private async sql(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResultRow[]> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query(text, values)).rows;
    } finally {
      await c.end();
    }
  }

  /**
   * A query against the cluster's database, on a small pool of kept connections: a connection
   * that a PostgreSQL restart broke fails its query and leaves the pool, and the next query
   * opens a new one. The checks and waits poll it every 100-250 ms for the whole of a
   * scenario; a new connection per query (as before) cost a SCRAM handshake on both sides and
   * a fresh backend each time, some 500 to 1,000 per fault file.
   */
  async query(text: string, values: unknown[] = []): Promise<pg.QueryResultRow[]> {
    if (this.stopped) throw new Error('the stack is stopped');
    if (!this.pool) {
      this.pool = new pg.Pool({ connectionString: this.databaseUrl, max: 3, idleTimeoutMillis: 10_000 });
      // A kept connection that the server drops while idle is removed by the pool; the
      // error it reports is expected here (faults stop PostgreSQL on purpose).
      this.pool.on('error', () => {});
    }
    return (await this.pool.query(text, values)).rows;
  }

  // --- PostgreSQL -----------------------------------------------------------------------

  private pgCtl(...args: string[]): void {
    if (this.opts.databaseUrl)
      throw new Error('the stack runs on a database it was given: no PostgreSQL of its own');
    this.binDir ??= pgBin();
    run('runuser', ['-u', 'postgres', '--', `${this.binDir}/pg_ctl`, '-D', this.pgDir, ...args]);
  }

  /**
   * Stop PostgreSQL: `immediate` is a crash for every client (what a failover looks like);
   * `fast` the clean stop (SIGINT: sessions ended, a checkpoint written).
   */
  stopPostgres(mode: 'immediate' | 'fast' = 'immediate'): void {
    this.pgCtl('-m', mode, '-w', '-t', '60', 'stop');
  }

  startPostgres(): void {
    this.pgCtl('-o', `-p ${this.pgPort}`, '-l', join(this.pgDir, 'postgres.log'), '-w', '-t', '60', 'start');
  }

  // --- Redis ------------------------------------------------------------------------------

  /** Redis in the foreground (its pid is ours), append-only with every write synced. */
  async startRedis(): Promise<void> {
    mkdirSync(this.redisDir, { recursive: true });
    const r = start(
      'redis-server',
      [
        '--port',
        String(this.redisPort),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.redisDir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      {},
    );
    await waitFor('redis', async () => r.output().includes('Ready to accept connections'), {
      timeoutMs: 30_000,
      proc: r,
    });
    this.redis = r;
  }

  /**
   * kill -9 of Redis (or `signal`: SIGTERM, a clean stop that syncs its append-only file);
   * with `empty`, its files go too, so it comes back knowing nothing.
   */
  async killRedis(empty = false, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.redis?.stop(signal);
    this.keepLog('redis', this.redis);
    this.redis = null;
    if (empty) rmSync(this.redisDir, { recursive: true, force: true });
  }

  // --- services ---------------------------------------------------------------------------

  private masterUrl(m: Proc): string {
    return `ws://127.0.0.1:${m.port}/worker`;
  }

  async startApi(name: string): Promise<Proc> {
    const [port, probe] = [await this.port(), 0];
    const env = {
      DATABASE_URL: this.databaseUrl,
      ...this.redisEnv(),
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}/`,
      MASTER_CONFIG: this.config,
      LOG_LEVEL: this.opts.logLevel ?? 'warn',
    };
    return this.launch({ name, kind: 'api', port, probe: probe || port, env });
  }

  async startMaster(name: string): Promise<Proc> {
    const [port, probe] = [await this.port(), await this.port()];
    const env = {
      DATABASE_URL: this.databaseUrl,
      ...this.redisEnv(),
      MASTER_CONFIG: this.config,
      MASTER_NAME: name,
      WORKER_PORT: String(port),
      PROBE_PORT: String(probe),
      LOG_LEVEL: this.opts.logLevel ?? 'info',
      ...this.opts.masterEnv,
    };
    return this.launch({ name, kind: 'master', port, probe, env });
  }

  async startWorker(name: string, master: Proc): Promise<Proc> {
    const probe = await this.port();
    // A worker reads its password from a file (or standard input), never its environment.
    const passwordFile = join(this.opts.dir, 'workers', `${name}.password`);
    mkdirSync(dirname(passwordFile), { recursive: true });
    writeFileSync(passwordFile, `chaos-${name}\n`, { mode: 0o600 });
    const env = {
      MASTER_URL: this.masterUrl(master),
      WORKER_NAME: name,
      WORKER_PASSWORD_FILE: passwordFile,
      WORKER_DIR: join(this.opts.dir, 'workers', name),
      PROBE_PORT: String(probe),
      LOG_LEVEL: this.opts.logLevel ?? 'info',
    };
    return this.launch({ name, kind: 'worker', port: 0, probe, env });
  }

  private async launch(p: Omit<Proc, 'proc'>): Promise<Proc> {
    const args = nodeArgs(this.opts.src, `services/${p.kind}/main.ts`);
    const proc = start(process.execPath, args, { LOG_LEVEL: 'info', ...p.env });
    const entry: Proc = { ...p, proc };
    const i = this.procs.findIndex((x) => x.name === p.name);
    if (i >= 0) this.procs[i] = entry;
    else this.procs.push(entry);
    await this.ready(entry);
    return entry;
  }

  /** Start a process again with the environment it had (a master under the same name). */
  restart(p: Proc): Promise<Proc> {
    this.keepLog(p.name, p.proc);
    return this.launch({ name: p.name, kind: p.kind, port: p.port, probe: p.probe, env: p.env });
  }

  async ready(p: Proc, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      `${p.name} ready`,
      async () => (await status(`http://127.0.0.1:${p.probe}/readyz`)) === 200,
      { timeoutMs, proc: p.proc },
    );
  }

  get(name: string): Proc {
    const p = this.procs.find((x) => x.name === name);
    if (!p) throw new Error(`no process ${name}`);
    return p;
  }

  of(kind: Proc['kind']): Proc[] {
    return this.procs.filter((p) => p.kind === kind);
  }

  /** The APIs, masters and workers of the options; worker i connects to master i mod M. */
  async startServices(): Promise<void> {
    const { apis, masters, workers } = this.opts;
    for (let i = 1; i <= apis; i++) await this.startApi(`api${i}`);
    const ms: Proc[] = [];
    for (let i = 1; i <= masters; i++) ms.push(await this.startMaster(`m${i}`));
    for (let i = 1; i <= workers; i++) await this.startWorker(`w${i}`, ms[(i - 1) % ms.length]!);
  }

  signal(p: Proc, sig: NodeJS.Signals): void {
    process.kill(p.proc.pid, sig);
    if (sig === 'SIGSTOP') this.frozen.add(p);
    if (sig === 'SIGCONT') this.frozen.delete(p);
  }

  apiBase(p: Proc): string {
    return `http://127.0.0.1:${p.port}/api/v2`;
  }

  /** Force one build of the chaos builder with this token; returns its request id. */
  async force(token: string): Promise<number> {
    for (const api of this.of('api')) {
      try {
        return await forceOneRequest(
          this.apiBase(api),
          'chaos',
          { username: 'Chaos <chaos@example.test>', reason: 'chaos', token },
          { headers: { accept: 'application/json' } },
        );
      } catch {
        // that API is down, or refused it: the next one
      }
    }
    throw new Error(`could not force a build with token ${token}`);
  }

  /**
   * Build commands that outlived their worker (what the orphan check counts) are ours to end:
   * their process groups, found through the pids they wrote to the record file.
   */
  killLeftoverCommands(): number[] {
    const left = leftoverCommands(this.record);
    for (const pgid of left) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    return left;
  }

  private keepLog(name: string, r: Running | null): void {
    if (r) appendFileSync(join(this.logs, `${name}.log`), r.output());
  }

  /** Stop every process by its pid (SIGKILL: nothing here needs a clean end), keep their logs. */
  async stop(): Promise<void> {
    this.stopped = true;
    const pool = this.pool;
    this.pool = null;
    await pool?.end().catch(() => {});
    for (const p of this.frozen) this.signal(p, 'SIGCONT');
    await Promise.all(this.procs.map((p) => p.proc.stop('SIGKILL')));
    for (const p of this.procs) this.keepLog(p.name, p.proc);
    this.killLeftoverCommands();
    await this.killRedis();
    await this.sentinel?.stop();
    if (this.opts.databaseUrl) return;
    try {
      this.pgCtl('-m', 'immediate', '-w', '-t', '60', 'stop');
    } catch {
      // not running
    }
  }
}
