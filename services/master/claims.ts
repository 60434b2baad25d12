// The claims a master holds on the requests its builds run, and the fence they are.
//
// Renewal: a claim carries the time it was last renewed; expire-masters releases claims
// nobody renewed for a long while (their master died without being expired), so every held
// claim is renewed every RENEW_MS: up to RENEW_BATCH of them in one transaction, and, when
// one of a batch is gone, that batch one request at a time, so that a build that just
// finished does not cost the others their renewal. A renewal that finds the claim gone (the
// cluster expired this master while it was away and handed the request to another) ends
// the build.
//
// Fencing: every write of a build goes through the build's own DataContext (buildContext),
// whose transactions first check, under row locks, that this master still holds the claim
// on the build's request and the build is still open (buildWriteFence). A master that was expired
// while it was away (a frozen VM, a network cut) therefore writes nothing over what the
// cluster decided meanwhile: not a line, not a step, not the request's outcome. Its build
// ends with ClaimLost and no write at all.
//
// Database outages: the same transactions ride out a database that is away (a restart, a
// failover), retrying with backoff while the master's lease holds (liveness.ts: its last
// heartbeat recent enough that nobody can have expired it); output waits meanwhile, and the
// worker holds the command back once its window of unacknowledged output is full. A retry
// must not apply a write twice (a transaction whose COMMIT was on its way when the
// connection died may have committed), so each write of a build is numbered and the number
// recorded in the same transaction (flotilla.build_writes, migration 0012): a retry that finds
// its number there answers what the first attempt answered instead.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  buildWriteFence,
  type DataContext,
  reclaimBuildRequests,
  recordBuildWrite,
  transact,
} from '../core/data/index.js';
import { isTransient } from '../core/db/outage.js';
import type { ConnectionPool, Queryable, SQLQuery } from '../core/db/pool.js';
import type { Logger } from '../core/telemetry/logger.js';

export const RENEW_MS = 60_000;
// Claims renewed in one transaction. One at a time, a master holding 333 of the fleet's 1,000
// running builds spent 333 transactions of four statements each a minute on them: phase S of
// load/results/fleet.md (2026-11-29 03:38-04:02, the same code) counted 3,024 BEGINs over a
// 20 s window that took no renewal and 3,799 over a 66 s one that took one, 26.1 statements
// a start against 29.2. In batches, one transaction per RENEW_BATCH claims: small enough that
// a batch's row locks are brief, and that one gone claim sends few back to one at a time.
const RENEW_BATCH = 500;
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 2000;

/** The build's claim is no longer this master's, or the build was ended by someone else. */
export class ClaimLost extends Error {
  override name = 'ClaimLost';
}

/** The database was away longer than this master may ride out (its lease ran out). */
export class DatabaseAway extends Error {
  override name = 'DatabaseAway';
}

/** Whether this master may go on trusting that the cluster has not expired it. */
export interface Lease {
  /** False once the last successful heartbeat is older than the outage limit. */
  valid(): boolean;
}

function backoff(attempt: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** attempt) * (0.5 + Math.random() / 2);
}

/**
 * Run `fn` again while it fails because the database is away, with backoff; give up with
 * DatabaseAway once `lease` (when given) has run out. Any other error is thrown at once.
 */
export async function ridingOut<T>(fn: () => Promise<T>, lease?: Lease, onRetry?: () => void): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransient(err)) throw err;
      if (lease && !lease.valid()) throw new DatabaseAway(`the database is away: ${(err as Error).message}`);
      onRetry?.();
      await sleep(backoff(attempt));
    }
  }
}

/** A pool whose reads ride out an outage (a build's reads: its properties, its build sets). */
function patientPool(db: ConnectionPool, lease?: Lease, onRetry?: () => void): ConnectionPool {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'query') return (q: SQLQuery) => ridingOut(() => target.query(q), lease, onRetry);
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

export interface BuildFence {
  /** The build's writes: fenced, numbered, riding out an outage while the lease holds. */
  ctx: DataContext;
  /**
   * The same, riding out an outage for as long as it lasts: for the build's last write
   * (its end), which must happen once the database is back, unless the claim went meanwhile.
   */
  finalCtx: DataContext;
}

/**
 * The DataContext of one build's writes. `ctx` is the master's; `lease` its lease. Every
 * transaction checks the fence first and records its number; a transaction that finds the
 * fence down throws ClaimLost.
 */
export function buildContext(
  ctx: DataContext,
  buildid: number,
  masterid: number,
  lease: Lease,
  onRetry?: () => void,
): BuildFence {
  let seq = 0;
  // One write at a time, in the order they were asked for: a number recorded by a later
  // write must never be taken for an earlier one's.
  let tail: Promise<unknown> = Promise.resolve();
  const runTx =
    (patient: boolean) =>
    <T>(body: (q: Queryable) => Promise<T>): Promise<T> => {
      const run = tail.then(() => write(body, patient));
      tail = run.catch(() => undefined);
      return run;
    };
  const write = <T>(body: (q: Queryable) => Promise<T>, patient: boolean): Promise<T> => {
    const mine = ++seq;
    return ridingOut(
      () =>
        ctx.db.tx(async (q) => {
          // The fence records the write's number itself; an answer is recorded after the body.
          const fence = await buildWriteFence(q, buildid, masterid, mine);
          // An earlier attempt committed (its answer was lost with the connection).
          if (fence.seq !== null && fence.seq >= mine) return (fence.result ?? undefined) as T;
          if (!fence.held) throw new ClaimLost(`build ${buildid}: this master no longer holds its request`);
          const result = await body(q);
          if (result !== undefined && result !== null) await recordBuildWrite(q, buildid, mine, result);
          return result;
        }),
      patient ? undefined : lease,
      onRetry,
    );
  };
  const base = { ...ctx, db: patientPool(ctx.db, lease, onRetry) };
  // Every transaction's fence has locked the build's row (buildWriteFence): not asked again.
  const fenced = { ...base, lockedBuild: buildid };
  return {
    ctx: { ...fenced, runTx: runTx(false) },
    finalCtx: { ...fenced, db: patientPool(ctx.db, undefined, onRetry), runTx: runTx(true) },
  };
}

export interface ClaimsDeps {
  ctx: DataContext;
  masterid: () => number;
  log: Logger;
  /** How often held claims are renewed (default RENEW_MS). */
  renewMs?: number;
}

export class Claims {
  /**
   * Held claims, each with what to do when it is found gone. An entry is a hold's own object:
   * a request run again on this master has a new one, which the end of the earlier run, or a
   * renewal of the earlier claim that found it gone, must not touch.
   */
  private readonly held = new Map<number, { lost: (() => void) | undefined }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ClaimsDeps) {}

  start(): void {
    this.timer = setInterval(() => void this.renew(), this.deps.renewMs ?? RENEW_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Keep renewing this request's claim until the returned release is called; `lost` is
   * called if a renewal finds the claim gone.
   */
  hold(brid: number, lost?: () => void): () => void {
    const entry = { lost };
    this.held.set(brid, entry);
    return () => {
      if (this.held.get(brid) === entry) this.held.delete(brid);
    };
  }

  get count(): number {
    return this.held.size;
  }

  /** One renewal of every held claim (also what the timer runs). */
  async renew(): Promise<void> {
    const all = [...this.held];
    for (let i = 0; i < all.length; i += RENEW_BATCH) {
      const batch = all.slice(i, i + RENEW_BATCH);
      // All still held: renewed together. reclaimBuildRequests renews none unless it holds all.
      const renewed = await transact(this.deps.ctx, (tx) =>
        reclaimBuildRequests(
          tx,
          batch.map(([brid]) => brid),
          this.deps.masterid(),
        ),
      ).catch((err: Error) => {
        this.deps.log.warn({ claims: batch.length, err: err.message }, 'reclaiming build requests failed');
        return null;
      });
      if (renewed === false) for (const [brid, entry] of batch) await this.renewOne(brid, entry);
    }
  }

  /** One claim renewed on its own: when it is gone, its build stops. */
  private async renewOne(brid: number, entry: { lost: (() => void) | undefined }): Promise<void> {
    try {
      const ok = await transact(this.deps.ctx, (tx) =>
        reclaimBuildRequests(tx, [brid], this.deps.masterid()),
      );
      // Released while it ran: its build writes nothing more (the fence) and stops.
      if (!ok && this.held.get(brid) === entry) {
        this.deps.log.warn({ brid }, 'the claim on a running build is gone: stopping the build');
        entry.lost?.();
      }
    } catch (err) {
      this.deps.log.warn({ brid, err: (err as Error).message }, 'reclaiming a build request failed');
    }
  }
}
