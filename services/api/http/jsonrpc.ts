// POST on /api/v2/<path>: a JSON-RPC 2.0 call of a control action, decoded and answered
// exactly as Buildbot does (codes, messages, which status goes with which error).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ownerNameOf } from '../../core/auth/authz.js';
import type { Authorizer } from '../auth/authorizer.js';
import { pyDumps, pyString } from '../query/pyjson.js';
import type { Match } from '../registry/paths.js';
import { ApiError, missingContentType, notFound } from './errors.js';
import { sendError } from './reply.js';

export const JSONRPC_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/** A JSON-RPC failure: answered as a JSON-RPC error object with this HTTP status. */
export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly status: number,
    readonly code: number,
    readonly detail: string | Record<string, string>,
  ) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail));
  }
}

export const unsupportedAction = (method: string) =>
  new RpcError(501, JSONRPC_CODES.methodNotFound, `action: ${method} is not supported`);
export const invalidParams = (errors: Record<string, string>) =>
  new RpcError(400, JSONRPC_CODES.invalidParams, errors);

export interface ActionCall {
  match: Match;
  method: string;
  params: Record<string, unknown>;
  /** Who asks: Buildbot's owner rule (email, username or full name; "anonymous"). */
  owner: string;
}

/** What a resource does with a POST: answer a result, or throw ApiError / RpcError. */
export type ControlHandler = (call: ActionCall) => Promise<unknown>;

interface Decoded {
  method: string;
  id: unknown;
  params: Record<string, unknown>;
}

const bad = (message: string) => new RpcError(400, JSONRPC_CODES.invalidRequest, message);

function decode(req: FastifyRequest): Decoded {
  const ctype = req.headers['content-type'];
  // Buildbot fails with a 500 here (a TypeError); 415 says what is missing.
  if (ctype === undefined) throw missingContentType();
  if (ctype.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
    throw bad('Invalid content-type (use application/json)');
  }
  const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch (err) {
    throw new RpcError(400, JSONRPC_CODES.parseError, `JSON parse error: ${(err as Error).message}`);
  }
  if (Array.isArray(data)) throw bad('JSONRPC batch requests are not supported');
  if (typeof data !== 'object' || data === null) throw bad('JSONRPC root object must be an object');
  const o = data as Record<string, unknown>;
  const check = (name: string, ok: (v: unknown) => boolean, what: string) => {
    if (!(name in o)) throw bad(`missing key '${name}'`);
    if (!ok(o[name])) throw bad(`'${name}' must be ${what}`);
  };
  check('jsonrpc', (v) => typeof v === 'string', 'a string');
  check('method', (v) => typeof v === 'string', 'a string');
  check(
    'id',
    (v) => v === null || typeof v === 'string' || typeof v === 'boolean' || Number.isInteger(v),
    'a string, number, or null',
  );
  check('params', (v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'an object');
  if (o.jsonrpc !== '2.0') throw bad('only JSONRPC 2.0 is supported');
  if (holdsNul(o.params)) {
    throw new RpcError(400, JSONRPC_CODES.invalidParams, 'params may not contain NUL characters');
  }
  return { method: o.method as string, id: o.id, params: o.params as Record<string, unknown> };
}

/**
 * Whether a NUL character is in any string (value or key) of a decoded value. PostgreSQL
 * text cannot hold one, so such a call could only fail when stored (Buildbot: a 500).
 * Iterative: nesting depth is the client's choice.
 */
function holdsNul(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\0')) return true;
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (k.includes('\0')) return true;
        stack.push(x);
      }
    }
  }
  return false;
}

/** Buildbot writes errors with Python's default separators and the keys in insertion order. */
function errorBody(
  id: unknown,
  hasId: boolean,
  code: number,
  message: string | Record<string, string>,
): string {
  const msg =
    typeof message === 'string'
      ? pyString(message)
      : `{${Object.entries(message)
          .map(([k, v]) => `${pyString(k)}: ${pyString(v)}`)
          .join(', ')}}`;
  const idPart = hasId ? `, "id": ${pyDumps(id).replace(/,/g, ', ')}` : '';
  return `{"jsonrpc": "2.0"${idPart}, "error": {"code": ${code}, "message": ${msg}}}`;
}

export function jsonRpcHandler(handlers: (match: Match) => ControlHandler | null, authz: Authorizer) {
  return async (
    req: FastifyRequest,
    reply: FastifyReply,
    match: Match | null,
    segments: string[] | null,
  ): Promise<void> => {
    let decoded: Decoded | null = null;
    try {
      decoded = decode(req);
      // As Buildbot: the call is authorized once decoded, before its endpoint is looked up;
      // a refusal is 403 with -32600.
      if (!authz.open) {
        const decision = await authz.check(req.userInfo, {
          segments,
          action: decoded.method,
          params: decoded.params,
          match,
        });
        if (!decision.allowed) throw new RpcError(403, JSONRPC_CODES.invalidRequest, decision.message);
      }
      if (!match) throw notFound();
      const handler = handlers(match);
      if (!handler) throw unsupportedAction(decoded.method);
      const params = { ...decoded.params, owner: ownerNameOf(req.userInfo) };
      const result = await handler({ match, method: decoded.method, params, owner: params.owner });
      const body = pyDumps({ id: decoded.id, jsonrpc: '2.0', result: result ?? null });
      reply.code(200).type('application/json').send(body);
    } catch (err) {
      if (err instanceof RpcError) {
        reply
          .code(err.status)
          .type('application/json')
          .send(errorBody(decoded?.id, decoded !== null, err.code, err.detail));
        return;
      }
      if (err instanceof ApiError) {
        sendError(reply, err);
        return;
      }
      throw err;
    }
  };
}
