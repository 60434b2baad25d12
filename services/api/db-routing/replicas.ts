// Where a read goes: one of the streaming replicas of DATABASE_READ_URL, or the primary. The
// one place that decides; every read of the REST API goes through it (ReadRouter.rows), and
// writes, control actions and what they read never do (they use the primary's pools).
//
// What is guaranteed (docs/scaling.md, "PostgreSQL read replicas"):
// - Bounded staleness. A replica serves reads only while it is at most `maxLagMs` behind the
//   primary: a monitor reads the primary's log position and each replica's replay position
//   every TICK_MS, and a replica that has replayed the position the primary had at time t has
//   every commit from before t. Further behind, down, or promoted: no reads until it is back.
// - Read-your-writes. A control action (POST /api/v2) answers with the position of the log
//   after its writes (a cookie, and a header for clients without cookies). A read that carries
//   one goes to a replica only once that replica has replayed past it, waits up to `waitMs`
//   for one to get there, and then goes to the primary.
// - One source per request: every read of a request goes where its first went, so a page and
//   the counts beside it come from one server.
// - A read that fails because its replica went away (connection refused or cut, the server
//   shutting down, a query cancelled by a recovery conflict) is sent again to the primary, and
//   the replica is marked down until the monitor reaches it again.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SQLQuery } from '@databases/pg';
import { redact } from '../../core/config/env.js';
import { lsnText, replayState, walInsertLsn } from '../../core/data/replication.js';
import type { CopyRow } from '../../core/db/copy-binary.js';
import { type ConnectionPool, createPool, type Queryable } from '../../core/db/pool.js';
import { type ReadOptions, ReadPool, type RowReader } from './read-pool.js';

/**
 * How often the monitor looks. Measured cost: two one-row queries per replica per tick
 * (one on it, one shared on the primary); a read that waits for its write waits at most
 * about this long after the replica has it.
 */
const TICK_MS = 25;
const PROBE_DEADLINE_MS = 2000;

export interface ReplicaOptions {
  urls: readonly string[];
  waitMs: number;
  maxLagMs: number;
  /** The primary, for the monitor's position samples. */
  primary: Queryable;
  /** The primary's read path: where a read goes when no replica may take it. */
  primaryReads: RowReader;
  /** A replica that has not answered the monitor within this is treated as down (default 2 s). */
  probeDeadlineMs?: number;
  onError?: (msg: string, err: Error) => void;
}

/** What an API pod is told of its replicas (DATABASE_READ_URL and the settings beside it). */
export interface ReplicaSettings {
  urls: readonly string[];
  waitMs: number;
  maxLagMs: number;
  probeDeadlineMs?: number;
}

export type ReplicaState = 'starting' | 'up' | 'lagging' | 'down' | 'not a replica';

export interface ReplicaStatus {
  name: string;
  state: ReplicaState;
  /** How far behind the primary it is at most, as this pod measures it; null while unknown. */
  lagMs: number | null;
  replayed: string | null;
  error: string | null;
  /** Requests whose reads it took. */
  reads: number;
}

export interface ReadsStatus {
  /** Where reads without a write to wait for go now. */
  from: 'replicas' | 'primary';
  replicas: ReplicaStatus[];
  /** Requests whose reads went to the primary: no replica could take them, or theirs failed. */
  primaryReads: number;
  /** Requests that waited for a replica to replay their client's write. */
  waited: number;
}

class Replica {
  readonly reads: ReadPool;
  readonly monitor: ConnectionPool;
  replayed: bigint | null = null;
  state: ReplicaState = 'starting';
  lagMs: number | null = null;
  error: string | null = null;
  probing: number | null = null;
  chosen = 0;

  constructor(
    readonly name: string,
    url: string,
  ) {
    this.reads = new ReadPool(url);
    this.monitor = createPool(url, { poolSize: 1, applicationName: 'flotilla-api-replica-monitor' });
  }
}

/** Where one request's reads go, and how far that replica had replayed when chosen. */
export interface Choice {
  replica: Replica | null;
  /** The replica's replay position seen before any read of the request was sent. */
  replayed: bigint | null;
}

interface RequestReads {
  minLsn: bigint | null;
  choice: Promise<Choice> | null;
  /** The choice once made (page keeping asks synchronously). */
  chosen: Choice | null;
}

/** A read that went to a replica and should go to the primary instead. */
function replicaFailure(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return true; // socket errors, "Connection terminated"
  if (!/^[0-9A-Z]{5}$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, ...
  // connection exceptions, operator intervention (shutdown), too many connections, and a
  // query cancelled because the replica had to apply a conflicting change
  return code.startsWith('08') || code.startsWith('57') || code.startsWith('53') || code === '40001';
}

function connectionLost(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || /^(08|57P)/.test(code);
}

export class ReadRouter implements RowReader {
  private readonly replicas: Replica[];
  private readonly context = new AsyncLocalStorage<RequestReads>();
  /** The primary's log position, sampled: what a replica's replay position is measured against. */
  private samples: { at: number; lsn: bigint }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sampling = false;
  private next = 0;
  private waiters: (() => void)[] = [];
  private closed = false;
  private toPrimary = 0;
  private waited = 0;

  constructor(private readonly opts: ReplicaOptions) {
    this.replicas = opts.urls.map((url, i) => new Replica(`#${i + 1} ${replicaName(url)}`, url));
  }

  start(): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** Runs a request's reads with its write position (the cookie or header's), if any. */
  run<T>(minLsn: bigint | null, fn: () => Promise<T>): Promise<T> {
    return this.context.run({ minLsn, choice: null, chosen: null }, fn);
  }

  /** Where the current request's reads went; null outside a request or before its first read. */
  current(): Choice | null {
    return this.context.getStore()?.chosen ?? null;
  }

  /** The current request's write position. */
  minLsn(): bigint | null {
    return this.context.getStore()?.minLsn ?? null;
  }

  async rows<T = Record<string, unknown>>(query: SQLQuery, opts?: ReadOptions): Promise<T[]> {
    const choice = await this.choice();
    if (!choice.replica) return await this.opts.primaryReads.rows<T>(query, opts);
    try {
      return await choice.replica.reads.rows<T>(query, opts);
    } catch (err) {
      if (!replicaFailure(err)) throw err;
      this.failed(choice.replica, err as Error);
      this.toPrimary++;
      const store = this.context.getStore();
      if (store) {
        store.chosen = { replica: null, replayed: null };
        store.choice = Promise.resolve(store.chosen);
      }
      return await this.opts.primaryReads.rows<T>(query, opts);
    }
  }

  async *copyRows(
    select: SQLQuery,
    settings: Record<string, string>,
    signal?: AbortSignal,
  ): AsyncGenerator<CopyRow> {
    const choice = await this.choice();
    // A download that fails half-way cannot be sent again: it goes where the request's
    // reads went, and fails as it would on the primary.
    const reader = choice.replica ? choice.replica.reads : this.opts.primaryReads;
    if (!reader.copyRows) {
      throw new Error('copyRows: the primary read path has no COPY (no DATABASE_URL of its own)');
    }
    yield* reader.copyRows(select, settings, signal);
  }

  status(): ReadsStatus {
    const now = performance.now();
    const replicas = this.replicas.map((r) => {
      this.judge(r, now);
      return {
        name: r.name,
        state: r.state,
        lagMs: r.lagMs === null ? null : Math.round(r.lagMs),
        replayed: r.replayed === null ? null : lsnText(r.replayed),
        error: r.error,
        reads: r.chosen,
      };
    });
    return {
      from: replicas.some((r) => r.state === 'up') ? 'replicas' : 'primary',
      replicas,
      primaryReads: this.toPrimary,
      waited: this.waited,
    };
  }

  poolStats(): { total: number; idle: number; waiting: number } {
    const s = { total: 0, idle: 0, waiting: 0 };
    for (const r of this.replicas) {
      const p = r.reads.stats();
      s.total += p.total;
      s.idle += p.idle;
      s.waiting += p.waiting;
    }
    return s;
  }

  async end(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const w of this.waiters.splice(0)) w();
    await Promise.all(
      this.replicas.map(async (r) => {
        await r.reads.end().catch(() => {});
        await r.monitor.dispose().catch(() => {});
      }),
    );
  }

  private choice(): Promise<Choice> {
    const store = this.context.getStore();
    if (!store) return this.choose(null);
    store.choice ??= this.choose(store.minLsn).then((c) => {
      store.chosen = c;
      return c;
    });
    return store.choice;
  }

  private async choose(minLsn: bigint | null): Promise<Choice> {
    const deadline = performance.now() + this.opts.waitMs;
    for (let round = 0; ; round++) {
      const now = performance.now();
      const usable = this.replicas.filter((r) => this.judge(r, now) === 'up');
      const ready = minLsn === null ? usable : usable.filter((r) => (r.replayed ?? -1n) >= minLsn);
      if (ready.length) {
        const r = ready[this.next++ % ready.length]!;
        r.chosen++;
        return { replica: r, replayed: r.replayed };
      }
      // Wait for the client's write only where a replica may soon have it.
      if (!usable.length || now >= deadline || this.closed) {
        this.toPrimary++;
        return { replica: null, replayed: null };
      }
      if (round === 0) this.waited++;
      await this.progress(deadline - now);
    }
  }

  /** Resolves after the monitor's next round, or after `ms`. */
  private progress(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const waiters = this.waiters;
      function done() {
        clearTimeout(timer);
        const i = waiters.indexOf(done);
        if (i >= 0) waiters.splice(i, 1);
        resolve();
      }
      waiters.push(done);
    });
  }

  /** The replica's state now, its lag brought up to date. */
  private judge(r: Replica, now: number): ReplicaState {
    const deadline = this.opts.probeDeadlineMs ?? PROBE_DEADLINE_MS;
    if (r.probing !== null && now - r.probing > deadline) {
      r.state = 'down';
      r.error = `no answer within ${deadline} ms`;
    }
    if (r.state !== 'up' && r.state !== 'lagging') return r.state;
    r.lagMs = this.lag(r.replayed, now);
    r.state = r.lagMs !== null && r.lagMs <= this.opts.maxLagMs ? 'up' : 'lagging';
    return r.state;
  }

  /**
   * At most how far behind: the replica has every commit from before the newest sample it has
   * replayed past (a sample is taken before its query is sent). Short of every sample kept:
   * unknown (too far behind, or the monitor has only just started).
   */
  private lag(replayed: bigint | null, now: number): number | null {
    if (replayed === null) return null;
    for (let i = this.samples.length - 1; i >= 0; i--) {
      const s = this.samples[i]!;
      if (s.lsn <= replayed) return now - s.at;
    }
    return null;
  }

  private failed(r: Replica, err: Error): void {
    if (!connectionLost(err)) return;
    r.state = 'down';
    r.error = err.message;
    this.opts.onError?.(`replica ${r.name} lost: its reads go elsewhere`, err);
  }

  private tick(): void {
    if (this.closed) return;
    if (!this.sampling) {
      this.sampling = true;
      const at = performance.now();
      walInsertLsn(this.opts.primary)
        .then((lsn) => {
          this.samples.push({ at, lsn });
          // Kept while they can still tell a lag within the bound, and always the newest.
          const keepFrom = performance.now() - 2 * this.opts.maxLagMs;
          while (this.samples.length > 1 && this.samples[0]!.at < keepFrom) this.samples.shift();
        })
        .catch(() => {})
        .finally(() => {
          this.sampling = false;
        });
    }
    for (const r of this.replicas) {
      if (r.probing !== null) continue;
      r.probing = performance.now();
      replayState(r.monitor)
        .then(
          (s) => {
            r.error = null;
            if (!s.inRecovery || s.replayed === null) {
              r.state = 'not a replica';
              r.error = 'the server is not in recovery (a primary, or promoted)';
              return;
            }
            if (r.replayed === null || s.replayed > r.replayed) r.replayed = s.replayed;
            if (r.state !== 'up' && r.state !== 'lagging') r.state = 'lagging';
            this.judge(r, performance.now());
          },
          (err: Error) => {
            if (r.state !== 'down') this.opts.onError?.(`replica ${r.name} unreachable`, err);
            r.state = 'down';
            r.error = err.message;
          },
        )
        .finally(() => {
          r.probing = null;
          for (const w of this.waiters.slice()) w();
        });
    }
  }
}

/** The router for DATABASE_READ_URL's replicas; null when there are none. */
export function readRouter(
  cfg: ReplicaSettings | undefined,
  primary: Queryable,
  primaryReads: RowReader,
  log: { warn(obj: object, msg: string): void },
): ReadRouter | null {
  if (!cfg?.urls.length) return null;
  return new ReadRouter({
    ...cfg,
    primary,
    primaryReads,
    onError: (msg, err) => log.warn({ err: err.message }, msg),
  });
}

/** A replica's name for status and logs: host, port and database, never its credentials. */
function replicaName(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return redact(url);
  }
}
