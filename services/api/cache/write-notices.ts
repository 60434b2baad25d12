// What this pod knows of the writes committed to the database, pushed to it: the triggers
// (migrations 0010, 0016) send a notice naming the table on channel
// flotilla_write_keys with every statement that writes it, whoever writes (a Buildbot master
// too), and PostgreSQL delivers them to this pod's listening connection in commit order. For
// the tables running builds write all the time, they name the parts of the table written
// instead (`steps/buildid=5`): a key `steps/buildid=5` is unchanged while no notice named
// that part or the whole table; a key `steps` while no notice named the table or any part of
// it. (flotilla_writes still carries bare table names for pods from before parts existed,
// so a rolling upgrade serves nothing stale: 0016.)
//
// The page cache (page-cache.ts) uses them to serve a kept page without
// asking the database: a page read after mark m is still current while no notice since m has
// named one of its tables. That holds only as far as the notices are up to date, so:
// - A mark is taken only while listening, and a mark from before the current LISTEN (the
//   connection dropped and came back; notices may have been lost) counts for nothing.
// - A fence, a trivial query on the listening connection, goes out every few milliseconds.
//   PostgreSQL sends a listener the notices of every transaction that committed before it
//   took a query before it answers that query, so when a fence returns, every write that
//   committed before it was sent is known here. While the newest returned fence was sent
//   longer ago than maxStalenessMs (a stalled connection, a starved backend), nothing is
//   served on the strength of notices, and every kept page is checked against the database
//   again (page-cache.ts). So a page served from memory is never older than that bound;
//   in practice a notice arrives well under a millisecond after its commit.
//
// - Fences go out only while the pod uses the notices: after IDLE_MS without a page looked up
//   or read, they pause, and the first use after that finds the notices not current (its page
//   is checked, as beyond the bound) and resumes them. Fencing every few milliseconds costs an
//   idle pod and its backend about 60 queries a second; a cluster's API pods wait idle most of
//   their lives, and the suite's some 50 of them 2,200 process-seconds in one run
//   (load/results/test-suite.md).
// - Listening pauses with them (UNLISTEN), and the first use listens again, as after a lost
//   connection: marks from before count for nothing, so each page kept from before is checked
//   once against the database. A listening pod hears every statement that writes a table of
//   the cluster: a build's start is some 20 notices, each parsed by the pg client and recorded
//   here, and PostgreSQL sends each to every listener. Measured in phase S of the fleet run,
//   nobody reading from the APIs (load/results/fleet.md, 2026-11-29 06:01 "the APIs' CPU in
//   phase S"): recording them was 12% of the APIs' busy samples and pg-protocol's parsing
//   most of another 6%; pausing took the two APIs' CPU a start from 1.3-1.7 ms to
//   0.65-1.0 ms in turns (three of each, and a pair).
//
// With read replicas (../db-routing/replicas.ts), each fence also reads the primary's log position,
// so that a page read from a replica can be judged: it reflects every notice it must once the
// replica has replayed past the position of a fence sent after the last notice of its tables
// (positionFor), and a client's own write has been noticed once a fence sent after a fence
// that returned past the write's position has returned (noticedThrough).
import pg from 'pg';
import { walInsertLsnOn } from '../../core/data/replication.js';

export const WRITES_CHANNEL = 'flotilla_write_keys';

/** Distinct tables remembered; more means someone notifies the channel with other payloads. */
const MAX_TABLES = 1000;
/**
 * Parts remembered (a few MB): the least recently written are forgotten first, and count as
 * written when the newest of them was.
 */
const MAX_PARTS = 100_000;
/** Without a use for this long, fences pause until the next use. */
export const IDLE_MS = 5_000;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;

export interface WriteNoticesOptions {
  url: string;
  /** The most a page served on the strength of notices may lag the database. */
  maxStalenessMs: number;
  onError?: (err: Error) => void;
  /** Read the primary's log position with each fence (read replicas are in use). */
  positions?: boolean;
  /** Pause fences after this long without a use (IDLE_MS). */
  idleMs?: number;
}

/** Fences that returned: the notices' count when each was sent, and the position it read. */
const MAX_FENCES = 512;

export interface WriteNoticesStats {
  listening: boolean;
  /** Since the newest returned fence was sent (ms); null while not listening. */
  lagMs: number | null;
  notices: number;
  /** Fences paused: nothing used the notices for a while (the lag then says nothing). */
  idle: boolean;
  /** Fences sent since start. */
  fences: number;
}

export class WriteNotices {
  /** Counts notices (and restarts of listening): marks are values of it. */
  private seq = 0;
  /** Marks below this were taken before the current LISTEN and mean nothing. */
  private validFrom = Number.POSITIVE_INFINITY;
  /** Per table: the newest notice naming it or any part of it. */
  private readonly lastWrite = new Map<string, number>();
  /** Per table: the newest notice naming the whole table. */
  private readonly lastWhole = new Map<string, number>();
  /** Per part (`table/column=value`): its newest notice, least recent first. */
  private readonly lastPart = new Map<string, number>();
  /** The newest notice of a part no longer in lastPart. */
  private partsForgotten = -1;
  private client: pg.Client | null = null;
  private listening = false;
  private fencedAt = Number.NEGATIVE_INFINITY;
  private fenceInFlight = false;
  private fenceTimer: NodeJS.Timeout | null = null;
  private started = false;
  /** Not listening on purpose: nothing used the notices for a while (UNLISTEN sent). */
  private paused = false;
  /** The client has connected (LISTEN may be sent on it). */
  private connected = false;
  /** Counts forget(): a fence sent before the last one answers for nothing. */
  private epoch = 0;
  private lastUse = performance.now();
  private fencesSent = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs = RETRY_MIN_MS;
  private closed = false;
  private notices = 0;
  private fences: { seq: number; lsn: bigint }[] = [];
  private lastFenceLsn = -1n;
  private noticed = -1n;

  constructor(private readonly opts: WriteNoticesOptions) {}

  start(): void {
    this.started = true;
    this.connect();
    this.startFences();
  }

  /** A mark to take before reading: -1 (worth nothing) while not listening. */
  mark(): number {
    this.use();
    return this.listening ? this.seq : -1;
  }

  /**
   * True when no write to any of these tables or parts (`table/column=value`) has committed
   * since `mark`, as far as known within the bound.
   */
  unchanged(keys: readonly string[], mark: number): boolean {
    this.use();
    if (mark < this.validFrom || !this.current()) return false;
    for (const k of keys) {
      const slash = k.indexOf('/');
      if (slash < 0) {
        if ((this.lastWrite.get(k) ?? -1) > mark) return false;
        continue;
      }
      if ((this.lastWhole.get(k.slice(0, slash)) ?? -1) > mark) return false;
      if ((this.lastPart.get(k) ?? this.partsForgotten) > mark) return false;
    }
    return true;
  }

  /**
   * A position past the commit of every write to these tables noticed up to `mark`: a page
   * read after `mark` on a replica that had replayed this far reflects them all. Null while
   * unknown (no fence sent after the last such notice has returned yet) or when the mark
   * counts for nothing.
   */
  positionFor(tables: readonly string[], mark: number): bigint | null {
    this.use();
    if (mark < this.validFrom) return null;
    let last = this.validFrom;
    for (const t of tables) last = Math.max(last, this.lastWrite.get(t) ?? -1);
    if (last > mark) return null;
    for (const f of this.fences) if (f.seq >= last) return f.lsn;
    return null;
  }

  /** Every write that committed at or before this position has been noticed here (-1: none known). */
  noticedThrough(): bigint {
    this.use();
    return this.listening ? this.noticed : -1n;
  }

  stats(): WriteNoticesStats {
    return {
      listening: this.listening,
      lagMs: this.listening ? Math.max(0, performance.now() - this.fencedAt) : null,
      notices: this.notices,
      idle: this.started && this.fenceTimer === null,
      fences: this.fencesSent,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    if (this.fenceTimer) clearInterval(this.fenceTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => {});
  }

  /** Marks the notices as used, and resumes paused fences with one at once (listening first if paused). */
  private use(): void {
    this.lastUse = performance.now();
    if (this.fenceTimer || !this.started || this.closed) return;
    this.startFences();
    if (!this.paused) {
      this.fence();
      return;
    }
    this.paused = false;
    // Not connected yet: connect() listens once it is.
    if (this.client && this.connected)
      this.listen(this.client).catch((err: Error) => this.opts.onError?.(err));
  }

  /** Stops listening while idle: what is written meanwhile is not sent to this pod at all. */
  private pause(): void {
    this.paused = true;
    if (!this.listening) return;
    this.forget();
    this.client?.query(`UNLISTEN ${WRITES_CHANNEL}`).catch((err: Error) => this.opts.onError?.(err));
  }

  /** Marks and fences taken so far count for nothing (not listening any more). */
  private forget(): void {
    this.epoch++;
    this.listening = false;
    this.validFrom = Number.POSITIVE_INFINITY;
    this.fenceInFlight = false;
    this.fences = [];
    this.lastFenceLsn = -1n;
    this.noticed = -1n;
  }

  private async listen(client: pg.Client): Promise<void> {
    await client.query(`LISTEN ${WRITES_CHANNEL}`);
    if (this.client !== client) return;
    // Paused while LISTEN was on its way: undone (a use meanwhile queues its LISTEN after this).
    if (this.paused) return void (await client.query(`UNLISTEN ${WRITES_CHANNEL}`));
    // Notices from now on are all delivered: marks taken from here count.
    this.validFrom = ++this.seq;
    this.listening = true;
    this.fence();
  }

  private startFences(): void {
    const every = Math.max(2, Math.floor(this.opts.maxStalenessMs / 3));
    const idleMs = this.opts.idleMs ?? IDLE_MS;
    const timer = setInterval(() => {
      if (performance.now() - this.lastUse <= idleMs) return this.fence();
      clearInterval(timer);
      if (this.fenceTimer !== timer) return;
      this.fenceTimer = null;
      this.pause();
    }, every);
    timer.unref();
    this.fenceTimer = timer;
  }

  private current(): boolean {
    return this.listening && performance.now() - this.fencedAt <= this.opts.maxStalenessMs;
  }

  private connect(): void {
    if (this.closed) return;
    const ssl = new URL(this.opts.url).searchParams.get('sslmode');
    const client = new pg.Client({
      connectionString: this.opts.url,
      application_name: 'flotilla-api-notices',
      keepAlive: true,
      ...(ssl ? {} : { ssl: false }),
    });
    this.client = client;
    client.on('notification', (n) => {
      if (n.channel !== WRITES_CHANNEL || !n.payload) return;
      this.notices++;
      this.record(n.payload);
    });
    const lost = (err?: Error) => {
      if (this.client !== client) return;
      this.client = null;
      this.connected = false;
      this.forget();
      if (err) this.opts.onError?.(err);
      client.end().catch(() => {});
      if (this.closed) return;
      this.retryTimer = setTimeout(() => this.connect(), this.retryMs);
      this.retryTimer.unref();
      this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client
      .connect()
      .then(() => {
        if (this.client !== client) return;
        this.connected = true;
        this.retryMs = RETRY_MIN_MS;
        if (!this.paused) return this.listen(client);
      })
      .catch(lost);
  }

  private record(payload: string): void {
    const slash = payload.indexOf('/');
    const table = slash < 0 ? payload : payload.slice(0, slash);
    if (this.lastWrite.size >= MAX_TABLES && !this.lastWrite.has(table)) {
      // Not tables: forget them all, and every mark with them.
      this.lastWrite.clear();
      this.lastWhole.clear();
      this.lastPart.clear();
      this.validFrom = ++this.seq;
      return;
    }
    const seq = ++this.seq;
    this.lastWrite.set(table, seq);
    if (slash < 0) {
      this.lastWhole.set(table, seq);
      return;
    }
    // Map keeps insertion order: set anew, the part goes last, and the first is the oldest.
    this.lastPart.delete(payload);
    this.lastPart.set(payload, seq);
    if (this.lastPart.size > MAX_PARTS) {
      const [oldest, at] = this.lastPart.entries().next().value as [string, number];
      this.lastPart.delete(oldest);
      this.partsForgotten = at;
    }
  }

  private fence(): void {
    const client = this.client;
    if (!client || !this.listening || this.fenceInFlight) return;
    this.fenceInFlight = true;
    this.fencesSent++;
    const sentAt = performance.now();
    const seq = this.seq;
    const before = this.lastFenceLsn;
    const epoch = this.epoch;
    const query: Promise<bigint | null> = this.opts.positions
      ? walInsertLsnOn(client)
      : client.query('SELECT 1').then(() => null);
    query.then(
      (lsn) => {
        if (this.client !== client || this.epoch !== epoch) return;
        this.fenceInFlight = false;
        this.fencedAt = sentAt;
        if (lsn === null) return;
        // Every notice counted by `seq` came from a commit before this fence ran.
        this.fences.push({ seq, lsn });
        if (this.fences.length > MAX_FENCES) this.fences.shift();
        this.lastFenceLsn = lsn;
        // Sent after a fence had returned at `before`: every commit up to it has been noticed.
        if (before > this.noticed) this.noticed = before;
      },
      (err: Error) => {
        if (this.client === client && this.epoch === epoch) this.fenceInFlight = false;
        this.opts.onError?.(err);
      },
    );
  }
}
