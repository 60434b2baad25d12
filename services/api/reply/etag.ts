// Writing answers: rendered bodies with an ETag (a 304 for a matching If-None-Match) and
// HEAD handled. Errors are written by ../errors/reply.ts.
import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { compress, encodedEtag, MIN_BYTES, pickEncoding } from './compress.js';

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
 * hashed and written from the same bytes, rather than encoded by each). A body of MIN_BYTES
 * or more goes out compressed when the client accepts it (./compress.ts).
 */
export async function sendRendered(
  req: FastifyRequest,
  reply: FastifyReply,
  r: Rendered,
  etag: string = etagOf(r.body),
  bytes?: Buffer,
): Promise<FastifyReply> {
  // The body depends on Accept (compact JSON or indented text) and on Accept-Encoding: caches
  // must key on them (and on what else the route said it depends on: who asks, rest.ts).
  const vary = reply.getHeader('vary');
  const body = bytes ?? Buffer.from(r.body);
  const enc = body.length >= MIN_BYTES ? pickEncoding(req.headers['accept-encoding']) : null;
  const tag = enc ? encodedEtag(etag, enc) : etag;
  reply
    .header('etag', tag)
    .header('vary', vary ? `Accept, Accept-Encoding, ${vary}` : 'Accept, Accept-Encoding')
    .type(r.contentType);
  if (notModified(req, tag)) return reply.code(304).send();
  const sent = enc ? await compress(body, enc) : body;
  if (enc) reply.header('content-encoding', enc);
  reply.header('content-length', sent.length);
  if (req.method === 'HEAD') return reply.send();
  return reply.send(sent);
}
