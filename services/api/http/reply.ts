// Writing answers: errors in Buildbot's shapes, and rendered bodies with an ETag (a 304
// for a matching If-None-Match) and HEAD handled.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Rendered } from '../query/envelope.js';
import { pyErrorBody } from '../query/pyjson.js';
import type { ApiError } from './errors.js';

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  if (err.status === 404) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
  return reply.code(err.status).type('text/plain; charset=utf-8').send(pyErrorBody(err.message));
}

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

/** Errors of a POST carry the message where JSON-RPC callers look for it, as Buildbot does. */
export function sendPostError(reply: FastifyReply, err: ApiError): FastifyReply {
  if (err.status === 404) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
  return reply
    .code(err.status)
    .type('text/plain; charset=utf-8')
    .send(`{"error": {"message": ${JSON.stringify(err.message)}}}`);
}

export function sendRendered(
  req: FastifyRequest,
  reply: FastifyReply,
  r: Rendered,
  etag: string = etagOf(r.body),
): FastifyReply {
  // The body depends on Accept (compact JSON or indented text): caches must key on it.
  reply.header('etag', etag).header('vary', 'Accept').type(r.contentType);
  if (notModified(req, etag)) return reply.code(304).send();
  if (req.method === 'HEAD') return reply.header('content-length', Buffer.byteLength(r.body)).send();
  return reply.send(r.body);
}
