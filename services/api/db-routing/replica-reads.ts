// The HTTP side of reads on replicas (replicas.ts): control actions answer with the log
// position after their writes, each request's reads run with the position its client sent,
// and /readyz says where reads go.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { flushedWritePosition, lsnText } from '../../core/data/replication.js';
import type { Queryable } from '../../core/db/pool.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { requestWalPosition, WAL_HEADER, walCookie } from './replica-requests.js';
import type { ReadRouter } from './replicas.js';

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
