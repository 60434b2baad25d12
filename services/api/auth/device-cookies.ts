// Device cookies (OWASP's answer to a lockout an attacker can cause): a successful password
// login leaves a signed cookie naming the user and a random device id. A later login of that
// user that brings it is counted against that device alone, not against the user's count
// from everywhere, which anyone can fill with wrong passwords: the owner logs in from a
// device they used before whatever an attacker does, and an attacker who has no such cookie
// is slowed down by the per-user count. (login-throttle.ts; docs/security.md)
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readCookie } from './session-cookies.js';

export const DEVICE_COOKIE = 'FLOTILLA_DEVICE';
const LIFETIME_S = 180 * 24 * 3600;
const MAX_LENGTH = 1024;

export class DeviceCookies {
  constructor(
    /** The signing key (derived from the session secret, which is read on first use). */
    private readonly key: () => Buffer,
    private readonly secure: boolean,
  ) {}

  private sign(data: string): Buffer {
    return createHmac('sha256', this.key()).update(data).digest();
  }

  /** The device id of the request's cookie, when it is valid and was given to `username`. */
  deviceOf(req: FastifyRequest, username: string, now = Date.now()): string | null {
    const token = readCookie(req.headers.cookie, DEVICE_COOKIE);
    if (!token || token.length > MAX_LENGTH) return null;
    const dot = token.indexOf('.');
    if (dot < 0) return null;
    const data = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = this.sign(data);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      const claims = JSON.parse(Buffer.from(data, 'base64url').toString('utf8'));
      if (claims.u !== username || typeof claims.d !== 'string' || typeof claims.exp !== 'number')
        return null;
      return claims.exp * 1000 > now ? claims.d : null;
    } catch {
      return null;
    }
  }

  /** Gives the client a device cookie for `username` (a new device id unless it had one). */
  set(reply: FastifyReply, username: string, device: string | null, now = Date.now()): void {
    const data = Buffer.from(
      JSON.stringify({
        u: username,
        d: device ?? randomBytes(16).toString('base64url'),
        exp: Math.floor(now / 1000) + LIFETIME_S,
      }),
    ).toString('base64url');
    const token = `${data}.${this.sign(data).toString('base64url')}`;
    reply.header(
      'set-cookie',
      `${DEVICE_COOKIE}=${token}; Path=/auth; Max-Age=${LIFETIME_S}; HttpOnly; SameSite=Strict${this.secure ? '; Secure' : ''}`,
    );
  }
}
