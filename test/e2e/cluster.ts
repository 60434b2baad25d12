// A whole Flotilla cluster of real processes for end-to-end tests: its own database and its
// own Redis (so that no other suite's control messages reach its builds), an API
// (test/helpers/api.ts's apiProcess), masters and workers, each started like its container
// and stopped by pid. Its configuration is test/e2e/master.yaml (or the test's own base),
// with the test's changes given as data: start({ config: { ... } }), merged and checked by
// test/helpers/master-config.ts. A cluster is costly (an API, a master and workers, each a
// Node process): files that can, share one across their tests.
//
// Not a cluster, and so started with helpers/processes.ts's startService on their own: one
// master or worker process whose start or exit is what the test reads (test/processes/:
// lifecycle, ports-taken, ignored-keys, unsafe-timings; test/worker/orphans.test.ts, a worker
// against a master the test plays). They need no API and often no database, exit on purpose,
// and read the process's own log; a cluster would start three processes to watch one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publish } from '../../services/core/events/bus.js';
import { createRedis } from '../../services/core/redis.js';
import { type ApiProcess, apiProcess, restartApiProcess } from '../helpers/api.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { type ConfigOverride, masterYaml } from '../helpers/master-config.js';
import { freePort, type Running, startRedis, startService, status } from '../helpers/processes.js';
import { sample } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/wait.js';

const PASSWORDS = { W1_PASSWORD: 'pw-one', W2_PASSWORD: 'pw-two' };
// How long a process may take to be ready: generous, since a loaded machine starts Node
// processes slowly, and only a process that never gets ready waits it out.
const READY_MS = 90_000;

export interface ClusterOptions {
  /** What this cluster's configuration changes of the base (test/helpers/master-config.ts). */
  config?: ConfigOverride;
  /** YAML in place of test/e2e/master.yaml, as the base that `config` changes. */
  baseYaml?: string;
  /** More of the API's environment. */
  apiEnv?: Record<string, string>;
  /** Same as config: { master_expiry_seconds }. */
  masterExpirySeconds?: number;
}

/** The YAML every process of a cluster reads: the base with the override merged over it. */
function clusterYaml(opts: ClusterOptions): string {
  const expiry = opts.masterExpirySeconds ? { master_expiry_seconds: opts.masterExpirySeconds } : {};
  return masterYaml({ ...expiry, ...opts.config }, opts.baseYaml);
}

export interface MasterProc {
  name: string;
  proc: Running;
  workerPort: number;
  probePort: number;
}

export class Cluster {
  readonly procs: Running[] = [];
  api!: ApiProcess;
  readonly masters: MasterProc[] = [];
  private constructor(
    readonly db: TestDatabase,
    readonly redis: Awaited<ReturnType<typeof startRedis>>,
    readonly dir: string,
    /** The configuration every process reads: master.yaml, with the options of start(). */
    readonly config: string,
  ) {}

  static async start(opts: ClusterOptions = {}): Promise<Cluster> {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-e2e-'));
    const config = join(dir, 'master.yaml');
    writeFileSync(config, clusterYaml(opts));
    const c = new Cluster(await createDatabase('migrated'), await startRedis(), dir, config);
    try {
      c.api = await apiProcess({
        databaseUrl: c.db.url,
        redisUrl: c.redis.url,
        config: c.config,
        readyMs: READY_MS,
        ...(opts.apiEnv ? { env: opts.apiEnv } : {}),
      });
      c.procs.push(c.api.proc);
    } catch (err) {
      // The caller gets no cluster to stop: what was started is stopped here.
      await c.stop();
      throw err;
    }
    return c;
  }

  /** Stops the API (SIGTERM, as a rolling update does) and starts a new one on the same ports. */
  async restartApi(): Promise<void> {
    await this.api.proc.stop('SIGTERM');
    this.api = await restartApiProcess(this.api, READY_MS);
    this.procs.push(this.api.proc);
  }

  /** `workerPort`: where workers connect; a restarted master takes its old one back. */
  async startMaster(
    name: string,
    env: Record<string, string> = {},
    workerPort?: number,
  ): Promise<MasterProc> {
    const [wport, probePort] = [workerPort ?? (await freePort()), await freePort()];
    const proc = startService('master', {
      DATABASE_URL: this.db.url,
      REDIS_URL: this.redis.url,
      MASTER_CONFIG: this.config,
      MASTER_NAME: name,
      WORKER_PORT: String(wport),
      PROBE_PORT: String(probePort),
      LOG_LEVEL: 'info',
      ...PASSWORDS,
      ...env,
    });
    this.procs.push(proc);
    await waitFor(
      `master ${name}`,
      async () => (await status(`http://127.0.0.1:${probePort}/readyz`)) === 200,
      { timeoutMs: READY_MS, proc },
    );
    const m = { name, proc, workerPort: wport, probePort };
    this.masters.push(m);
    return m;
  }

  /** A worker, its password on standard input (env: more of its environment). */
  async startWorker(
    name: string,
    master: MasterProc,
    env: Record<string, string> = {},
  ): Promise<Running & { probePort: number }> {
    const probe = await freePort();
    const proc = startService(
      'worker',
      {
        MASTER_URL: `ws://127.0.0.1:${master.workerPort}/worker`,
        WORKER_NAME: name,
        WORKER_DIR: join(this.dir, name),
        PROBE_PORT: String(probe),
        LOG_LEVEL: 'warn',
        ...env,
      },
      env.WORKER_PASSWORD_FILE ? {} : { input: `${Cluster.password(name)}\n` },
    );
    this.procs.push(proc);
    await waitFor(`worker ${name}`, async () => (await status(`http://127.0.0.1:${probe}/readyz`)) === 200, {
      timeoutMs: READY_MS,
      proc,
    });
    return Object.assign(proc, { probePort: probe });
  }

  /** The password the configuration gives a worker. */
  static password(name: string): string {
    return name === 'w1' ? PASSWORDS.W1_PASSWORD : name === 'w2' ? PASSWORDS.W2_PASSWORD : 'q';
  }

  async get<T = any>(path: string): Promise<T> {
    const res = await fetch(this.api.base + path, { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }

  async text(path: string): Promise<string> {
    const res = await fetch(this.api.base + path);
    if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
    return res.text();
  }

  async rpc(path: string, method: string, params: Record<string, unknown> = {}): Promise<any> {
    const res = await fetch(this.api.base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method, id: 1, params }),
    });
    const body = (await res.json()) as { result?: unknown; error?: unknown };
    if (res.status !== 200) throw new Error(`POST ${path} ${method}: ${res.status} ${JSON.stringify(body)}`);
    return body.result;
  }

  /** Force a build set through a force scheduler; returns [bsid, {builderid: brid}]. */
  force(scheduler: string, params: Record<string, unknown> = {}): Promise<[number, Record<string, number>]> {
    return this.rpc(`/forceschedulers/${scheduler}`, 'force', {
      username: 'E2E <e2e@example.com>',
      reason: 'e2e',
      ...params,
    });
  }

  /**
   * Why no build can start or finish any more: every master this cluster started has exited
   * (a wait for a build then fails at once, naming them, instead of at its limit).
   */
  readonly noMaster = (): string | undefined => {
    const alive = this.masters.filter(
      (m) => m.proc.child.exitCode === null && m.proc.child.signalCode === null,
    );
    return this.masters.length > 0 && alive.length === 0
      ? `every master exited (${this.masters.map((m) => m.name).join(', ')})`
      : undefined;
  };

  async buildOf(brid: number, timeoutMs = READY_MS): Promise<any> {
    let build: any;
    await waitFor(
      `a build of request ${brid}`,
      async () => {
        build = (await this.get(`/buildrequests/${brid}/builds`)).builds[0];
        return build !== undefined;
      },
      { timeoutMs, gaveUp: this.noMaster },
    );
    return build;
  }

  async finished(buildid: number, timeoutMs = 2 * READY_MS): Promise<any> {
    let build: any;
    await waitFor(
      `build ${buildid} to finish`,
      async () => {
        build = (await this.get(`/builds/${buildid}`)).builds[0];
        return build.complete;
      },
      { timeoutMs, gaveUp: this.noMaster },
    );
    return build;
  }

  /** How many claim passes a master has made (its /metrics). */
  async claimPasses(m: MasterProc): Promise<number> {
    const res = await fetch(`http://127.0.0.1:${m.probePort}/metrics`);
    return sample(await res.text(), 'flotilla_claim_pass_seconds_count', {}) ?? 0;
  }

  /**
   * Resolves once the master has handled every event published before the call, and made a
   * claim pass after: what a test waits for before saying that something did not happen.
   * A handed-back request (id 0: none) wakes the distributor; passes never overlap, so the
   * pass that ends after a second wake-up began after the first was handled.
   */
  async settled(m: MasterProc): Promise<void> {
    const redis = createRedis(this.redis.url, 'e2e-settle');
    try {
      for (let round = 0; round < 2; round++) {
        const before = await this.claimPasses(m);
        await publish(redis, ['buildrequests', 0, 'unclaimed'], {});
        await waitFor(`a claim pass by master ${m.name}`, async () => (await this.claimPasses(m)) > before, {
          proc: m.proc,
        });
      }
    } finally {
      redis.disconnect();
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.stop('SIGKILL')));
    await this.redis.proc.stop('SIGKILL');
    await this.db.drop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
