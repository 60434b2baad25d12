// A master's membership in the cluster: its row in `masters` (found by name, so the same
// across restarts), the heartbeat that keeps it active (expire-masters marks a master that
// went silent for the expiry time inactive), the builders and workers its configuration
// names, and the workers connected to it right now.
import type { MasterConfig } from '../core/config/master-config.js';
import {
  type DataContext,
  disconnectAllWorkersForMaster,
  findWorkerId,
  masterActive,
  masterStopped,
  transact,
  updateBuilderList,
  workerConfigured,
  workerConnected,
  workerDisconnected,
} from '../core/data/index.js';
import type { Logger } from '../core/telemetry/logger.js';
import { heartbeatMs } from './liveness.js';

export class Membership {
  masterid = 0;
  readonly builderIds = new Map<string, number>();
  readonly workerIds = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: DataContext,
    private readonly name: string,
    private readonly config: MasterConfig,
    private readonly log: Logger,
  ) {}

  /** Register (or come back) as an active master and record what the configuration names. */
  async start(): Promise<number> {
    await transact(this.ctx, async (tx) => {
      this.masterid = await masterActive(tx, this.name);
      // Whatever a previous life of this master left connected is not connected now.
      await disconnectAllWorkersForMaster(tx, this.masterid);
      const ids = await updateBuilderList(
        tx,
        this.masterid,
        this.config.builders.map((b) => ({ name: b.name, description: b.description ?? null, tags: b.tags })),
      );
      for (const [i, b] of this.config.builders.entries()) this.builderIds.set(b.name, ids[i]!);
      for (const w of this.config.workers) {
        const workerid = await findWorkerId(tx, w.name);
        this.workerIds.set(w.name, workerid);
        const on = this.config.builders
          .filter((b) => b.workers.includes(w.name))
          .map((b) => this.builderIds.get(b.name)!);
        await workerConfigured(tx, workerid, this.masterid, on);
      }
    });
    this.heartbeat = setInterval(() => {
      transact(this.ctx, (tx) => masterActive(tx, this.name)).catch((err) =>
        this.log.warn({ err: (err as Error).message }, 'heartbeat failed'),
      );
    }, heartbeatMs(this.config.master_expiry_seconds));
    this.heartbeat.unref();
    this.log.info({ masterid: this.masterid, builders: this.builderIds.size }, 'master registered');
    return this.masterid;
  }

  async workerConnected(name: string, info: object): Promise<void> {
    const workerid = this.workerIds.get(name);
    if (workerid === undefined) return;
    await transact(this.ctx, (tx) => workerConnected(tx, workerid, this.masterid, info));
  }

  async workerDisconnected(name: string): Promise<void> {
    const workerid = this.workerIds.get(name);
    if (workerid === undefined) return;
    await transact(this.ctx, (tx) => workerDisconnected(tx, workerid, this.masterid));
  }

  /** Leave the cluster: no more heartbeats, and masterStopped's housekeeping. */
  async stop(): Promise<void> {
    clearInterval(this.heartbeat);
    if (this.masterid) await transact(this.ctx, (tx) => masterStopped(tx, this.masterid));
  }
}
