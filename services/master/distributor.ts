// The build request distributor: whenever something may have changed (a request was added
// or handed back, a worker connected, a build finished; at worst every POLL_MS), for each
// builder of this master that has an idle connected worker, claim the best pending request,
// highest priority first, then the oldest, and run it. A claim is all or nothing and unique
// across masters (core/data/buildrequests.ts), so a request never runs twice; losing the
// race to another master just moves on to the next request. The claims of running builds
// are renewed by claims.ts.
import type { BuilderConfig, MasterConfig } from '../core/config/master-config.js';
import {
  claimBuildRequests,
  claimEachBuildRequest,
  collapsibleBuildRequests,
  completeBuildRequests,
  type DataContext,
  now,
  pendingBuildRequests,
  releaseUncertainRequest,
  transact,
} from '../core/data/index.js';
import { isTransient } from '../core/db/outage.js';
import { Results } from '../core/results.js';
import type { Logger } from '../core/telemetry/logger.js';
import type { BuildRunner, ClaimedRequest } from './builds/runner.js';
import type { Claims } from './claims.js';
import type { RequestTraces } from './trace-links.js';
import { workerConfig } from './worker-configs.js';
import type { ConnectedWorkers, WorkerConnection } from './workers/connection.js';

export const POLL_MS = 10_000;
// Pending requests read per idle worker in one pass: enough to get past those that other
// masters win meanwhile, without reading the whole queue.
const CANDIDATES_PER_WORKER = 4;

export interface DistributorDeps {
  ctx: DataContext;
  /** The configuration running now: a reload replaces it between two passes' reads. */
  config: () => MasterConfig;
  masterid: () => number;
  builderIds: ReadonlyMap<string, number>;
  workers: ConnectedWorkers;
  runner: BuildRunner;
  claims: Claims;
  /** Workers paused by an operator (control/worker/<id>/pause). */
  isPaused: (name: string) => boolean;
  log: Logger;
  /** Told how long each pass of the claim loop took. */
  onPass?: (seconds: number) => void;
  /** The traces of requests, for their builds to continue. */
  traces?: RequestTraces;
  /** How often to look for work when nothing said there is any (default POLL_MS). */
  pollMs?: number;
  /** False while this master must not claim: it was expired, or its lease ran out (membership.ts). */
  mayClaim?: () => boolean;
}

export class Distributor {
  private readonly stopping = new AbortController();
  /** A pass is under way; `again`: something changed during it, so another follows. */
  private passing = false;
  private again = false;
  /**
   * The builders the next pass looks at: every one, or only those the kicks since the last
   * pass named (a request's builder, a freed worker's builders). A pass over every builder
   * reads each one's candidates and looks at each one's workers: at 1,000 builders and a
   * steady 10 builds a second across three masters, four such reads a build took 1.2-8.7 ms of
   * PostgreSQL's time each, 0.10-0.24 ms with the builders concerned alone, and the masters'
   * CPU a forced build fell from a median of 34.1 ms to 25.1 (load/results/fleet.md,
   * 2026-11-29 22:48-23:31). The poll, a connected worker, a reload and lost events still look
   * at every builder.
   */
  private wanted: Set<number> | 'all' = 'all';
  /** Each worker's builders (their ids), for the configuration they were worked out from. */
  private served: { config: MasterConfig; byWorker: Map<string, number[]> } | null = null;
  private poll: NodeJS.Timeout | undefined;
  readonly claimed = { won: 0, lost: 0 };
  /**
   * Requests this master may hold without running them: the database went away while their
   * claim (or their build's first row) was being committed, so whether it was is unknown.
   * Each pass releases them once it can (releaseUncertainRequest).
   */
  private readonly uncertain = new Set<number>();

  constructor(private readonly deps: DistributorDeps) {}

  /** A worker's settings in the running configuration: a pass asks a thousand builders' times three. */
  private workerConfig(name: string) {
    return workerConfig(this.deps.config(), name);
  }

  start(): void {
    this.poll = setInterval(() => this.kick(), this.deps.pollMs ?? POLL_MS);
    this.poll.unref();
    this.kick();
  }

  /** Stop claiming (running builds go on). */
  stop(): void {
    this.stopping.abort();
    clearInterval(this.poll);
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  /**
   * Something may have changed: look for work (coalesced; never two passes at once), at the
   * builders named, or at every builder when none are.
   */
  kick(builderids?: Iterable<number>): void {
    if (this.stopped) return;
    if (builderids === undefined) this.wanted = 'all';
    else if (this.wanted !== 'all') for (const id of builderids) this.wanted.add(id);
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = true;
    const started = performance.now();
    const wanted = this.wanted;
    this.wanted = new Set();
    this.pass(wanted)
      .then(() => this.deps.onPass?.((performance.now() - started) / 1000))
      .catch((err) => {
        // The builders it was to look at are not forgotten: the next pass looks at every one.
        this.wanted = 'all';
        this.deps.log.warn({ err: (err as Error).message }, 'distribution pass failed');
      })
      .finally(() => {
        this.passing = false;
        if (this.again) {
          this.again = false;
          this.kick([]);
        }
      });
  }

  private idleWorkers(builder: BuilderConfig): WorkerConnection[] {
    const out: WorkerConnection[] = [];
    for (const name of builder.workers) {
      const conn = this.deps.workers.get(name);
      const cfg = this.workerConfig(name);
      if (!conn || conn.lost.aborted || !cfg || this.deps.isPaused(name)) continue;
      // max_builds caps the worker's builds across builders; a builder runs one build at a
      // time on a worker, as in Buildbot, whose builders each have one directory there.
      if (
        this.deps.runner.onWorker(name) < cfg.max_builds &&
        this.deps.runner.onWorker(name, builder.name) === 0
      )
        out.push(conn);
    }
    // The least busy first.
    return out.sort((a, b) => this.deps.runner.onWorker(a.name) - this.deps.runner.onWorker(b.name));
  }

  /** The builders (ids) of this master that `worker` serves, in the running configuration. */
  private buildersOf(worker: string): number[] {
    const config = this.deps.config();
    if (this.served?.config !== config) {
      const byWorker = new Map<string, number[]>();
      for (const builder of config.builders) {
        const builderid = this.deps.builderIds.get(builder.name);
        if (builderid === undefined) continue;
        for (const name of builder.workers) {
          const ids = byWorker.get(name);
          if (ids) ids.push(builderid);
          else byWorker.set(name, [builderid]);
        }
      }
      this.served = { config, byWorker };
    }
    return this.served.byWorker.get(worker) ?? [];
  }

  private async pass(wanted: Set<number> | 'all'): Promise<void> {
    for (const brid of [...this.uncertain]) {
      const ended = await transact(this.deps.ctx, (tx) =>
        releaseUncertainRequest(tx, brid, this.deps.masterid()),
      );
      this.uncertain.delete(brid);
      if (ended.length)
        this.deps.log.warn({ brid, builds: ended }, 'released a request left claimed by an outage');
    }
    if (this.deps.mayClaim && !this.deps.mayClaim()) return;
    // The candidates of every builder with an idle worker, read in one statement
    // (pendingBuildRequests says why); each builder's idle workers are looked at again when
    // its turn comes, since a claim for a builder before it may have taken a shared worker.
    // One configuration for the whole pass: a reload between two of its reads takes effect
    // at the next pass.
    const config = this.deps.config();
    if (wanted !== 'all' && wanted.size === 0) return;
    const limits = new Map<number, number>();
    for (const builder of config.builders) {
      const builderid = this.deps.builderIds.get(builder.name);
      if (builderid === undefined || (wanted !== 'all' && !wanted.has(builderid))) continue;
      const idle = this.idleWorkers(builder).length;
      if (idle > 0) limits.set(builderid, idle * CANDIDATES_PER_WORKER);
    }
    const candidates = await pendingBuildRequests(this.deps.ctx.db, limits);
    // Each builder's candidates matched to its idle workers, a worker's free slots counted
    // down as the plan takes them; all of the plan claimed in one transaction
    // (claimEachBuildRequest says why). A lost claim leaves its worker idle for the builder's
    // next candidate, in a next round: each candidate is tried once, so the rounds end.
    // A builder that collapses requests claims one by one (claim()).
    const collapsing = config.builders.filter((b) => b.collapse_requests);
    for (;;) {
      if (this.stopped) return;
      const plan = this.plan(candidates, config);
      if (plan.length === 0) break;
      const brids = plan.map((p) => p.br.id);
      const won = new Set(
        await transact(this.deps.ctx, (tx) => claimEachBuildRequest(tx, brids, this.deps.masterid())).catch(
          (err: unknown) => {
            if (isTransient(err)) for (const brid of brids) this.uncertain.add(brid);
            throw err;
          },
        ),
      );
      this.claimed.won += won.size;
      this.claimed.lost += plan.length - won.size;
      for (const p of plan)
        if (won.has(p.br.id))
          this.runClaimed(p.worker, {
            brid: p.br.id,
            bsid: p.br.buildsetid,
            builderid: p.builderid,
            builder: p.builder,
          });
    }
    for (const builder of collapsing) {
      if (this.stopped) return;
      const builderid = this.deps.builderIds.get(builder.name)!;
      if (!candidates.has(builderid)) continue;
      let idle = this.idleWorkers(builder);
      for (const br of candidates.get(builderid) ?? []) {
        if (idle.length === 0 || this.stopped) break;
        const won = await this.claim(builder, builderid, br);
        if (!won) continue;
        const worker = idle.shift()!;
        this.runClaimed(worker, { brid: won.id, bsid: won.buildsetid, builderid, builder });
        idle = this.idleWorkers(builder).filter((w) => idle.includes(w));
      }
    }
  }

  /**
   * The next claims to try: each builder's first untried candidates (taken out of
   * `candidates`) against its idle workers, within each worker's free slots.
   */
  private plan(candidates: Map<number, { id: number; buildsetid: number }[]>, config: MasterConfig) {
    const planned = new Map<string, number>();
    const plan: {
      builder: BuilderConfig;
      builderid: number;
      br: { id: number; buildsetid: number };
      worker: WorkerConnection;
    }[] = [];
    for (const builder of config.builders) {
      const builderid = this.deps.builderIds.get(builder.name);
      const pending = builderid === undefined ? undefined : candidates.get(builderid);
      if (!pending?.length || builder.collapse_requests) continue;
      const free = this.idleWorkers(builder).filter(
        (w) =>
          this.deps.runner.onWorker(w.name) + (planned.get(w.name) ?? 0) <
          this.workerConfig(w.name)!.max_builds,
      );
      for (const worker of free) {
        const br = pending.shift();
        if (!br) break;
        planned.set(worker.name, (planned.get(worker.name) ?? 0) + 1);
        plan.push({ builder, builderid: builderid!, br, worker });
      }
    }
    return plan;
  }

  /** Run a claimed request's build, renewing its claim while it runs. */
  private runClaimed(worker: WorkerConnection, req: ClaimedRequest): void {
    const release = this.deps.claims.hold(req.brid, () =>
      this.deps.runner.loseRequest(req.brid, 'the claim on its request is gone'),
    );
    const traceContext = this.deps.traces?.take(req.brid);
    void this.deps.runner
      .run(traceContext ? { ...req, traceContext } : req, worker)
      // The build never got going (the database went away before its row was known): what
      // was committed of it is released by a later pass.
      .catch(() => this.uncertain.add(req.brid))
      .finally(() => {
        release();
        // Its worker is free again: a look at the builders it serves.
        this.kick(this.buildersOf(worker.name));
      });
  }

  /**
   * Claim one request (a builder with collapse_requests); the newest of it and the builder's other pending
   * requests of compatible source stamps is the one claimed and built, and the others are
   * claimed and completed SKIPPED. Buildbot collapses when a build set is added: the new
   * request ends the older compatible ones, so of a run of pending requests the newest is
   * built; collapsing at the claim gives the same result. Returns the request to build.
   */
  private async claim(
    builder: BuilderConfig,
    builderid: number,
    br: { id: number; buildsetid: number },
  ): Promise<{ id: number; buildsetid: number } | null> {
    // The request this claim may have taken, released by a later pass if the commit's outcome
    // is unknown (the database went away).
    let claiming = br.id;
    const won = await transact(this.deps.ctx, async (tx) => {
      const group = builder.collapse_requests ? await collapsibleBuildRequests(tx.q, builderid, br.id) : [];
      const newest = [br, ...group].reduce((a, b) => (b.id > a.id ? b : a));
      claiming = newest.id;
      if (!(await claimBuildRequests(tx, [newest.id], this.deps.masterid(), now(), { onlyIfActive: true })))
        return null;
      const folded = [br, ...group].filter((r) => r !== newest).map((r) => r.id);
      if (folded.length && (await claimBuildRequests(tx, folded, this.deps.masterid())))
        await completeBuildRequests(tx, folded, Results.SKIPPED, this.deps.masterid());
      return newest;
    }).catch((err: unknown) => {
      if (isTransient(err)) this.uncertain.add(claiming);
      throw err;
    });
    if (won) this.claimed.won++;
    else this.claimed.lost++;
    return won;
  }
}
