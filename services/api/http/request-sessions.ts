// Who sends each request: before any route runs, a URL past the limit is refused (414) and the
// session cookie is read, so that every request carries its user (req.userInfo). The session
// secret lives in the database, which may come up after the pod: it is read on first use.
// A request with `Authorization: Bearer` is an API token's (../auth/api-tokens.ts): its user
// is the token's, and a token that does not count is refused (401), never made anonymous.
// /auth/* is left to its routes: /auth/login takes an OIDC access token in that header.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { fingerprintOf } from '../../core/auth/users.js';
import type { AuthConfig } from '../../core/config/master-config.js';
import type { ConnectionPool } from '../../core/db/pool.js';
import { PLATFORM_PATHS } from '../../core/http/platform-paths.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { ApiTokens, TOKEN_ID } from '../auth/api-tokens.js';
import { DeviceCookies } from '../auth/device-cookies.js';
import type { UserInfo } from '../auth/session.js';
import { loadSessionSecret, Sessions } from '../auth/session.js';
import { SessionCookies } from '../auth/session-cookies.js';
import { SessionStore } from '../auth/session-store.js';
import { uriTooLong } from '../errors/catalogue.js';
import { knownError, sendError } from '../errors/reply.js';
import type { Logins } from './logins.js';

// A store that cannot be asked is said once per this long, not once per request.
const STORE_WARNING_MS = 10_000;
// The session id of a request made with a token: `token:<id>` (a store's ids have no colon).
const TOKEN_SESSION = 'token:';
const CHALLENGE = 'Bearer realm="flotilla", error="invalid_token"';

export interface RequestSessions {
  cookies: SessionCookies;
  devices: DeviceCookies;
  /** The public URL is https: cookies are Secure. */
  secure: boolean;
  /** Whether a request's session (a login's, or a token's) still counts: events recheck it. */
  alive(sessionId: string, user: UserInfo): Promise<boolean>;
}

export function requestSessions(
  app: FastifyInstance,
  opts: {
    db: ConnectionPool;
    redis: Redis;
    log: Logger;
    publicUrl: string;
    sessionSecret: string | undefined;
    auth: AuthConfig | undefined;
    users: Logins['users'];
    keyPrefix: string;
    urlBytes: number;
  },
): RequestSessions {
  let sessions: Sessions | null = null;
  const secure = new URL(opts.publicUrl).protocol === 'https:';
  let storeWarnedAt = 0;
  const cookies = new SessionCookies(() => sessions!, secure, {
    store: new SessionStore(opts.redis, opts.keyPrefix),
    // A password login's session lasts while its user's entry is the same (users files are
    // read again when they change, within UserDirectory's recheck interval).
    current: (record) => {
      if (record.via !== 'password') return true;
      const entry = opts.users?.find(record.user);
      return entry !== undefined && fingerprintOf(entry) === record.fingerprint;
    },
    onError: (err) => {
      if (Date.now() - storeWarnedAt < STORE_WARNING_MS) return;
      storeWarnedAt = Date.now();
      opts.log.warn({ err: err.message }, 'sessions not checked (redis unavailable): requests are anonymous');
    },
  });
  const tokens = new ApiTokens(opts.db, opts.users);
  // Callback style: once the secret is known, only a logged-in cookie waits (for the store).
  app.addHook('onRequest', (req, reply, done) => {
    // A websocket upgrade refused before @fastify/websocket's own hook saw it (here: 414, a
    // bad token's 401; the rate limit's 429 after) is answered on a socket Node's server
    // has let go of, and which that plugin closes only for requests it saw: left open, the
    // server spun on it and answered nothing more (seen in test/api/auth/api-tokens.test.ts).
    // The answer closes it. An upgrade that succeeds never finishes this response.
    if (req.headers.upgrade !== undefined) reply.raw.once('finish', () => req.raw.socket.destroy());
    // Longer URLs than this are refused before anything reads them (answered: no done()).
    if ((req.raw.url ?? '').length > opts.urlBytes) {
      sendError(req, reply, uriTooLong());
      return;
    }
    // The probes must answer while PostgreSQL is away: they need no session.
    if (PLATFORM_PATHS.has(req.url)) return done();
    const fromCookie = () =>
      cookies.resolve(req).then(
        () => done(),
        (err: Error) => done(err),
      );
    const resolve = () => {
      const header = req.headers.authorization;
      if (header === undefined || req.url.startsWith('/auth/')) return void fromCookie();
      tokens.resolve(header).then(
        (user) => {
          if (user === null) return void fromCookie();
          cookies.assume(req, user, `${TOKEN_SESSION}${user[TOKEN_ID]}`);
          done();
        },
        (err: unknown) => {
          if (knownError(err)?.code === 'TOKEN_REFUSED') reply.header('www-authenticate', CHALLENGE);
          sendError(req, reply, err);
        },
      );
    };
    if (sessions) return void resolve();
    loadSessionSecret(opts.db, opts.sessionSecret).then((secret) => {
      sessions ??= new Sessions(secret, opts.auth?.session_expiry_seconds);
      resolve();
    }, done);
  });
  const devices = new DeviceCookies(() => sessions!.derivedKey('device-cookie'), secure);
  const alive = (sessionId: string, user: UserInfo) =>
    sessionId.startsWith(TOKEN_SESSION)
      ? tokens.alive(Number(sessionId.slice(TOKEN_SESSION.length)))
      : cookies.live(sessionId, user);
  return { cookies, devices, secure, alive };
}
