// Workers' connections and disconnections, written to the database in the order they came, as
// few transactions as the database lets through: while one write is under way, the changes
// that come meanwhile wait and go together in the next (membership.ts writes each batch, with
// core/data/workers.ts's workersConnected for its connections). Each caller's promise settles
// when its own change is committed, or failed.
//
// Why: a master that comes up while its workers log in (333 at once in the fleet benchmark,
// load/fleet/run.ts) recorded each login in its own transaction of five round trips (BEGIN,
// the info's UPDATE, the connection's INSERT, the entity read for its event, COMMIT). Its pool
// serves transactions first come first served, so the 1,665 round trips of the logins went
// ahead of the first claim pass and of the first builds' rows: the first command waited for
// every worker to be written. Batched, the logins are a few transactions of five round trips.
// Measured, each master of three with 1,000 workers logging in and 25,000 pending, one
// transaction a login (dbaff62) against batched, runs taken by turns (2026-11-28 22:21-22:50
// UTC, load 12-37, so CPU is the figure; load/results/fleet.md, "22:15-23:59"):
//   BENCH_PG_PORT=26440 FLEET_REDIS_PORT=26441 STOP_AFTER=A load/fleet/run.sh
// CPU from spawn to first command, median of 15 masters 2.69 s (1.95-3.60), batched median of
// 12 2.20 s (1.64-2.43); from ready to first command 1.0 s (0.35-1.40) and 0.51 s (0.14-0.80).
export type ConnectionChange =
  | { kind: 'connected'; workerid: number; info: object }
  | { kind: 'disconnected'; workerid: number };

/** Writes a batch in one transaction, in order; returns the ids it found no worker for. */
export type WriteChanges = (changes: readonly ConnectionChange[]) => Promise<readonly number[]>;

interface Waiting {
  change: ConnectionChange;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class ConnectionRecords {
  private queue: Waiting[] = [];
  private writing: Promise<void> | null = null;

  constructor(
    private readonly write: WriteChanges,
    /** A change naming a worker the database does not have (as workerConnected's NOT_FOUND). */
    private readonly missing: (workerid: number) => Error,
  ) {}

  /** Resolves once this change is committed (with the others of its batch). */
  record(change: ConnectionChange): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ change, resolve, reject });
      this.flush();
    });
  }

  private flush(): void {
    if (this.writing || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.writing = this.write(batch.map((w) => w.change))
      .then(
        (missing) => {
          const absent = new Set(missing);
          for (const w of batch)
            if (absent.has(w.change.workerid)) w.reject(this.missing(w.change.workerid));
            else w.resolve();
        },
        (err: unknown) => {
          for (const w of batch) w.reject(err);
        },
      )
      .finally(() => {
        this.writing = null;
        this.flush();
      });
  }
}
