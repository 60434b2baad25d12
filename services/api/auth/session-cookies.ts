// Every API answer carries a session: a valid TWISTED_SESSION cookie is kept, anything
// else (none, expired, forged, ended) is replaced by an anonymous one, as Buildbot does. The
// request's user is known from the start of the request (resolve, in the first hook; no
// cookie written), so rate limits, authorization and events can ask for it; attach adds the
// cookie where Buildbot sends one.
//
// A logged-in cookie counts only while its session is recorded in the session store
// (auth/session-store.ts) and its user is still the one it was started for: a logout, or a
// change of the user's password, groups or existence, ends it on every pod. A logged-in
// cookie without a session id (one a Buildbot master minted) cannot be ended, and is not
// honoured. When the store cannot be asked, the request is anonymous: a session is never
// assumed.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isAnonymous } from '../../core/auth/authz.js';
import { COOKIE, SECURE_COOKIE, type Sessions, type UserInfo } from './session.js';
import type { SessionRecord, SessionStore } from './session-store.js';

const ANONYMOUS: UserInfo = { anonymous: true };
const VALID = Symbol('flotilla.validSession');

declare module 'fastify' {
  interface FastifyRequest {
    /** The session's user_info (Buildbot's), `{anonymous: true}` without a valid session. */
    userInfo?: UserInfo;
    /** The id of the logged-in session the request came with, if any. */
    sessionId?: string;
  }
}

export interface SessionChecks {
  store: SessionStore;
  /** Whether the user a session was started for is still that user (else it ends). */
  current(record: SessionRecord): boolean;
  /** The store could not be asked (the request goes on as anonymous). */
  onError(err: Error): void;
}

/** The longest cookie value we try to verify: a session is a few hundred bytes. */
const MAX_TOKEN = 8 * 1024;

/** The value of cookie `name` in a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export class SessionCookies {
  constructor(
    private readonly sessions: () => Sessions,
    private readonly secureCookies: boolean,
    private readonly checks: SessionChecks,
  ) {}

  private get name(): string {
    return this.secureCookies ? SECURE_COOKIE : COOKIE;
  }

  /** Works out the request's user from its cookie (and the store); nothing is written. */
  async resolve(req: FastifyRequest): Promise<UserInfo> {
    if (req.userInfo) return req.userInfo;
    const token = readCookie(req.headers.cookie, this.name);
    const verified = token && token.length <= MAX_TOKEN ? this.sessions().verify(token) : null;
    let user: UserInfo | null = null;
    if (verified && isAnonymous(verified.userInfo)) user = verified.userInfo;
    else if (verified?.jti && (await this.live(verified.jti, verified.userInfo))) {
      user = verified.userInfo;
      req.sessionId = verified.jti;
    }
    (req as unknown as Record<symbol, boolean>)[VALID] = user !== null;
    req.userInfo = user ?? ANONYMOUS;
    return req.userInfo;
  }

  /**
   * The request's user is this one, known another way (an API token): no cookie is read, and
   * none is set on its answers. `sessionId` lets a long connection recheck it (live).
   */
  assume(req: FastifyRequest, user: UserInfo, sessionId: string): void {
    (req as unknown as Record<symbol, boolean>)[VALID] = true;
    req.userInfo = user;
    req.sessionId = sessionId;
  }

  /** Whether the session `id` is recorded, for this user, who is still who they were. */
  async live(id: string, user: UserInfo): Promise<boolean> {
    try {
      const record = await this.checks.store.lookup(id);
      if (record && record.user === user.username && this.checks.current(record)) return true;
      if (record) await this.checks.store.end(id);
      return false;
    } catch (err) {
      this.checks.onError(err as Error);
      return false;
    }
  }

  /** The request's user as resolve() found it (anonymous if it did not run). */
  peek(req: FastifyRequest): UserInfo {
    return req.userInfo ?? ANONYMOUS;
  }

  /** The request's user, and a fresh anonymous cookie when it brought no valid one. */
  attach(req: FastifyRequest, reply: FastifyReply): UserInfo {
    const user = this.peek(req);
    if (!(req as unknown as Record<symbol, boolean>)[VALID])
      reply.header('set-cookie', this.anonymousCookie());
    return user;
  }

  private anonymous = { second: -1, cookie: '' };

  /**
   * The anonymous cookie minted now. Its token changes only with its expiry, a whole second,
   * so it is signed once a second rather than once per answer.
   */
  private anonymousCookie(): string {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (this.anonymous.second !== second) {
      this.anonymous = { second, cookie: this.cookie(this.sessions().mint(ANONYMOUS, now)) };
    }
    return this.anonymous.cookie;
  }

  /** Starts a session for this user (a login), recorded in the store. Throws RedisUnavailable. */
  async start(reply: FastifyReply, user: UserInfo, record: SessionRecord): Promise<void> {
    const sessions = this.sessions();
    const id = this.checks.store.newId();
    await this.checks.store.start(id, record, sessions.lifetimeSeconds);
    reply.header('set-cookie', this.cookie(sessions.mint(user, Date.now(), id)));
  }

  /** Ends the request's session on every pod (a logout) and gives it an anonymous one. */
  async end(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (req.sessionId) await this.checks.store.end(req.sessionId);
    reply.header('set-cookie', this.cookie(this.sessions().mint(ANONYMOUS)));
  }

  cookie(token: string): string {
    return `${this.name}=${token}; Path=/; HttpOnly; SameSite=Lax${this.secureCookies ? '; Secure' : ''}`;
  }
}

export { ANONYMOUS };
