// Every error the API answers, in one table: its stable code, the HTTP status it is answered
// with, and how a JSON-RPC call (a POST on /api/v2) carries it. The codes core throws come
// from services/core/errors.ts; the API adds the codes of its own transport below. The
// messages are Buildbot's own text wherever Buildbot has one (oracle/NOTES.md).
//
// `rpc` is what Buildbot 3.7 does with the error in a JSON-RPC call: a number is a JSON-RPC
// error object with that code; 'bare' is {"error": {"message": ...}} (what it writes when a
// POST fails before the call is decoded); absent, the call gets the plain REST error.
import {
  type CoreErrorCode,
  type ErrorKind,
  type FlotillaError,
  InputError,
  LimitError,
  NotAllowedError,
  NotFoundError,
  NotSupportedError,
  UnavailableError,
} from '../../core/errors.js';

export const JSONRPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
} as const;

export type ApiErrorCode =
  | 'INVALID_QUERY'
  | 'INVALID_CALL'
  | 'BAD_REQUEST'
  | 'BAD_METHOD'
  | 'BAD_PREFLIGHT'
  | 'BAD_ORIGIN'
  | 'NO_CONTENT_TYPE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'BODY_TOO_LARGE'
  | 'URI_TOO_LONG'
  | 'HEADERS_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'TOO_MANY_REQUESTS'
  | 'TOO_MANY_CONNECTIONS'
  | 'CROSS_SITE'
  | 'TOO_MANY_LOGINS'
  | 'NO_LOGIN'
  | 'NO_TOKEN_LOGIN'
  | 'REMOTE_USER_REFUSED'
  | 'OAUTH2_STATE'
  | 'OAUTH2_FAILED'
  | 'LOGIN_UNAVAILABLE'
  | 'FORBIDDEN'
  | 'TOKEN_REFUSED'
  | 'TOKENS_NEED_LOGIN'
  | 'RPC_PARSE_ERROR'
  | 'RPC_INVALID_REQUEST'
  | 'INVALID_PARAMS'
  | 'UNSUPPORTED_ACTION'
  | 'HOOK_INVALID'
  | 'HOOK_SIGNATURE'
  | 'HOOK_UNAUTHORIZED'
  | 'HOOK_UNAVAILABLE'
  | 'CONTROL_UNAVAILABLE';

export type ErrorCode = CoreErrorCode | ApiErrorCode;

export interface Entry {
  status: number;
  rpc?: number | 'bare';
  /** Seconds a client is told to wait before it asks again (Retry-After), for what passes by itself. */
  retryAfter?: number;
}

// Long enough for a PostgreSQL restart or failover to be over, short enough that a UI polling
// through one loses little.
const RETRY_AFTER_SECONDS = 5;

export const CATALOGUE: Readonly<Record<ErrorCode, Entry>> = {
  // services/core/errors.ts
  NOT_FOUND: { status: 404 },
  INVALID: { status: 400, rpc: JSONRPC.invalidParams },
  NOT_CLAIMED: { status: 409 },
  DUPLICATE_LOG: { status: 409 },
  BAD_LOG_TEXT: { status: 400 },
  LOG_FINISHED: { status: 409 },
  LOG_NOT_FINISHED: { status: 409 },
  DATABASE_UNAVAILABLE: { status: 503, retryAfter: RETRY_AFTER_SECONDS },
  OBJECT_STORE_UNAVAILABLE: { status: 503, retryAfter: RETRY_AFTER_SECONDS },
  // A query string Buildbot's rules refuse, or a call it would fail with a 500.
  INVALID_QUERY: { status: 400 },
  INVALID_CALL: { status: 400 },
  // What the HTTP layer refuses before any route reads the request.
  BAD_REQUEST: { status: 400 },
  BAD_METHOD: { status: 400 },
  BAD_PREFLIGHT: { status: 400 },
  BAD_ORIGIN: { status: 400, rpc: 'bare' },
  NO_CONTENT_TYPE: { status: 415 },
  UNSUPPORTED_MEDIA_TYPE: { status: 415 },
  BODY_TOO_LARGE: { status: 413 },
  URI_TOO_LONG: { status: 414 },
  HEADERS_TOO_LARGE: { status: 431 },
  REQUEST_TIMEOUT: { status: 408 },
  TOO_MANY_REQUESTS: { status: 429 },
  TOO_MANY_CONNECTIONS: { status: 429 },
  CROSS_SITE: { status: 403 },
  // Logins.
  TOO_MANY_LOGINS: { status: 429 },
  NO_LOGIN: { status: 501 },
  NO_TOKEN_LOGIN: { status: 400 },
  // auth.remote_user: the trusted proxy sent no user header, or one the regex does not match
  // (Buildbot's RemoteUserAuth: 403 with the same words).
  REMOTE_USER_REFUSED: { status: 403 },
  // auth.oauth2: a callback whose state is not the one this browser was sent off with (a login
  // CSRF, or a stale tab), and a provider that refused the code or could not be asked.
  OAUTH2_STATE: { status: 403 },
  OAUTH2_FAILED: { status: 502 },
  LOGIN_UNAVAILABLE: { status: 503, retryAfter: RETRY_AFTER_SECONDS },
  // Authorization: Buildbot refuses a read with a plain 403, a call with -32600.
  FORBIDDEN: { status: 403, rpc: JSONRPC.invalidRequest },
  // API tokens (services/api/auth/api-tokens.ts): a Bearer header that names no live token
  // is refused, never taken as anonymous (a script would otherwise read less without being
  // told); tokens are managed from a login session only (a leaked token cannot mint more).
  TOKEN_REFUSED: { status: 401, rpc: JSONRPC.invalidRequest },
  TOKENS_NEED_LOGIN: { status: 403, rpc: JSONRPC.invalidRequest },
  // JSON-RPC calls.
  RPC_PARSE_ERROR: { status: 400, rpc: JSONRPC.parseError },
  RPC_INVALID_REQUEST: { status: 400, rpc: JSONRPC.invalidRequest },
  INVALID_PARAMS: { status: 400, rpc: JSONRPC.invalidParams },
  UNSUPPORTED_ACTION: { status: 501, rpc: JSONRPC.methodNotFound },
  // Change hooks: Buildbot answers a ValueError with 400 and its message; a signature that
  // does not check is ours to refuse with 403.
  HOOK_INVALID: { status: 400 },
  HOOK_SIGNATURE: { status: 403 },
  // The base hook's credentials (change_hooks.base.auth) missing or wrong: Buildbot's 401.
  HOOK_UNAUTHORIZED: { status: 401 },
  // Remembered deliveries cannot be checked (Redis is away): a replay is never let through
  // unchecked, and GitHub delivers again later.
  HOOK_UNAVAILABLE: { status: 503, retryAfter: RETRY_AFTER_SECONDS },
  // A stop or a worker action travels to its master over Redis; while Redis is away it cannot
  // be carried, and is refused rather than accepted and dropped.
  CONTROL_UNAVAILABLE: { status: 503, retryAfter: RETRY_AFTER_SECONDS },
};

/** For a code the table does not list (a new one not yet added here): by its kind. */
const BY_KIND: Readonly<Record<ErrorKind, Entry>> = {
  'invalid-input': { status: 400 },
  'not-found': { status: 404 },
  conflict: { status: 409 },
  forbidden: { status: 403 },
  'not-supported': { status: 501 },
  limit: { status: 429 },
  unavailable: { status: 503, retryAfter: RETRY_AFTER_SECONDS },
};

export function entryOf(err: FlotillaError): Entry {
  return (CATALOGUE as Record<string, Entry | undefined>)[err.code] ?? BY_KIND[err.kind];
}

// The API's errors, each made here with its code and message.

/** Buildbot's answer to anything that names nothing: 404, text/plain, `not found`. */
export const notFound = () => new NotFoundError<ErrorCode>('NOT_FOUND', 'not found');
export const invalidQuery = (message: string) => new InputError<ErrorCode>('INVALID_QUERY', message);
export const invalidCall = (message: string) => new InputError<ErrorCode>('INVALID_CALL', message);
export const badRequest = () => new InputError<ErrorCode>('BAD_REQUEST', 'bad request');
export const badMethod = () => new InputError<ErrorCode>('BAD_METHOD', 'invalid HTTP method');
export const badPreflight = () => new InputError<ErrorCode>('BAD_PREFLIGHT', 'invalid method');
export const badOrigin = () => new InputError<ErrorCode>('BAD_ORIGIN', 'invalid origin');
export const noContentType = () =>
  new InputError<ErrorCode>('NO_CONTENT_TYPE', 'a JSON-RPC call needs Content-Type: application/json');
export const unsupportedMediaType = (message = 'unsupported media type') =>
  new InputError<ErrorCode>('UNSUPPORTED_MEDIA_TYPE', message);
export const bodyTooLarge = () => new LimitError<ErrorCode>('BODY_TOO_LARGE', 'request body too large');
export const uriTooLong = () => new LimitError<ErrorCode>('URI_TOO_LONG', 'request URI too long');
export const headersTooLarge = () =>
  new LimitError<ErrorCode>('HEADERS_TOO_LARGE', 'request header fields too large');
export const requestTimeout = () => new LimitError<ErrorCode>('REQUEST_TIMEOUT', 'request timeout');
export const tooManyRequests = () => new LimitError<ErrorCode>('TOO_MANY_REQUESTS', 'too many requests');
/** A login or logout a page of another site set off (the browser says so: Sec-Fetch-Site). */
export const crossSite = () =>
  new NotAllowedError<ErrorCode>('CROSS_SITE', 'refused: a request from another site');
export const tooManyConnections = () =>
  new LimitError<ErrorCode>('TOO_MANY_CONNECTIONS', 'too many event connections from this client');
/** The wait is also the answer's Retry-After (services/api/auth/routes.ts). */
export const tooManyLogins = (seconds: number) =>
  new LimitError<ErrorCode>(
    'TOO_MANY_LOGINS',
    `too many failed logins: try again in ${seconds} second${seconds === 1 ? '' : 's'}`,
  );
export const noLogin = () => new NotSupportedError<ErrorCode>('NO_LOGIN', 'no login is configured');
export const remoteUserRefused = (message: string) =>
  new NotAllowedError<ErrorCode>('REMOTE_USER_REFUSED', message);
export const oauth2State = () =>
  new NotAllowedError<ErrorCode>('OAUTH2_STATE', 'the login did not start here: log in again');
export const oauth2Failed = () =>
  new UnavailableError<ErrorCode>('OAUTH2_FAILED', 'the login provider did not confirm the login: try again');
export const noTokenLogin = () =>
  new InputError<ErrorCode>('NO_TOKEN_LOGIN', 'token login is not configured');
export const loginUnavailable = () =>
  new UnavailableError<ErrorCode>('LOGIN_UNAVAILABLE', 'login is unavailable for a moment: try again later');
/** Buildbot's authz refusal, with the rule's message ("you need to have role 'x'"). */
export const forbidden = (message: string) => new NotAllowedError<ErrorCode>('FORBIDDEN', message);
/** A Bearer header that is malformed or names no live token (the reason is the message). */
export const tokenRefused = (reason: string) => new NotAllowedError<ErrorCode>('TOKEN_REFUSED', reason);
export const tokensNeedLogin = () =>
  new NotAllowedError<ErrorCode>(
    'TOKENS_NEED_LOGIN',
    'API tokens are managed after logging in, not with a token',
  );
export const rpcParseError = (message: string) => new InputError<ErrorCode>('RPC_PARSE_ERROR', message);
export const rpcInvalidRequest = (message: string) =>
  new InputError<ErrorCode>('RPC_INVALID_REQUEST', message);
/** Params the action refuses: one message, or one per parameter (Buildbot's form errors). */
export const invalidParams = (problems: string | Readonly<Record<string, string>>) =>
  typeof problems === 'string'
    ? new InputError<ErrorCode>('INVALID_PARAMS', problems)
    : new InputError<ErrorCode>('INVALID_PARAMS', JSON.stringify(problems), problems);
/** A change hook's request it cannot make changes of (Buildbot's ValueError). */
export const hookInvalid = (message: string) => new InputError<ErrorCode>('HOOK_INVALID', message);
export const hookUnavailable = () =>
  new UnavailableError<ErrorCode>(
    'HOOK_UNAVAILABLE',
    'deliveries cannot be checked for a moment: try again later',
  );
export const controlUnavailable = () =>
  new UnavailableError<ErrorCode>(
    'CONTROL_UNAVAILABLE',
    'the master cannot be reached for a moment: nothing was changed, try again later',
  );
export const hookSignature = (message: string) => new NotAllowedError<ErrorCode>('HOOK_SIGNATURE', message);
export const hookUnauthorized = () => new NotAllowedError<ErrorCode>('HOOK_UNAUTHORIZED', 'Unauthorized');
export const unsupportedAction = (method: string) =>
  new NotSupportedError<ErrorCode>('UNSUPPORTED_ACTION', `action: ${method} is not supported`);
