// A master's membership in the cluster: its row in `masters` (found by name, so the same
// across restarts), the heartbeat that keeps it active (expire-masters marks a master that
// went silent for the expiry time inactive), the builders and workers its configuration
// names, and the workers connected to it right now. The heartbeat is also the master's lease
// (liveness.ts): while it has not succeeded for the outage limit, the master's builds must
// stop, and a heartbeat that finds the master expired (it was away: paused, cut off) makes
// it let go of everything the cluster took from it before it registers again.

import { setTimeout as sleep } from 'node:timers/promises';
import type { MasterConfig } from '../core/config/master-config.js';
import {
  type DataContext,
  disconnectAllWorkersForMaster,
  findCodebaseId,
  findProjectId,
  findWorkerIds,
  masterActive,
  masterHeartbeat,
  masterStopped,
  previousLife,
  type Tx,
  transact,
  updateBuilderList,
  updateCodebaseInfo,
  updateProjectInfo,
  workerDisconnected,
  workersConfigured,
  workersConnected,
} from '../core/data/index.js';
import { noSuch } from '../core/errors.js';
import type { Logger } from '../core/telemetry/logger.js';
import { type Lease, ridingOut } from './claims.js';
import { type Liveness, livenessOf } from './liveness.js';
import { type ConnectionChange, ConnectionRecords } from './workers/connection-records.js';

export interface MembershipHooks {
  /**
   * The cluster expired this master while it was away (its heartbeat found it inactive): its
   * builds were ended and their requests handed on. Called before the master registers again.
   */
  expired?: () => void;
  /**
   * The database has been out of reach for longer than the outage limit: the cluster may
   * expire this master soon, so its commands must stop now. Called once per outage.
   */
  leaseLost?: () => void;
  /** The workers connected right now (recorded again when the master registers again). */
  connectedWorkers?: () => { name: string; info: object }[];
}

// A heartbeat that failed is tried again this soon (the lease runs on the last success).
const RETRY_HEARTBEAT_MS = 1000;
const LEASE_CHECK_MS = 1000;

export class Membership implements Lease {
  masterid = 0;
  readonly builderIds = new Map<string, number>();
  readonly workerIds = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | undefined;
  private leaseTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** When the last heartbeat that succeeded began (what the cluster's view of us rests on). */
  private lastBeat = 0;
  private leaseLostSignalled = false;
  /** The heartbeat running now, which stop() waits for: none may write after the master left. */
  private beating: Promise<void> | null = null;
  /** What the parts started after membership want to hear (attach). */
  private readonly hooks = new Set<MembershipHooks>();
  private readonly connections = new ConnectionRecords(
    (changes) => this.writeConnections(changes),
    (workerid) => noSuch(`worker ${workerid}`),
  );
  /** False from the moment a heartbeat found this master expired until it is registered again. */
  active = false;
  private readonly liveness: Liveness;
  /**
   * The logs of a previous life's builds that start() finished: that life will never have
   * them compressed, so the master queues them once its jobs run.
   */
  readonly previousLifeLogs: number[] = [];

  constructor(
    private readonly ctx: DataContext,
    private readonly name: string,
    private config: MasterConfig,
    private readonly log: Logger,
  ) {
    this.liveness = livenessOf(config);
  }

  /**
   * Hear what membership finds: the parts that start after it (the runner, the worker
   * listeners) attach when they start and call the returned function when they stop.
   */
  attach(hooks: MembershipHooks): () => void {
    this.hooks.add(hooks);
    return () => void this.hooks.delete(hooks);
  }

  /** Still safe to run and write: the last heartbeat is recent enough (liveness.ts). */
  valid(): boolean {
    return Date.now() - this.lastBeat < this.liveness.outageLimitMs;
  }

  /**
   * Register (or come back) as an active master and record what the configuration names.
   * A previous life of this name that did not stop cleanly (killed, its pod rescheduled) is
   * cleaned up first, as Buildbot's housekeeping cleans up after a stopped master: its open
   * builds end RETRY with their steps and logs finished, its claims are released, its workers
   * cleared. Not before its commands can have stopped, though: its workers kill them within
   * the lost-master bound of its last word, and its requests must not run again sooner.
   */
  async start(): Promise<number> {
    const life = await ridingOut(() => transact(this.ctx, (tx) => previousLife(tx, this.name)));
    if (life?.active) {
      const wait = life.lastActive * 1000 + this.liveness.lostMasterBoundMs + 1000 - Date.now();
      if (wait > 0) {
        this.log.info(
          { masterid: life.masterid, waitMs: Math.round(wait) },
          'waiting for the commands of a previous life to have stopped',
        );
        await sleep(wait);
      }
      const cleaned = await ridingOut(() =>
        transact(this.ctx, (tx) => {
          this.previousLifeLogs.length = 0; // a transaction tried again starts afresh
          return masterStopped(tx, life.masterid, this.previousLifeLogs);
        }),
      );
      if (cleaned)
        this.log.warn({ masterid: life.masterid }, 'cleaned up after a previous life that did not stop');
    }
    const started = Date.now();
    await ridingOut(() => this.register());
    this.lastBeat = started;
    this.active = true;
    this.schedule(this.liveness.heartbeatMs);
    this.leaseTimer = setInterval(() => this.checkLease(), LEASE_CHECK_MS);
    this.leaseTimer.unref();
    this.log.info({ masterid: this.masterid, builders: this.builderIds.size }, 'master registered');
    return this.masterid;
  }

  /**
   * Record what a reloaded configuration names (master/reconfigure.ts): builders added and
   * removed on this master, projects, and which builders each worker serves; a removed worker
   * serves none here. Its liveness timings are the old ones (a change of them is refused).
   */
  async reconfigure(config: MasterConfig): Promise<void> {
    const before = this.config;
    await ridingOut(() =>
      transact(this.ctx, async (tx) => {
        this.config = config;
        await this.recordConfigured(tx);
        // A removed worker serves none of this master's builders.
        const kept = new Set(config.workers.map((w) => w.name));
        const removed = new Map<number, number[]>();
        for (const w of before.workers) {
          const workerid = this.workerIds.get(w.name);
          if (!kept.has(w.name) && workerid !== undefined) removed.set(workerid, []);
        }
        if (removed.size > 0) await workersConfigured(tx, this.masterid, removed);
      }),
    ).catch((err: unknown) => {
      this.config = before;
      throw err;
    });
    const names = new Set(config.builders.map((b) => b.name));
    for (const name of [...this.builderIds.keys()]) if (!names.has(name)) this.builderIds.delete(name);
  }

  /** masterActive, and what the configuration names, in one transaction. */
  private register(): Promise<void> {
    return transact(this.ctx, async (tx) => {
      this.masterid = await masterActive(tx, this.name);
      // Whatever a previous life of this master left connected is not connected now.
      await disconnectAllWorkersForMaster(tx, this.masterid);
      await this.recordConfigured(tx);
    });
  }

  /** The projects, builders and workers the configuration names, and the connected workers. */
  private async recordConfigured(tx: Tx): Promise<void> {
    // Buildbot 4.3's projects first: a builder names its own by id.
    const projectIds = new Map<string, number>();
    for (const p of this.config.projects) {
      const id = await findProjectId(tx, p.name);
      await updateProjectInfo(tx, id, {
        slug: p.slug ?? p.name,
        description: p.description ?? null,
        description_format: p.description_format ?? null,
        description_html: null,
      });
      projectIds.set(p.name, id);
    }
    // Then its codebases (botmaster.reconfig_codebases); the configuration made sure each
    // names one of the projects.
    for (const c of this.config.codebases) {
      const projectid = projectIds.get(c.project)!;
      const { id, created } = await findCodebaseId(tx, projectid, c.name);
      await updateCodebaseInfo(tx, id, { projectid, slug: c.slug ?? c.name }, created);
    }
    const ids = await updateBuilderList(
      tx,
      this.masterid,
      this.config.builders.map((b) => ({
        name: b.name,
        description: b.description ?? null,
        tags: b.tags,
        projectid: b.project === undefined ? null : (projectIds.get(b.project) ?? null),
      })),
    );
    for (const [i, b] of this.config.builders.entries()) this.builderIds.set(b.name, ids[i]!);
    // Every worker in a few statements, not a few each (core/data/builders.ts's
    // updateBuilderList says what that cost at 1,000 workers).
    const workerIds = await findWorkerIds(
      tx,
      this.config.workers.map((w) => w.name),
    );
    const on = new Map<number, number[]>();
    for (const w of this.config.workers) {
      this.workerIds.set(w.name, workerIds.get(w.name)!);
      on.set(workerIds.get(w.name)!, []);
    }
    for (const b of this.config.builders)
      for (const name of b.workers) on.get(workerIds.get(name) ?? -1)?.push(this.builderIds.get(b.name)!);
    await workersConfigured(tx, this.masterid, on);
    const connected = [...this.hooks].flatMap((h) => h.connectedWorkers?.() ?? []);
    await workersConnected(
      tx,
      this.masterid,
      connected.flatMap((w) => {
        const workerid = this.workerIds.get(w.name);
        return workerid === undefined ? [] : [{ workerid, info: w.info }];
      }),
    );
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.heartbeat = setTimeout(() => {
      this.beating = this.beat().finally(() => {
        this.beating = null;
      });
    }, ms);
    this.heartbeat.unref();
  }

  private async beat(): Promise<void> {
    const started = Date.now();
    try {
      const alive = await transact(this.ctx, (tx) => masterHeartbeat(tx, this.masterid));
      if (!alive && !this.stopped) {
        this.active = false;
        this.log.error(
          { masterid: this.masterid },
          'this master was expired while it was away: its builds were handed on; registering again',
        );
        for (const h of this.hooks) h.expired?.();
        await this.register();
        this.active = true;
      }
      this.lastBeat = started;
      this.checkLease();
      // At a steady rate, however long this one took: a slow database must not stretch the
      // time between the beats the lease rests on.
      this.schedule(Math.max(0, this.liveness.heartbeatMs - (Date.now() - started)));
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'heartbeat failed');
      this.schedule(Math.min(RETRY_HEARTBEAT_MS, this.liveness.heartbeatMs));
    }
  }

  private checkLease(): void {
    if (this.valid()) {
      this.leaseLostSignalled = false;
      return;
    }
    if (this.leaseLostSignalled || this.stopped) return;
    this.leaseLostSignalled = true;
    this.log.error(
      { lastHeartbeatAgoMs: Date.now() - this.lastBeat, limitMs: this.liveness.outageLimitMs },
      "the database has been out of reach past the outage limit: stopping this master's builds",
    );
    for (const h of this.hooks) h.leaseLost?.();
  }

  /** Recorded with the others that come while a write is under way (connection-records.ts). */
  async workerConnected(name: string, info: object): Promise<void> {
    const workerid = this.workerIds.get(name);
    if (workerid === undefined) return;
    await this.connections.record({ kind: 'connected', workerid, info });
  }

  async workerDisconnected(name: string): Promise<void> {
    const workerid = this.workerIds.get(name);
    if (workerid === undefined) return;
    await this.connections.record({ kind: 'disconnected', workerid });
  }

  /** One transaction, in order: each run of connections in one workersConnected. */
  private writeConnections(changes: readonly ConnectionChange[]): Promise<number[]> {
    return transact(this.ctx, async (tx) => {
      const missing: number[] = [];
      let run: { workerid: number; info: object }[] = [];
      const connectRun = async () => {
        if (run.length) missing.push(...(await workersConnected(tx, this.masterid, run)));
        run = [];
      };
      for (const c of changes) {
        if (c.kind === 'connected') run.push(c);
        else {
          await connectRun();
          await workerDisconnected(tx, c.workerid, this.masterid);
        }
      }
      await connectRun();
      return missing;
    });
  }

  /** Leave the cluster: no more heartbeats, and masterStopped's housekeeping. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.heartbeat);
    clearInterval(this.leaseTimer);
    await this.beating;
    if (this.masterid) await transact(this.ctx, (tx) => masterStopped(tx, this.masterid));
  }
}
