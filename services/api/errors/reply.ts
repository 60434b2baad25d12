// The one place where errors become replies: REST reads, JSON-RPC calls, change hooks, and
// what Fastify and Node's HTTP parser refuse before any route runs. Everything else throws
// (services/core/errors.ts, ./catalogue.ts) and leaves the answer to this file.
//
// Bodies, as Buildbot writes them:
// - a 404 of any kind is `not found`, text/plain, whatever the error said;
// - any other REST error is {"error": "<message>"} as text/plain (Python's json.dumps);
// - a JSON-RPC call's error is {"jsonrpc": "2.0", "id": ..., "error": {"code", "message"}},
//   application/json, for the errors the catalogue gives a JSON-RPC code;
// - a change hook's error is its message as the body, as text/plain;
// - a database that is away (core/db/outage.ts) is a 503 with Retry-After, like every error
//   of the `unavailable` kind: it passes by itself, and the client is told when to come back;
// - anything that is not one of our errors is logged and answered 500 "internal error",
//   never with what it said.
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { databaseUnavailable, isDatabaseOutage } from '../../core/db/outage.js';
import { FlotillaError } from '../../core/errors.js';
import { pyDumps, pyString } from '../reply/pyjson.js';
import { DATA_POLICY } from '../reply/security-headers.js';
import {
  badRequest,
  bodyTooLarge,
  entryOf,
  headersTooLarge,
  notFound,
  requestTimeout,
  unsupportedMediaType,
  uriTooLong,
} from './catalogue.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A JSON-RPC call's id once its body is decoded: its errors carry it. */
    rpcCall?: { id: unknown };
  }
}

/** How a route's errors are written: the API's (REST, or JSON-RPC for a POST) or a hook's. */
export type ErrorFormat = 'api' | 'hook';

const PLAIN = 'text/plain; charset=utf-8';

export function pyErrorBody(message: string): string {
  return `{"error": ${pyString(message)}}`;
}

/** Buildbot writes JSON-RPC errors with Python's default separators, keys in insertion order. */
function rpcErrorBody(call: { id: unknown } | undefined, code: number, err: FlotillaError): string {
  const message = err.fields
    ? `{${Object.entries(err.fields)
        .map(([k, v]) => `${pyString(k)}: ${pyString(v)}`)
        .join(', ')}}`
    : pyString(err.message);
  const id = call ? `, "id": ${pyDumps(call.id).replace(/,/g, ', ')}` : '';
  return `{"jsonrpc": "2.0"${id}, "error": {"code": ${code}, "message": ${message}}}`;
}

/**
 * What the client may be told of an error: ours as they are, Fastify's own by their status
 * (never their text), anything else null (a bug or an outage: a 500).
 */
export function knownError(err: unknown): FlotillaError | null {
  if (err instanceof FlotillaError) return err;
  if (isDatabaseOutage(err)) return databaseUnavailable();
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  switch (status) {
    case 404:
      return notFound();
    case 408:
      return requestTimeout();
    case 413:
      return bodyTooLarge();
    case 414:
      return uriTooLong();
    case 415:
      return unsupportedMediaType();
    default:
      return badRequest();
  }
}

/** Answers `err` in the API's shapes (a POST is a JSON-RPC call). */
export function sendError(req: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const known = knownError(err);
  if (!known) {
    req.log.error({ err, url: loggableUrl(req.raw.url) }, 'request failed');
    return reply.code(500).type(PLAIN).send(pyErrorBody('internal error'));
  }
  const { status, rpc, retryAfter } = entryOf(known);
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
  if (req.method === 'POST' && rpc !== undefined) {
    if (rpc === 'bare') {
      return reply
        .code(status)
        .type(PLAIN)
        .send(`{"error": {"message": ${JSON.stringify(known.message)}}}`);
    }
    return reply
      .code(status)
      .type('application/json')
      .send(rpcErrorBody(req.rpcCall, rpc, known));
  }
  if (status === 404) return reply.code(404).type(PLAIN).send('not found');
  return reply.code(status).type(PLAIN).send(pyErrorBody(known.message));
}

/** A change hook's error: its message as the body. */
export function sendHookError(req: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const known = knownError(err);
  if (!known) {
    req.log.error({ err, url: loggableUrl(req.raw.url) }, 'adding changes from a web hook failed');
    // Buildbot's words for the same failure.
    return reply.code(500).type(PLAIN).send('Error processing changes.');
  }
  const { status, retryAfter } = entryOf(known);
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
  // As text, never HTML: a message may quote the request (docs/security.md).
  return reply.code(status).type(PLAIN).send(known.message);
}

/** The error handler of a Fastify context whose routes answer in `format`. */
export function errorHandler(format: ErrorFormat) {
  const send = format === 'hook' ? sendHookError : sendError;
  return (err: unknown, req: FastifyRequest, reply: FastifyReply) => send(req, reply, err);
}

/**
 * Errors Fastify meets before it has a route (a URL it cannot decode, a path parameter past
 * its length): these name nothing, or too much.
 */
export function frameworkErrors(err: unknown, req: FastifyRequest, res: unknown): void {
  const code = (err as { code?: string }).code;
  const reply = res as FastifyReply;
  if (code === 'FST_ERR_BAD_URL') sendError(req, reply, notFound());
  else if (code === 'FST_ERR_MAX_PARAM_LENGTH') sendError(req, reply, uriTooLong());
  else sendError(req, reply, knownError(err) ?? badRequest());
}

/** A request Node's HTTP parser refuses never reaches Fastify: answered here, on the socket. */
export function clientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [refusal, reason] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [headersTooLarge(), 'Request Header Fields Too Large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [requestTimeout(), 'Request Timeout']
        : [badRequest(), 'Bad Request'];
  const body = pyErrorBody(refusal.message);
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${entryOf(refusal).status} ${reason}\r\nContent-Type: ${PLAIN}\r\nX-Content-Type-Options: nosniff\r\n` +
      `Content-Security-Policy: ${DATA_POLICY}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  // A client that does not read the answer does not keep the socket.
  setTimeout(() => socket.destroy(), 1000).unref();
}

// What of a request may be written to the log: its URL without credentials (an access token
// passed as ?token= to /auth/login, or any parameter named like a secret).
const SECRET_PARAM = /([?&](?:token|access_token|id_token|code|password|secret)=)[^&#]*/gi;
const LOGGED_URL_CHARS = 2048;

export function loggableUrl(url: string | undefined): string {
  return (url ?? '').slice(0, LOGGED_URL_CHARS).replace(SECRET_PARAM, '$1***');
}
