// /api/v2/tokens: a logged-in user's own API tokens (./api-tokens.ts), Flotilla's and not
// Buildbot's, in the REST API's manner: GET lists them ({"tokens": [...], "meta": {...}}),
// and JSON-RPC calls make and revoke them:
//   POST /api/v2/tokens     {"method": "create", "params": {"name", "expires_at", "roles"?}}
//   POST /api/v2/tokens/<id> {"method": "revoke", "params": {}}
// The new token's text is in create's answer, once; it is never shown again. Only a login
// session manages tokens (a token cannot make or list tokens: a leaked one cannot outlive
// itself), and only its own user's. Creating and revoking, answered or refused, are rows of
// the audit log like any control action.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isAnonymous, ownerNameOf, userRoles } from '../../core/auth/authz.js';
import type { UserDirectory } from '../../core/auth/users.js';
import { apiTokensOf, insertApiToken, revokeApiToken } from '../../core/data/api-tokens.js';
import type { Queryable } from '../../core/db/pool.js';
import { newSecret, TOKEN_ID, tokenIdOf, tokenText } from '../auth/api-tokens.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { UserInfo } from '../auth/session.js';
import type { Auditor } from '../control/audit.js';
import { auditArgs } from '../control/audit.js';
import { entryOf, invalidParams, notFound, tokensNeedLogin, unsupportedAction } from '../errors/catalogue.js';
import { knownError } from '../errors/reply.js';
import { pyDumps } from '../reply/pyjson.js';
import { decodeCall } from './jsonrpc.js';

/** The first segment of the tokens' paths. */
export const TOKENS_ROOT = 'tokens';

// A year and a day: long enough for a yearly rotation, short enough that a forgotten token
// dies by itself. A script that needs longer gets a new token.
const MAX_LIFETIME_S = 366 * 86_400;
// Live tokens per user: enough for every script a person runs; a bound on the table.
const MAX_LIVE = 100;
const NAME_MAX = 100;
const CONTROL_CHARS = /\p{Cc}/u;
const PARAMS = new Set(['name', 'expires_at', 'roles']);

export interface TokenRequestDeps {
  /** The primary: a revocation is read by the very next request, on any pod. */
  db: Queryable;
  authz: Authorizer;
  users: UserDirectory | null;
  auditor: Auditor;
}

interface Created {
  tokenid: number;
  name: string;
  token: string;
  roles: string[];
  expires_at: number;
}

export function tokenRequests(deps: TokenRequestDeps) {
  /** The session's user, who may manage tokens; else TOKENS_NEED_LOGIN. */
  function manager(req: FastifyRequest): UserInfo {
    const user = req.userInfo;
    if (!user || isAnonymous(user) || user[TOKEN_ID] !== undefined) throw tokensNeedLogin();
    return user;
  }

  function checkCreate(user: UserInfo, params: Record<string, unknown>, now: number) {
    for (const k of Object.keys(params)) if (!PARAMS.has(k)) throw invalidParams(`unknown parameter '${k}'`);
    const { name, expires_at: expiresAt, roles } = params;
    if (typeof name !== 'string' || name.trim() === '' || name.length > NAME_MAX || CONTROL_CHARS.test(name))
      throw invalidParams(`name must be 1 to ${NAME_MAX} printable characters`);
    if (typeof expiresAt !== 'number' || !Number.isInteger(expiresAt) || expiresAt <= now)
      throw invalidParams('expires_at must be a time in the future, in seconds since the epoch');
    if (expiresAt > now + MAX_LIFETIME_S)
      throw invalidParams(`expires_at may be at most ${MAX_LIFETIME_S / 86_400} days ahead`);
    // The user's roles, and those owning a build or request gives them (owner matchers): a
    // token may stop its user's own builds where the rules let owners.
    const matchers = deps.authz.policy.roleMatchers;
    const own = userRoles(user, matchers);
    for (const m of matchers) if (m.owner === true && m.role !== undefined) own.add(m.role);
    if (roles !== undefined && !(Array.isArray(roles) && roles.every((r) => typeof r === 'string')))
      throw invalidParams('roles must be a list of role names');
    const chosen = roles === undefined ? [...own] : [...new Set(roles as string[])];
    const beyond = chosen.filter((r) => !own.has(r));
    if (beyond.length)
      throw invalidParams(`roles beyond your own: ${beyond.map((r) => `'${r}'`).join(', ')}`);
    return { name: name.trim(), expiresAt, roles: chosen.sort() };
  }

  async function create(req: FastifyRequest, params: Record<string, unknown>): Promise<Created> {
    const user = manager(req);
    const now = Math.floor(Date.now() / 1000);
    const { name, expiresAt, roles } = checkCreate(user, params, now);
    const { secret, hash } = newSecret();
    const owner = String(user.username);
    let id: number | null;
    try {
      id = await insertApiToken(
        deps.db,
        {
          owner,
          name,
          secret_hash: hash,
          roles,
          user_info: user,
          // A password user's token follows their entry (./api-tokens.ts); any other login's
          // acts as the user was now.
          via: deps.users?.find(owner) ? 'password' : 'token',
          created_at: now,
          expires_at: expiresAt,
        },
        MAX_LIVE,
      );
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw invalidParams(`you already have a token named ${JSON.stringify(name)}`);
      throw err;
    }
    if (id === null) throw invalidParams(`at most ${MAX_LIVE} live tokens per user: revoke one first`);
    return { tokenid: id, name, token: tokenText(id, secret), roles, expires_at: expiresAt };
  }

  async function revoke(req: FastifyRequest, id: string): Promise<null> {
    const user = manager(req);
    const n = /^[1-9][0-9]{0,15}$/.test(id) ? Number(id) : null;
    const now = Math.floor(Date.now() / 1000);
    if (n === null || !(await revokeApiToken(deps.db, String(user.username), n, now))) throw notFound();
    return null;
  }

  async function list(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const user = manager(req);
    const rows = await apiTokensOf(deps.db, String(user.username));
    const tokens = rows.map(({ id, ...r }) => ({ tokenid: id, ...r }));
    reply
      .code(200)
      .header('cache-control', 'no-store')
      .type('application/json')
      .send(pyDumps({ tokens, meta: { total: tokens.length } }));
  }

  async function call(req: FastifyRequest, reply: FastifyReply, segments: readonly string[]): Promise<void> {
    let method: string | null = null;
    let params: Record<string, unknown> = {};
    const path = `/${segments.join('/')}`;
    const audit = (outcome: string, status: number) =>
      deps.auditor.record({
        at: Math.floor(Date.now() / 1000),
        actor: ownerNameOf(req.userInfo),
        address: req.ip ?? null,
        method,
        path,
        args: auditArgs(params),
        outcome,
        status,
        tokenid: tokenIdOf(req.userInfo),
      });
    let result: unknown;
    try {
      const decoded = decodeCall(req);
      req.rpcCall = { id: decoded.id };
      ({ method, params } = decoded);
      if (segments.length === 1 && method === 'create') result = await create(req, params);
      else if (segments.length === 2 && method === 'revoke') result = await revoke(req, segments[1]!);
      else if (segments.length > 2) throw notFound();
      else throw unsupportedAction(method);
    } catch (err) {
      const known = knownError(err);
      await audit(known?.code ?? 'INTERNAL', known ? entryOf(known).status : 500);
      throw err;
    }
    await audit('success', 200);
    reply
      .code(200)
      .header('cache-control', 'no-store')
      .type('application/json')
      .send(pyDumps({ id: req.rpcCall.id, jsonrpc: '2.0', result }));
  }

  /** Answers a request below /api/v2/tokens (`segments` starts with TOKENS_ROOT). */
  return async (req: FastifyRequest, reply: FastifyReply, segments: readonly string[]): Promise<void> => {
    if (req.method === 'POST') return call(req, reply, segments);
    if ((req.method === 'GET' || req.method === 'HEAD') && segments.length === 1) return list(req, reply);
    throw notFound();
  };
}
