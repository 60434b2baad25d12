// A pool's statements prepared once per connection. node-postgres sends a statement with
// parameters as an unnamed one (Parse, Bind, Execute), which PostgreSQL parses and plans each
// time; given a name, it sends the Parse once per connection and then only Bind and Execute,
// and PostgreSQL keeps the parsed statement and its plan cache for the connection's life.
// PostgreSQL alone on a build start's statements (load/fleet/pgbench-start.sql): 420-520
// starts/s sent unnamed, 730-930 prepared (load/results/fleet.md, 2026-11-29 02:17); a plan of
// `SELECT max(id) FROM builds WHERE buildrequestid = $1` costs 0.8 ms, its run 0.3 ms.
//
// Which statements: only those with bind parameters. A text without any goes by the simple
// protocol (one message, no Parse), and every kind of text that must never be prepared is
// among those: DDL, SET, LISTEN, COPY, BEGIN/COMMIT, and several statements in one text
// (PostgreSQL refuses parameters in all of these; @databases/pg splits a text of several
// statements into single ones before any reaches the driver). So a name never changes
// which texts are accepted, only how long PostgreSQL keeps their parse.
//
// How many: some texts are built (a list's `$1, ..., $n`), so a pool names at most
// `maxTexts` distinct texts over its life, first come, and sends any other unnamed, as
// before. A connection therefore holds at most that many; see MAX_TEXTS for the figure.
//
// A schema change: PostgreSQL replans a prepared statement whose tables changed, but refuses
// to run one whose result's columns changed (`SELECT *` after ADD COLUMN, a column's type):
// SQLSTATE 0A000, "cached plan must not change result type", on every later run on that
// connection. @databases/pg ends the connection that met it (as after any error but a
// constraint's), but the pool's other connections still hold the statement: so the text is
// given a new name, which every connection prepares afresh (the old one stays unused until
// its connection closes, and counts toward the bound), and a statement run alone (the pool's
// own query) is run again once: the refusal comes before the statement does anything. In a
// transaction the error aborts the transaction as any error does, and the caller's next one
// uses the new name.
import type { ConnectionPool, SQLQuery } from '@databases/pg';
import { statementName } from './statement-name.js';

/**
 * The bound on distinct texts a pool prepares. What one costs PostgreSQL, in the backend's
 * memory (pg_backend_memory_contexts' CachedPlanSource and CachedPlanQuery after PREPARE and
 * one EXECUTE, as postgres on the bench cluster, 2026-11-29): 8 KiB for
 * `SELECT max(id) FROM builds WHERE buildrequestid = $1`, 25 KiB for a two-table join of ten
 * columns; a generic plan, once PostgreSQL keeps one, about as much again. 256 texts are then
 * 4-13 MiB a connection at the very most (256 × 16-50 KiB), against a plan saved on every
 * call. How many a run
 * needs: the fleet's phases 0 and S (three masters, two APIs, 1,000 builders and workers,
 * 1,000 starts) sent at most 104 distinct texts with parameters, masters, APIs and runner
 * together (pg_stat_statements after `STOP_AFTER=S load/fleet/run.sh`, queries with a `$1`,
 * 2026-11-29 03:47): 256 leaves room for the paths a short run does not take.
 */
export const MAX_TEXTS = 256;

export interface PrepareOptions {
  /** At most this many distinct texts named over the pool's life (default MAX_TEXTS). */
  maxTexts?: number;
}

interface Formatted {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** The text's name and how many times it was renamed after a schema change. */
interface Named {
  name: string;
  renamed: number;
}

/** The statement texts one pool prepares, and under which names. */
export class PreparedStatements {
  private readonly named = new Map<string, Named>();
  /** Names handed out, renamed ones included: the most any connection can hold. */
  private handedOut = 0;
  /** Errors of a statement renamed after a schema change, with the statement they came from. */
  private readonly stale = new WeakMap<object, SQLQuery>();

  constructor(private readonly maxTexts = MAX_TEXTS) {}

  /** The name to send `text` under, or undefined to send it unnamed. */
  nameFor(text: string, values: readonly unknown[]): string | undefined {
    if (values.length === 0) return undefined;
    const known = this.named.get(text);
    if (known) return known.name;
    if (this.handedOut >= this.maxTexts) return undefined;
    this.handedOut++;
    const name = statementName(text);
    this.named.set(text, { name, renamed: 0 });
    return name;
  }

  /** How many names this pool has handed out (what a connection may hold at most). */
  get size(): number {
    return this.handedOut;
  }

  /** @databases/pg's handlers that name each statement and rename one whose plan went stale. */
  handlers(): {
    onQueryStart: (query: SQLQuery, q: Formatted) => void;
    onQueryError: (query: SQLQuery, q: Formatted, err: Error) => void;
  } {
    return {
      onQueryStart: (_query, q) => {
        const name = this.nameFor(q.text, q.values);
        // The object the driver hands to node-postgres next: its name is what pg reads.
        if (name) (q as { name?: string }).name = name;
      },
      onQueryError: (query, q, err) => {
        const name = (q as { name?: string }).name;
        if (!name || !isStalePlan(err)) return;
        this.rename(q.text, name);
        this.stale.set(err, query);
      },
    };
  }

  /**
   * Whether `err`, thrown by running `query` alone, came from a prepared statement renamed
   * since: then running it again prepares it afresh. Answers true once per error.
   */
  retryable(err: unknown, query: SQLQuery): boolean {
    if (typeof err !== 'object' || err === null || this.stale.get(err) !== query) return false;
    this.stale.delete(err);
    return true;
  }

  /**
   * A new name for a text whose prepared statement PostgreSQL refuses to run, unless another
   * connection's refusal renamed it already. Beyond the bound it goes unnamed from now on.
   */
  private rename(text: string, failed: string): void {
    const known = this.named.get(text);
    if (!known || known.name !== failed) return;
    if (this.handedOut >= this.maxTexts) {
      this.named.delete(text);
      return;
    }
    this.handedOut++;
    known.renamed++;
    known.name = `${statementName(text)}_${known.renamed}`;
  }
}

/**
 * PostgreSQL's refusal to run a prepared statement whose result's columns changed. The
 * message is translated with lc_messages; the routine that raises it is not.
 */
function isStalePlan(err: Error): boolean {
  const e = err as { code?: string; routine?: string };
  return (
    e.code === '0A000' &&
    (e.routine === 'RevalidateCachedQuery' || err.message.includes('cached plan must not change result type'))
  );
}

/**
 * The pool's own query (a statement run alone, outside any transaction) run once more when
 * its prepared statement was refused after a schema change. A query of several statements
 * is never run again: those before the refused one have run.
 */
export function retryStalePlans(pool: ConnectionPool, prepared: PreparedStatements): void {
  const run = pool.query.bind(pool) as (q: SQLQuery | SQLQuery[]) => Promise<unknown>;
  const query = async (q: SQLQuery | SQLQuery[]) => {
    try {
      return await run(q);
    } catch (err) {
      if (Array.isArray(q) || !prepared.retryable(err, q)) throw err;
      return await run(q);
    }
  };
  pool.query = query as ConnectionPool['query'];
}
