// The build request distributor: whenever something may have changed (a request was added
// or handed back, a worker connected, a build finished; at worst every POLL_MS), for each
// builder of this master that has an idle connected worker, claim the best pending request,
// highest priority first, then the oldest, and run it. A claim is all or nothing and unique
// across masters (core/data/buildrequests.ts), so a request never runs twice; losing the
// race to another master just moves on to the next request. Claims held by running builds
// are renewed periodically so that unclaimExpiredRequests leaves them alone.
import type { MasterConfig } from '../core/config/master-config.js';
import {
  claimBuildRequests,
  completeBuildRequests,
  type DataContext,
  reclaimBuildRequests,
  transact,
} from '../core/data/index.js';
import { sql } from '../core/db/pool.js';
import { Results } from '../core/results.js';
import type { Logger } from '../core/telemetry/logger.js';
import type { BuildRunner, ClaimedRequest } from './build/runner.js';
import type { RequestTraces } from './trace-links.js';
import type { WorkerConnection } from './workers/connection.js';
import type { WorkerServer } from './workers/server.js';

export const POLL_MS = 10_000;
export const RECLAIM_MS = 60_000;

export interface DistributorDeps {
  ctx: DataContext;
  config: MasterConfig;
  masterid: () => number;
  builderIds: ReadonlyMap<string, number>;
  workers: WorkerServer;
  runner: BuildRunner;
  /** Workers paused by an operator (control/worker/<id>/pause). */
  isPaused: (name: string) => boolean;
  log: Logger;
  /** Told how long each pass of the claim loop took. */
  onPass?: (seconds: number) => void;
  /** The traces of requests, for their builds to continue. */
  traces?: RequestTraces;
}

export class Distributor {
  private stopped = false;
  private running = false;
  private again = false;
  private poll: NodeJS.Timeout | undefined;
  private reclaim: NodeJS.Timeout | undefined;
  private readonly held = new Set<number>();
  readonly claimed = { won: 0, lost: 0 };

  constructor(private readonly deps: DistributorDeps) {}

  start(): void {
    this.poll = setInterval(() => this.kick(), POLL_MS);
    this.reclaim = setInterval(() => void this.renewClaims(), RECLAIM_MS);
    this.poll.unref();
    this.reclaim.unref();
    this.kick();
  }

  /** Stop claiming (running builds go on). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.poll);
    clearInterval(this.reclaim);
  }

  /** Something may have changed: look for work (coalesced; never two passes at once). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    const started = performance.now();
    this.pass()
      .then(() => this.deps.onPass?.((performance.now() - started) / 1000))
      .catch((err) => this.deps.log.warn({ err: (err as Error).message }, 'distribution pass failed'))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private idleWorkers(builder: MasterConfig['builders'][number]): WorkerConnection[] {
    const out: WorkerConnection[] = [];
    for (const name of builder.workers) {
      const conn = this.deps.workers.get(name);
      const cfg = this.deps.config.workers.find((w) => w.name === name);
      if (!conn?.connected || !cfg || this.deps.isPaused(name)) continue;
      if (this.deps.runner.onWorker(name) < cfg.max_builds) out.push(conn);
    }
    // The least busy first.
    return out.sort((a, b) => this.deps.runner.onWorker(a.name) - this.deps.runner.onWorker(b.name));
  }

  private async pass(): Promise<void> {
    for (const builder of this.deps.config.builders) {
      if (this.stopped) return;
      const builderid = this.deps.builderIds.get(builder.name);
      if (builderid === undefined) continue;
      let idle = this.idleWorkers(builder);
      if (idle.length === 0) continue;
      // The unclaimed set holds only pending requests (migration 0008), so this reads as many
      // ids as the queue holds; a cancelled request is kept elsewhere. The complete test stays
      // for a database that 0008 has not reached yet.
      const pending = await this.deps.ctx.db.query(sql`
        SELECT br.id, br.buildsetid FROM buildrequests br
        WHERE br.builderid = ${builderid} AND coalesce(br.complete, 0) = 0
          AND br.id = ANY (ARRAY(SELECT u.brid FROM flotilla.unclaimed_buildrequests u))
        ORDER BY br.priority DESC, br.submitted_at ASC, br.id ASC
        LIMIT ${idle.length * 4}`);
      for (const br of pending) {
        if (idle.length === 0 || this.stopped) break;
        const won = await this.claim(builder, builderid, br.id);
        if (!won) continue;
        const worker = idle.shift()!;
        this.held.add(br.id);
        const traceContext = this.deps.traces?.take(br.id);
        const req: ClaimedRequest = {
          brid: br.id,
          bsid: br.buildsetid,
          builderid,
          builder,
          ...(traceContext ? { traceContext } : {}),
        };
        void this.deps.runner
          .run(req, worker)
          .finally(() => {
            this.held.delete(br.id);
            this.kick();
          })
          .catch(() => {});
        idle = this.idleWorkers(builder).filter((w) => idle.includes(w));
      }
    }
  }

  /**
   * Claim one request; with collapse_requests, also claim the builder's other pending requests
   * of the same source stamps and complete them SKIPPED, as Buildbot's collapseRequests does.
   */
  private async claim(
    builder: MasterConfig['builders'][number],
    builderid: number,
    brid: number,
  ): Promise<boolean> {
    const ok = await transact(this.deps.ctx, async (tx) => {
      if (!(await claimBuildRequests(tx, [brid], this.deps.masterid()))) return false;
      if (builder.collapse_requests) {
        // The builder's other pending requests: the unclaimed set is pending only (0008).
        const others = await tx.q.query(sql`
          SELECT br.id FROM buildrequests br
          WHERE br.builderid = ${builderid} AND br.complete = 0 AND br.id <> ${brid}
            AND br.id = ANY (ARRAY(SELECT u.brid FROM flotilla.unclaimed_buildrequests u))
            AND (SELECT array_agg(ss.codebase || chr(1) || ss.repository || chr(1) || coalesce(ss.branch, '') ORDER BY ss.codebase)
                 FROM buildset_sourcestamps bss JOIN sourcestamps ss ON ss.id = bss.sourcestampid
                 WHERE bss.buildsetid = br.buildsetid)
              = (SELECT array_agg(ss.codebase || chr(1) || ss.repository || chr(1) || coalesce(ss.branch, '') ORDER BY ss.codebase)
                 FROM buildrequests me JOIN buildset_sourcestamps bss ON bss.buildsetid = me.buildsetid
                 JOIN sourcestamps ss ON ss.id = bss.sourcestampid WHERE me.id = ${brid})
          ORDER BY br.id`);
        const ids = others.map((o) => o.id as number);
        if (ids.length && (await claimBuildRequests(tx, ids, this.deps.masterid()))) {
          await completeBuildRequests(tx, ids, Results.SKIPPED);
        }
      }
      return true;
    });
    if (ok) this.claimed.won++;
    else this.claimed.lost++;
    return ok;
  }

  /** One request at a time: a build that just finished must not cost the others their renewal. */
  private async renewClaims(): Promise<void> {
    for (const brid of this.held) {
      try {
        await transact(this.deps.ctx, (tx) => reclaimBuildRequests(tx, [brid], this.deps.masterid()));
      } catch (err) {
        this.deps.log.warn({ brid, err: (err as Error).message }, 'reclaiming a build request failed');
      }
    }
  }
}
