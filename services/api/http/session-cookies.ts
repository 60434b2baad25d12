// Every API answer carries a session: a valid TWISTED_SESSION cookie is kept, anything
// else (none, expired, forged) is replaced by an anonymous one, as Buildbot does.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { COOKIE, SECURE_COOKIE, type Sessions, type UserInfo } from './session.js';

const ANONYMOUS: UserInfo = { anonymous: true };

declare module 'fastify' {
  interface FastifyRequest {
    userInfo?: UserInfo;
  }
}

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

  /** The request's user, and a fresh anonymous cookie when it brought no valid one. */
  attach(req: FastifyRequest, reply: FastifyReply): UserInfo {
    const token = readCookie(req.headers.cookie, this.name);
    const user = token ? this.sessions().verify(token) : null;
    if (user) {
      req.userInfo = user;
      return user;
    }
    req.userInfo = ANONYMOUS;
    reply.header('set-cookie', this.cookie(this.sessions().mint(ANONYMOUS)));
    return ANONYMOUS;
  }

  cookie(token: string): string {
    return `${this.name}=${token}; Path=/; HttpOnly; SameSite=Lax${this.secureCookies ? '; Secure' : ''}`;
  }
}
