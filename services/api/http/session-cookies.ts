// Every API answer carries a session: a valid TWISTED_SESSION cookie is kept, anything
// else (none, expired, forged) is replaced by an anonymous one, as Buildbot does. The
// request's user is known from the start of the request (peek, no cookie written), so rate
// limits, authorization and events can ask for it; attach adds the cookie where Buildbot
// sends one.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { COOKIE, SECURE_COOKIE, type Sessions, type UserInfo } from './session.js';

const ANONYMOUS: UserInfo = { anonymous: true };
const VALID = Symbol('flotilla.validSession');

declare module 'fastify' {
  interface FastifyRequest {
    /** The session's user_info (Buildbot's), `{anonymous: true}` without a valid session. */
    userInfo?: UserInfo;
  }
}

/** The longest cookie value we try to verify: a session is a few hundred bytes. */
const MAX_TOKEN = 8 * 1024;

function readCookie(header: string | undefined, name: string): string | undefined {
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
  ) {}

  private get name(): string {
    return this.secureCookies ? SECURE_COOKIE : COOKIE;
  }

  /** The request's user, from its cookie; nothing is written. */
  peek(req: FastifyRequest): UserInfo {
    if (req.userInfo) return req.userInfo;
    const token = readCookie(req.headers.cookie, this.name);
    const user = token && token.length <= MAX_TOKEN ? this.sessions().verify(token) : null;
    (req as unknown as Record<symbol, boolean>)[VALID] = user !== null;
    req.userInfo = user ?? ANONYMOUS;
    return req.userInfo;
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

  /** Start a session for this user (a login), or an anonymous one (a logout). */
  set(reply: FastifyReply, user: UserInfo): void {
    reply.header('set-cookie', this.cookie(this.sessions().mint(user)));
  }

  cookie(token: string): string {
    return `${this.name}=${token}; Path=/; HttpOnly; SameSite=Lax${this.secureCookies ? '; Secure' : ''}`;
  }
}

export { ANONYMOUS };
