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

export function notModified(req: FastifyRequest, etag: string): boolean {
  const inm = req.headers['if-none-match'];
  return (
    !!inm && inm.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}` || t.trim() === '*')
  );
}

export function sendRendered(req: FastifyRequest, reply: FastifyReply, r: Rendered): FastifyReply {
  const etag = etagOf(r.body);
  reply.header('etag', etag).type(r.contentType);
  if (notModified(req, etag)) return reply.code(304).send();
  if (req.method === 'HEAD') return reply.header('content-length', Buffer.byteLength(r.body)).send();
  return reply.send(r.body);
}
