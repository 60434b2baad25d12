// Writing answers: rendered bodies with an ETag (a 304 for a matching If-None-Match) and
// HEAD handled. Errors are written by ../errors/reply.ts.
import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A body as written, with its type (query/envelope.ts renders pages so). */
export interface Rendered {
  body: string;
  contentType: string;
}

// One call, no Hash object: every page read afresh is hashed.
export function etagOf(body: string | Buffer): string {
  return `"${hash('sha1', body, 'base64url')}"`;
}

/** If-None-Match uses the weak comparison (RFC 9110): W/"x" and "x" match each other. */
export function notModified(req: FastifyRequest, etag: string): boolean {
  const inm = req.headers['if-none-match'];
  if (!inm) return false;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  return inm.split(',').some((t) => t.trim() === '*' || opaque(t) === opaque(etag));
}

/**
 * `bytes`, when given, is the body already encoded (a page read afresh is encoded once, then
 * hashed and written from the same bytes, rather than encoded by each).
 */
export function sendRendered(
  req: FastifyRequest,
  reply: FastifyReply,
  r: Rendered,
  etag: string = etagOf(r.body),
  bytes?: Buffer,
): FastifyReply {
  // The body depends on Accept (compact JSON or indented text): caches must key on it (and
  // on what else the route said it depends on: who asks, rest.ts).
  const vary = reply.getHeader('vary');
  reply
    .header('etag', etag)
    .header('vary', vary ? `Accept, ${vary}` : 'Accept')
    .type(r.contentType);
  if (notModified(req, etag)) return reply.code(304).send();
  if (req.method === 'HEAD')
    return reply.header('content-length', bytes?.length ?? Buffer.byteLength(r.body)).send();
  return reply.send(bytes ?? r.body);
}
