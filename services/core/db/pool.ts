// The PostgreSQL pool. Every query goes through @databases/pg's `sql` tagged template, so a
// value is always a bind parameter and never part of the SQL text.
import databasesPg, { type ConnectionPool, type Queryable, type SQLQuery, sql } from '@databases/pg';

// A CommonJS module: its default export is the `default` property of what Node hands over.
const createConnectionPool = databasesPg.default;

export type { ConnectionPool, Queryable, SQLQuery };
export { sql };

export interface PoolOptions {
  poolSize?: number;
  applicationName?: string;
  statementTimeoutMs?: number;
}

export function createPool(url: string, opts: PoolOptions = {}): ConnectionPool {
  const ssl = sslMode(url);
  return createConnectionPool({
    connectionString: url,
    bigIntMode: 'number',
    poolSize: opts.poolSize ?? 10,
    fallbackApplicationName: opts.applicationName ?? 'flotilla',
    ...(opts.statementTimeoutMs ? { statementTimeoutMilliseconds: opts.statementTimeoutMs } : {}),
    // Without an sslmode in the URL, do not try TLS first on every new connection.
    ...(ssl ? {} : { ssl: 'disable' as const }),
    // Connection errors surface on the query that needed the connection; an idle client's
    // error must not crash the process.
    onError: () => {},
  });
}

function sslMode(url: string): string | null {
  try {
    return new URL(url).searchParams.get('sslmode');
  } catch {
    return null;
  }
}

/** Exactly one row, or an error that says which query broke the promise. */
export async function one<T>(db: Queryable, query: SQLQuery): Promise<T> {
  const rows = await db.query(query);
  if (rows.length !== 1) throw new Error(`expected one row, got ${rows.length}`);
  return rows[0] as T;
}

/** At most one row. */
export async function maybeOne<T>(db: Queryable, query: SQLQuery): Promise<T | undefined> {
  const rows = await db.query(query);
  if (rows.length > 1) throw new Error(`expected at most one row, got ${rows.length}`);
  return rows[0] as T | undefined;
}
