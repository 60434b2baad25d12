// Telling a database that is away from a query that is wrong. A restart, a failover or a
// network cut makes every query fail for a while; that is nobody's fault and passes by
// itself, so it becomes an UnavailableError (a 503 with Retry-After at the API, a retry
// with backoff in a master), never an "internal error". Everything else a query throws is
// left as it is.
import { UnavailableError } from '../errors.js';

// SQLSTATE classes and codes that mean "the server is not there for you right now":
// 08 connection exception; 57P01 admin_shutdown (a fast or immediate stop), 57P02
// crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down, in recovery);
// 53300 too_many_connections; 25006 read_only_sql_transaction (a write that reached a
// standby during a failover).
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '25006']);
// Node's socket errors on the way to the server.
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// node-postgres says these in words only (no code): a connection that died under a query,
// one used after it died, and a pool that could not connect within its timeout.
const MESSAGES = [
  /^Connection terminated/,
  /Client has encountered a connection error and is not queryable/,
  /^timeout exceeded when trying to connect/,
  /^Connection terminated due to connection timeout/,
];

export function isDatabaseOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (SQLSTATES.has(code) || code.startsWith('08') || SOCKET_CODES.has(code)))
    return true;
  // AggregateError: a host name that resolved to several addresses, each refused.
  if (err instanceof AggregateError && err.errors.some(isDatabaseOutage)) return true;
  return MESSAGES.some((m) => m.test(err.message));
}

export const databaseUnavailable = (): UnavailableError<'DATABASE_UNAVAILABLE'> =>
  new UnavailableError('DATABASE_UNAVAILABLE', 'the database is unavailable for a moment: try again later');

/**
 * Worth trying again as it is: the database was away, or PostgreSQL gave up on the
 * transaction for a reason of its own that a retry does not meet again (a deadlock, a
 * serialization failure).
 */
export function isTransient(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return isDatabaseOutage(err) || code === '40P01' || code === '40001';
}
