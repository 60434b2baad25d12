// Writing answers: rendered bodies with an ETag (a 304 for a matching If-None-Match) and
// HEAD handled. Errors are written by ../errors/reply.ts.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Rendered } from '../query/envelope.js';

export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/** If-None-Match uses the weak comparison (RFC 9110): W/"x" and "x" match each other. */
export function notModified(req: FastifyRequest, etag: string): boolean {
  const inm = req.headers['if-none-match'];
  if (!inm) return false;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  return inm.split(',').some((t) => t.trim() === '*' || opaque(t) === opaque(etag));
}

export function sendRendered(
  req: FastifyRequest,
  reply: FastifyReply,
  r: Rendered,
  etag: string = etagOf(r.body),
): FastifyReply {
  // The body depends on Accept (compact JSON or indented text): caches must key on it (and
  // on what else the route said it depends on: who asks, rest.ts).
  const vary = reply.getHeader('vary');
  reply
    .header('etag', etag)
    .header('vary', vary ? `Accept, ${vary}` : 'Accept')
    .type(r.contentType);
  if (notModified(req, etag)) return reply.code(304).send();
  if (req.method === 'HEAD') return reply.header('content-length', Buffer.byteLength(r.body)).send();
  return reply.send(r.body);
}
