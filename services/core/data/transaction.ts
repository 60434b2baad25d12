// Every data operation runs inside a transaction and queues its events; the events are
// published only once the transaction has committed, so nobody hears of what did not happen.
// They are handed to the connection's publisher (events/publisher.ts), which sends them in
// commit order in the background: the caller has its answer once PostgreSQL committed, and a
// Redis outage delays events, never a build.
import type { Redis } from 'ioredis';
import type { ConnectionPool, Queryable } from '../db/pool.js';
import type { RoutingKey } from '../events/bus.js';
import { publisherFor } from '../events/publisher.js';

export class Outbox {
  readonly events: { key: RoutingKey; message: unknown }[] = [];
  add(key: RoutingKey, message: unknown): void {
    this.events.push({ key, message });
  }
  /** One event under each of a resource's routing keys (events/keys.ts), `event` appended. */
  addAll(keys: readonly RoutingKey[], event: string, message: unknown): void {
    for (const key of keys) this.add([...key, event], message);
  }
}

export interface DataContext {
  db: ConnectionPool;
  redis: Redis;
  /**
   * Told when events cannot be published for now, or were dropped (the data is committed
   * regardless); the first context on a connection to name one is the one told.
   */
  onPublishError?: (err: Error) => void;
  /**
   * Runs each transaction instead of `db.tx`: a build's writes go through one that fences
   * them with the build's claim, applies each once and rides out a database outage
   * (services/master/claims.ts). It may run `body` more than once, or not at all when an
   * earlier attempt is known to have committed.
   */
  runTx?: <T>(body: (q: Queryable) => Promise<T>) => Promise<T>;
  /** The build whose row each transaction of `runTx` has locked before its body (Tx.lockedBuild). */
  lockedBuild?: number;
}

/** The transaction handle and the outbox every operation takes. */
export interface Tx {
  q: Queryable;
  out: Outbox;
  /**
   * The build whose row this transaction holds locked FOR NO KEY UPDATE from its start: a
   * build's fenced writes (services/master/claims.ts); build-lock.ts does not ask again.
   */
  lockedBuild?: number;
}

export async function transact<T>(ctx: DataContext, fn: (tx: Tx) => Promise<T>): Promise<T> {
  // The events of the attempt that ran last: the one that committed, when one did.
  let out = new Outbox();
  const body = (q: Queryable) => {
    out = new Outbox();
    return fn(
      ctx.runTx && ctx.lockedBuild !== undefined ? { q, out, lockedBuild: ctx.lockedBuild } : { q, out },
    );
  };
  const result = await (ctx.runTx ? ctx.runTx(body) : ctx.db.tx(body));
  publisherFor(ctx.redis, ctx.onPublishError).enqueue(out.events);
  return result;
}

export const now = (): number => Math.floor(Date.now() / 1000);
