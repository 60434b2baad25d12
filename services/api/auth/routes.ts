// /auth/login, /auth/logout and /config, as Buildbot serves them.
//
// - GET /auth/login with HTTP Basic credentials (Buildbot's UserPasswordAuth): success stores
//   {username, email, full_name, groups} in the session and redirects (302) to
//   PUBLIC_URL#<redirect, default />; bad or missing credentials get 401 with
//   `WWW-Authenticate: basic realm="buildbot"`, except to a page's own script: a request
//   marked `X-Requested-With: XMLHttpRequest` (what jQuery and AngularJS's $http sent, and
//   what Spring Security honours the same way) gets its 401 without the challenge, since a
//   browser answers a challenge to a fetch with its own credentials prompt, over the web
//   UI's form, which then waits for good. Every other client still gets the challenge.
// - GET /auth/login?token=<access token> (OAuth 2.0 / OIDC), or with `Authorization: Bearer
//   <access token>`: a verified token's claims become the session's user; redirect to
//   PUBLIC_URL (or PUBLIC_URL#<redirect>); a bad token 401.
// - GET /auth/login with auth.oauth2 (oauth2/index.ts): to the provider's consent page, and
//   back with ?code=&state= (the state, not Sec-Fetch-Site, guards that callback); with
//   auth.remote_user (remote-user.ts): the user a trusted proxy names; /config logs that user
//   in too, as Buildbot's RemoteUserAuth does.
// - GET /auth/logout: the session ends on every pod (session-store.ts), the cookie becomes an
//   anonymous one, redirect to PUBLIC_URL#<redirect or />.
// A login records its session (every pod honours the cookie while it is recorded); without
// Redis there is no login (503), and no logout either.
// - GET /config: the web UI's settings, with `user` (the session's user info) and `auth`, and
//   ours: the user's `roles` and the `permissions` the web UI shows buttons by.
// Every attempt counts against the login throttle; no answer says which part was wrong.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UiConfig } from '../../core/api-shapes.js';
import { verifyPassword } from '../../core/auth/password.js';
import { fingerprintOf, type UserDirectory, userInfoOf } from '../../core/auth/users.js';
import type { Logger } from '../../core/telemetry/logger.js';
import {
  crossSite,
  loginUnavailable,
  noLogin,
  noTokenLogin,
  remoteUserRefused,
  tooManyLogins,
} from '../errors/catalogue.js';
import type { Authorizer } from './authorizer.js';
import { addressKey } from './client.js';
import { RedisUnavailable } from './counters.js';
import type { DeviceCookies } from './device-cookies.js';
import type { Attempt, LoginThrottle, Verdict } from './login-throttle.js';
import type { OAuth2Login } from './oauth2/index.js';
import type { TokenVerifier } from './oidc.js';
import type { RemoteUserLogin } from './remote-user.js';
import type { Versions } from './runtime-versions.js';
import type { SessionCookies } from './session-cookies.js';
import type { SessionRecord } from './session-store.js';

export interface AuthRoutesDeps {
  publicUrl: string;
  title: string;
  cookies: SessionCookies;
  users: UserDirectory | null;
  tokens: TokenVerifier | null;
  /** auth.remote_user: the user a trusted proxy names in a header. */
  remoteUser: RemoteUserLogin | null;
  /** auth.oauth2: GitHub, GitLab or Google (oauth2/). */
  oauth2: OAuth2Login | null;
  throttle: LoginThrottle;
  devices: DeviceCookies;
  log: Logger;
  /** For /config's roles and permissions: what the web UI shows and offers the user. */
  authz: Authorizer;
  /** /config's versions (runtime-versions.ts). */
  versions: Versions;
}

const MAX_CREDENTIALS = 4096;
const MAX_REDIRECT = 2048;

/** What may follow `#` in a Location header: Buildbot drops everything from a CR or LF on. */
export function safeFragment(s: string): string {
  const cut = s.replace(/[\r\n][\s\S]*$/, '').slice(0, MAX_REDIRECT);
  let out = '';
  for (const ch of cut) {
    const c = ch.codePointAt(0)!;
    const lone = c >= 0xd800 && c <= 0xdfff;
    out += c > 0x20 && c < 0x7f && ch !== '#' ? ch : encodeURIComponent(lone ? '\uFFFD' : ch);
  }
  return out;
}

function queryParams(req: FastifyRequest): URLSearchParams {
  const url = req.raw.url ?? '';
  const q = url.indexOf('?');
  try {
    return new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  } catch {
    return new URLSearchParams();
  }
}

/** HTTP Basic credentials; null when the header is absent or not Basic. */
export function basicCredentials(
  header: string | undefined,
): { username: string; password: string } | 'malformed' | null {
  if (!header) return null;
  const m = /^\s*basic\s+(\S*)\s*$/i.exec(header);
  if (!m) return null;
  if (m[1]!.length > MAX_CREDENTIALS || !/^[A-Za-z0-9+/]*={0,2}$/.test(m[1]!)) return 'malformed';
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** A page's script asking (see the header): its 401 carries no challenge. */
function fromScript(req: FastifyRequest): boolean {
  return String(req.headers['x-requested-with'] ?? '').toLowerCase() === 'xmlhttprequest';
}

function unauthorized(reply: FastifyReply, challenge: string): FastifyReply {
  if (!fromScript(reply.request)) reply.header('www-authenticate', challenge);
  return reply
    .code(401)
    .header('cache-control', 'no-store')
    .type('text/plain; charset=utf-8')
    .send('Unauthorized');
}

function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(302).header('location', location).header('cache-control', 'no-store').send();
}

const BASIC_CHALLENGE = 'basic realm="buildbot"';
const BEARER_CHALLENGE = 'Bearer realm="buildbot"';

export function authRoutes(app: FastifyInstance, deps: AuthRoutesDeps): void {
  const home = deps.publicUrl;
  const fragment = (req: FastifyRequest) => safeFragment(queryParams(req).get('redirect') ?? '/');

  async function throttled(attempt: Attempt): Promise<Verdict> {
    try {
      return await deps.throttle.begin(attempt);
    } catch (err) {
      if (err instanceof RedisUnavailable) throw loginUnavailable();
      throw err;
    }
  }
  async function succeeded(attempt: Attempt): Promise<void> {
    try {
      await deps.throttle.succeeded(attempt);
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'login throttle not updated');
    }
  }
  const refuse = (reply: FastifyReply, v: Verdict & { ok: false }) => {
    reply.header('retry-after', String(v.retryAfterSeconds));
    throw tooManyLogins(v.retryAfterSeconds);
  };

  /** A login's session, recorded on every pod; no session without the store (503). */
  async function startSession(reply: FastifyReply, user: Record<string, unknown>, record: SessionRecord) {
    try {
      await deps.cookies.start(reply, user, record);
    } catch (err) {
      if (err instanceof RedisUnavailable) throw loginUnavailable();
      throw err;
    }
  }

  async function tokenLogin(req: FastifyRequest, reply: FastifyReply, token: string) {
    if (!deps.tokens) throw noTokenLogin();
    const attempt = { client: addressKey(req.ip), username: null, device: null };
    const v = await throttled(attempt);
    if (!v.ok) return refuse(reply, v);
    let user: Record<string, unknown>;
    try {
      user = await deps.tokens.verify(token);
    } catch (err) {
      req.log.info({ reason: (err as Error).message }, 'token login refused');
      return unauthorized(reply, `${BEARER_CHALLENGE}, error="invalid_token"`);
    }
    await succeeded(attempt);
    await startSession(reply, user, { user: String(user.username), via: 'token', fingerprint: null });
    const r = queryParams(req).get('redirect');
    return redirect(reply, r === null ? home : `${home}#${safeFragment(r)}`);
  }

  async function passwordLogin(req: FastifyRequest, reply: FastifyReply) {
    if (!deps.users) return unauthorized(reply, BEARER_CHALLENGE);
    const creds = basicCredentials(req.headers.authorization);
    if (creds === null) return unauthorized(reply, BASIC_CHALLENGE);
    const username = creds === 'malformed' ? null : creds.username;
    const device = username === null ? null : deps.devices.deviceOf(req, username);
    const attempt = { client: addressKey(req.ip), username, device };
    const v = await throttled(attempt);
    if (!v.ok) return refuse(reply, v);
    if (creds === 'malformed') return unauthorized(reply, BASIC_CHALLENGE);
    const entry = deps.users.find(creds.username);
    const ok = await verifyPassword(creds.password, entry?.password_hash ?? null, deps.users.sampleHash());
    if (!ok || entry === undefined) {
      req.log.info({ username: creds.username.slice(0, 64) }, 'password login refused');
      return unauthorized(reply, BASIC_CHALLENGE);
    }
    await succeeded(attempt);
    deps.devices.set(reply, entry.username, device);
    await startSession(
      reply,
      { ...userInfoOf(entry) },
      {
        user: entry.username,
        via: 'password',
        fingerprint: fingerprintOf(entry),
      },
    );
    return redirect(reply, `${home}#${fragment(req)}`);
  }

  // Buildbot's clients log in and out with GETs, which any page can make a browser send: a
  // foreign page could log its visitor in as the attacker (?token=, a login CSRF) or out.
  // Browsers say where a request comes from; one from another site is refused.
  const sameSite = (req: FastifyRequest) => {
    if (req.headers['sec-fetch-site'] === 'cross-site') throw crossSite();
  };

  /** The proxy's user, its session started unless the request's session is already theirs. */
  async function remoteLogin(
    req: FastifyRequest,
    reply: FastifyReply,
    current: Record<string, unknown> | null,
  ) {
    const user = deps.remoteUser?.userOf(req) ?? null;
    if (user === null || current?.username === user.username) return user;
    await startSession(reply, user, { user: String(user.username), via: 'remote-user', fingerprint: null });
    return user;
  }

  // Errors are thrown, and answered by the app's error handler (../errors/reply.ts).
  app.get('/auth/login', async (req, reply) => {
    const query = queryParams(req);
    const code = query.get('code');
    if (deps.oauth2 && code !== null) {
      // The provider's callback, a navigation from its site: the state, not Sec-Fetch-Site,
      // proves that this browser started the login.
      const done = await deps.oauth2.finish(req, reply, code, query.get('state') ?? '');
      await startSession(reply, done.user, {
        user: String(done.user.username),
        via: 'oauth2',
        fingerprint: null,
      });
      return redirect(reply, done.redirect === null ? home : `${home}#${safeFragment(done.redirect)}`);
    }
    sameSite(req);
    if (deps.oauth2 && !req.headers.authorization && query.get('token') === null)
      return deps.oauth2.begin(reply, query.get('redirect'));
    if (deps.remoteUser) {
      if (await remoteLogin(req, reply, null)) return redirect(reply, `${home}#${fragment(req)}`);
      if (!deps.users && !deps.tokens)
        throw remoteUserRefused('the login header is believed only from the trusted proxies');
    }
    if (!deps.users && !deps.tokens) throw noLogin();
    // ?token= as Buildbot's OAuth2 login takes it; or a Bearer header, which no proxy logs.
    const bearer = /^\s*bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    const token = queryParams(req).get('token') ?? (deps.tokens ? (bearer?.[1] ?? null) : null);
    return token !== null ? tokenLogin(req, reply, token) : passwordLogin(req, reply);
  });

  app.get('/auth/logout', async (req, reply) => {
    sameSite(req);
    try {
      await deps.cookies.end(req, reply);
    } catch (err) {
      // The cookie is replaced all the same; the session itself lives on until it expires.
      if (!(err instanceof RedisUnavailable)) throw err;
      throw loginUnavailable();
    }
    return redirect(reply, `${home}#${fragment(req)}`);
  });

  // With both users and a token provider, Buildbot's dict names only the first; ours also
  // says that a token works, so the web UI offers both forms.
  const authDict = deps.oauth2
    ? deps.oauth2.configDict
    : deps.users
      ? deps.tokens
        ? { name: 'UserPasswordAuth', token_login: true }
        : { name: 'UserPasswordAuth' }
      : deps.tokens
        ? { name: 'OIDC', oauth2: true, fa_icon: 'fa-sign-in', autologin: false }
        : deps.remoteUser
          ? { name: 'RemoteUserAuth' }
          : { name: 'NoAuth' };
  app.get('/config', async (req, reply) => {
    let user = deps.cookies.attach(req, reply);
    // Buildbot's RemoteUserAuth logs the proxy's user in as the web UI loads its settings (the
    // session's cookie then follows the anonymous one attach may have set: the last one wins).
    if (deps.remoteUser?.fromProxy(req)) {
      try {
        user = (await remoteLogin(req, reply, user)) ?? user;
      } catch (err) {
        req.log.warn({ reason: (err as Error).message }, 'remote user not logged in');
      }
    }
    const body: UiConfig = {
      auth: authDict,
      authz: {},
      avatar_methods: [],
      buildbotURL: home,
      multiMaster: true,
      title: deps.title,
      titleURL: home,
      user,
      roles: deps.authz.roles(user),
      permissions: deps.authz.permissions(user),
      versions: await deps.versions(),
    };
    return reply
      .type('application/json')
      .header('cache-control', 'no-store')
      .header('vary', 'Cookie')
      .send(JSON.stringify(body));
  });
}
