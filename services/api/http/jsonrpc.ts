// POST on /api/v2/<path>: a JSON-RPC 2.0 call of a control action, decoded and answered
// exactly as Buildbot does (codes, messages, which status goes with which error).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ownerNameOf } from '../../core/auth/authz.js';
import { tokenIdOf } from '../auth/api-tokens.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { ControlHandler } from '../control/action.js';
import { type Auditor, auditArgs } from '../control/audit.js';
import {
  entryOf,
  forbidden,
  invalidParams,
  noContentType,
  notFound,
  rpcInvalidRequest,
  rpcParseError,
  unsupportedAction,
} from '../errors/catalogue.js';
import { knownError } from '../errors/reply.js';
import type { Match } from '../registry/paths.js';
import { pyDumps } from '../reply/pyjson.js';

export interface Decoded {
  method: string;
  id: unknown;
  params: Record<string, unknown>;
}

/** A POST body as a JSON-RPC 2.0 call, refused as Buildbot refuses a malformed one. */
export function decodeCall(req: FastifyRequest): Decoded {
  const ctype = req.headers['content-type'];
  // Buildbot fails with a 500 here (a TypeError); 415 says what is missing.
  if (ctype === undefined) throw noContentType();
  if (ctype.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
    throw rpcInvalidRequest('Invalid content-type (use application/json)');
  }
  const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch (err) {
    throw rpcParseError(`JSON parse error: ${(err as Error).message}`);
  }
  if (Array.isArray(data)) throw rpcInvalidRequest('JSONRPC batch requests are not supported');
  if (typeof data !== 'object' || data === null)
    throw rpcInvalidRequest('JSONRPC root object must be an object');
  const o = data as Record<string, unknown>;
  const check = (name: string, ok: (v: unknown) => boolean, what: string) => {
    if (!(name in o)) throw rpcInvalidRequest(`missing key '${name}'`);
    if (!ok(o[name])) throw rpcInvalidRequest(`'${name}' must be ${what}`);
  };
  check('jsonrpc', (v) => typeof v === 'string', 'a string');
  check('method', (v) => typeof v === 'string', 'a string');
  check(
    'id',
    (v) => v === null || typeof v === 'string' || typeof v === 'boolean' || Number.isInteger(v),
    'a string, number, or null',
  );
  check('params', (v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'an object');
  if (o.jsonrpc !== '2.0') throw rpcInvalidRequest('only JSONRPC 2.0 is supported');
  if (holdsNul(o.params)) {
    throw invalidParams('params may not contain NUL characters');
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

export function jsonRpcHandler(
  handlers: (match: Match) => ControlHandler | null,
  authz: Authorizer,
  auditor: Auditor,
) {
  return async (
    req: FastifyRequest,
    reply: FastifyReply,
    match: Match | null,
    segments: string[] | null,
  ): Promise<void> => {
    // Every call is audited (../control/audit.ts), whatever its answer: its error is
    // recorded, then thrown on to the app's error handler.
    let decoded: Decoded | null = null;
    const audit = (outcome: string, status: number) =>
      auditor.record({
        at: Math.floor(Date.now() / 1000),
        actor: ownerNameOf(req.userInfo),
        address: req.ip ?? null,
        method: decoded?.method ?? null,
        path: segments ? `/${segments.join('/')}` : (req.url.split('?')[0] ?? ''),
        args: decoded ? auditArgs(decoded.params) : {},
        outcome,
        status,
        tokenid: tokenIdOf(req.userInfo),
      });
    let result: unknown;
    try {
      decoded = decodeCall(req);
      result = await call(req, decoded, match, segments);
    } catch (err) {
      const known = knownError(err);
      await audit(known?.code ?? 'INTERNAL', known ? entryOf(known).status : 500);
      throw err;
    }
    await audit('success', 200);
    const body = pyDumps({ id: decoded.id, jsonrpc: '2.0', result: result ?? null });
    reply.code(200).type('application/json').send(body);
  };

  async function call(
    req: FastifyRequest,
    decoded: Decoded,
    match: Match | null,
    segments: string[] | null,
  ): Promise<unknown> {
    // Errors are thrown, and answered by the app's error handler (../errors/reply.ts), with
    // the call's id once it is known.
    req.rpcCall = { id: decoded.id };
    // As Buildbot: the call is authorized once decoded, before its endpoint is looked up;
    // a refusal is 403 with -32600.
    if (!authz.open) {
      const decision = await authz.check(req.userInfo, {
        segments,
        action: decoded.method,
        params: decoded.params,
        match,
      });
      if (!decision.allowed) throw forbidden(decision.message);
    }
    if (!match) throw notFound();
    const handler = handlers(match);
    if (!handler) throw unsupportedAction(decoded.method);
    const params = { ...decoded.params, owner: ownerNameOf(req.userInfo) };
    return handler({ match, method: decoded.method, params, owner: params.owner });
  }
}
