// Read-your-writes with reads on replicas (replicas.ts): a control action answers with the
// log position after its writes (a cookie for browsers and sessions, a header for scripts),
// and each request's reads run with the position its client sent, so they go to a replica
// only once it has replayed that far. Also what /readyz says of where reads go. Which pages
// a request may keep in the page cache: ../cache/replica-policy.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { flushedWritePosition, lsnText, lsnValue } from '../../core/data/replication.js';
import type { Queryable } from '../../core/db/pool.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { ReadRouter } from './replicas.js';

/** The client's write position: cookie (browsers, sessions) and header (scripts). */
export const WAL_COOKIE = 'flotilla_wal';
export const WAL_HEADER = 'x-flotilla-wal-position';
const WAL_COOKIE_MAX_AGE_S = 3600;

/** The write position a request carries (header first, then cookie); null when none or unreadable. */
export function requestWalPosition(headers: Record<string, string | string[] | undefined>): bigint | null {
  const header = headers[WAL_HEADER];
  const fromHeader = typeof header === 'string' ? header : null;
  const cookie = typeof headers.cookie === 'string' ? headers.cookie : '';
  const m = new RegExp(`(?:^|;\\s*)${WAL_COOKIE}=([0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8})(?:;|$)`).exec(cookie);
  for (const text of [fromHeader, m?.[1] ?? null]) {
    if (text === null) continue;
    try {
      return lsnValue(text.trim());
    } catch {
      // not a position: as if absent
    }
  }
  return null;
}

export function walCookie(lsn: bigint, secure: boolean): string {
  return `${WAL_COOKIE}=${lsnText(lsn)}; Path=/; Max-Age=${WAL_COOKIE_MAX_AGE_S}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** What the public /readyz says of reads: where they go, and how many replicas are up. */
export function readsSummary(router: ReadRouter): { from: string; replicas: number; up: number } {
  const s = router.status();
  return { from: s.from, replicas: s.replicas.length, up: s.replicas.filter((r) => r.state === 'up').length };
}

/**
 * A control action answers with the log position after its writes, which the client's next
 * reads wait for on a replica (read-your-writes).
 */
export function sendWritePositions(app: FastifyInstance, db: Queryable, secure: boolean, log: Logger): void {
  app.addHook('onSend', async (req, reply, payload) => {
    if (req.method !== 'POST' || !req.url.startsWith('/api/v2') || reply.statusCode >= 500) return payload;
    try {
      const lsn = await flushedWritePosition(db);
      reply.header('set-cookie', walCookie(lsn, secure));
      reply.header(WAL_HEADER, lsnText(lsn));
    } catch (err) {
      // Then the next reads may come from a replica without the write, within the lag bound.
      log.warn({ err: (err as Error).message }, 'write position not known: not sent');
    }
    return payload;
  });
}

type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * Runs each request's reads with the write position its client sent. The JSON-RPC handler
 * sends and returns nothing: with the onSend hook above still running, Fastify would take
 * that nothing for the answer, so the reply itself is returned.
 */
export function withWritePosition(router: ReadRouter, handler: Handler): Handler {
  return async (req, reply) => {
    const out = await router.run(requestWalPosition(req.headers), () => handler(req, reply));
    return out === undefined ? reply : out;
  };
}
