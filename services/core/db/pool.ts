// The PostgreSQL pool. Every query goes through @databases/pg's `sql` tagged template, so a
// value is always a bind parameter and never part of the SQL text.
import databasesPg, {
  type ConnectionPool,
  pgFormat,
  type Queryable,
  type SQLQuery,
  sql,
} from '@databases/pg';
import { KeptTexts, keepTexts } from './kept-texts.js';
import { PreparedStatements, type PrepareOptions, retryStalePlans } from './prepared-statements.js';
import { clientOf, sendUncopied } from './uncopied-queries.js';

// A CommonJS module: its default export is the `default` property of what Node hands over.
const createConnectionPool = databasesPg.default;

export type { ConnectionPool, Queryable, SQLQuery };
export { sql };

export interface PoolOptions {
  poolSize?: number;
  applicationName?: string;
  statementTimeoutMs?: number;
  /**
   * The server ends a session left inside a transaction, between two statements, this long
   * (idle_in_transaction_session_timeout), and with it the row locks the transaction holds.
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * Statements with parameters prepared once per connection (prepared-statements.ts says
   * which, how many and what a schema change does to them). Not behind a pooler that hands
   * one session's statements to another's connection (PgBouncer's transaction mode before
   * its max_prepared_statements).
   */
  prepare?: PrepareOptions;
  /**
   * The driver's per-statement work cut short (on unless said): `kept`, each statement's
   * formatted text kept by its shape (kept-texts.ts); `all`, and a transaction's connection
   * given Queries it does not copy (uncopied-queries.ts). Only load/bench/statement-cpu.ts
   * asks for less, to measure each.
   */
  shortcuts?: 'none' | 'kept' | 'all';
}

export function createPool(url: string, opts: PoolOptions = {}): ConnectionPool {
  const ssl = sslMode(url);
  const prepared = opts.prepare ? new PreparedStatements(opts.prepare.maxTexts) : undefined;
  const pool = createConnectionPool({
    connectionString: url,
    bigIntMode: 'number',
    poolSize: opts.poolSize ?? 10,
    fallbackApplicationName: opts.applicationName ?? 'flotilla',
    ...(opts.statementTimeoutMs ? { statementTimeoutMilliseconds: opts.statementTimeoutMs } : {}),
    ...(opts.idleInTransactionTimeoutMs
      ? { idleInTransactionSessionTimeoutMilliseconds: opts.idleInTransactionTimeoutMs }
      : {}),
    // Without an sslmode in the URL, do not try TLS first on every new connection.
    ...(ssl ? {} : { ssl: 'disable' as const }),
    // Connection errors surface on the query that needed the connection; an idle client's
    // error must not crash the process.
    onError: () => {},
    ...prepared?.handlers(),
  });
  if (prepared) retryStalePlans(pool, prepared);
  const shortcuts = opts.shortcuts ?? 'all';
  if (shortcuts !== 'none') {
    keepTexts(pool, new KeptTexts(), (t) => {
      const client = shortcuts === 'all' ? clientOf(t) : undefined;
      if (client) sendUncopied(client);
    });
  }
  return pool;
}

/**
 * Opens `count` of the pool's connections now, side by side (one trivial statement each, all
 * at once, so that none waits for another's connection), instead of one by one as statements
 * come to need them. Resolves once all answered; rejects with the first failure.
 *
 * Why: a connection's opening is a backend forked and a SCRAM exchange (PBKDF2 on both sides):
 * one alone took 120-122 ms of wall here, ten at once 250-277 ms (the benchmark cluster,
 * 2026-11-29 14:40, load/fleet/open-cost.ts, the command in its head). A master opened its
 * pool lazily, so its first builds, the start gate's ten at once (master/builds/runner.ts),
 * each waited for a connection to open on their way to their first command.
 */
export async function openConnections(pool: ConnectionPool, count: number): Promise<void> {
  await Promise.all(Array.from({ length: count }, () => pool.query(sql`SELECT 1`)));
}

function sslMode(url: string): string | null {
  try {
    return new URL(url).searchParams.get('sslmode');
  } catch {
    return null;
  }
}

/**
 * A query answered with a number of rows its caller ruled out: a bug or a broken invariant,
 * never an expected outcome (an expected "not there" is a maybeOne that returns undefined).
 * The message names the statement (its text, never its values).
 */
export class RowCountError extends Error {
  override name = 'RowCountError';
  constructor(
    readonly expected: 'one' | 'at most one',
    readonly got: number,
    readonly statement: string,
  ) {
    super(`expected ${expected} row, got ${got}: ${statement}`);
  }
}

const MAX_STATEMENT_IN_ERROR = 200;

function statementOf(query: SQLQuery): string {
  const text = query.format(pgFormat).text.replace(/\s+/g, ' ').trim();
  return text.length > MAX_STATEMENT_IN_ERROR ? `${text.slice(0, MAX_STATEMENT_IN_ERROR)}...` : text;
}

/**
 * Anything that runs one statement and answers its rows: a pool, a transaction, or the API's
 * read pools (which prepare their statements and so are not a Queryable).
 */
export interface RowSource {
  query(query: SQLQuery): Promise<unknown[]>;
}

// Rows come back typed as the caller says: the column types are the statement's, written
// beside it in core/data, and these helpers are the one place the untyped rows are cast.

/** Every row. */
export async function many<T>(db: RowSource, query: SQLQuery): Promise<T[]> {
  return (await db.query(query)) as T[];
}

/** Exactly one row, or a RowCountError that says which statement broke the promise. */
export async function one<T>(db: RowSource, query: SQLQuery): Promise<T> {
  const rows = await db.query(query);
  if (rows.length !== 1) throw new RowCountError('one', rows.length, statementOf(query));
  return rows[0] as T;
}

/** At most one row: undefined when there is none, a RowCountError when there are more. */
export async function maybeOne<T>(db: RowSource, query: SQLQuery): Promise<T | undefined> {
  const rows = await db.query(query);
  if (rows.length > 1) throw new RowCountError('at most one', rows.length, statementOf(query));
  return rows[0] as T | undefined;
}
