// A step's writes that need not commit on their own, each carried by the step's next
// transaction ahead of that transaction's own statements: the `running` state string by the
// transaction that adds the command's log, a command's logs finished by the step's end.
// Every transaction of a build is fenced (claims.ts): its own BEGIN, the fence's read and
// record, COMMIT, and the record's triggers. A short step made six of them; folded, four
// (load/results/fleet.md, 2026-11-29 00:40, and test/master/builds/statements.test.ts).
// A folded write commits with the transaction that carries it, or not at all: what is told
// after it (a finished log's compression) waits for that commit.
import { type DataContext, type Tx, transact } from '../../core/data/index.js';

interface Folded {
  write: (tx: Tx) => Promise<void>;
  /** Once the write has committed. */
  after?: () => void;
}

export class StepWrites {
  private queued: Folded[] = [];

  constructor(private readonly ctx: DataContext) {}

  /** Queue `write` for the step's next transaction. */
  fold(write: (tx: Tx) => Promise<void>, after?: () => void): void {
    this.queued.push(after ? { write, after } : { write });
  }

  /** A transaction of the step's: the queued writes first, in the order queued, then `fn`. */
  async transact<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const carried = this.queued;
    this.queued = [];
    const result = await transact(this.ctx, async (tx) => {
      for (const f of carried) await f.write(tx);
      return fn(tx);
    });
    for (const f of carried) f.after?.();
    return result;
  }

  /** What is still queued, in a transaction of its own (a step that ended without its end's). */
  async flush(): Promise<void> {
    if (this.queued.length > 0) await this.transact(async () => {});
  }
}
