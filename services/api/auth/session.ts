// Buildbot's session cookie: TWISTED_SESSION holds an HS256 JWT of {user_info, exp}, signed
// with the hex secret a Buildbot master keeps in object_state (object `www`). Any API pod
// (and a Buildbot master on the same database) mints and accepts the same cookies.
// A login's cookie also carries `iat` and `jti`, the session's id, which the session store
// (auth/session-store.ts) must still hold for the cookie to count: that is how a session
// ends on logout, or when its user changes. Buildbot's PyJWT ignores `jti`, so a Buildbot
// master on the same database accepts the cookie until it expires.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { getState, setState, stateObjectId } from '../../core/data/object-state.js';
import type { Queryable } from '../../core/db/pool.js';

export const COOKIE = 'TWISTED_SESSION';
export const SECURE_COOKIE = 'TWISTED_SECURE_SESSION';
const WWW_OBJECT = { name: 'www', class_name: 'buildbot.www.service.WWWService' };
// Buildbot's is a week; a day here, for a cookie that a Buildbot master cannot revoke.
const DEFAULT_EXPIRY_S = 24 * 3600;

export type UserInfo = Record<string, unknown>;

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/**
 * The secret, created the way Buildbot creates it when no master has yet; or, when one is
 * configured (SESSION_SECRET), that one, written into object_state so that every pod and a
 * Buildbot master on the same database sign with it.
 */
export async function loadSessionSecret(db: Queryable, configured?: string): Promise<string> {
  return db.tx(async (q) => {
    const id = await stateObjectId(q, WWW_OBJECT.name, WWW_OBJECT.class_name);
    if (configured !== undefined) {
      await setState(q, id, 'session_secret', configured);
      return configured;
    }
    // The first pod (or Buildbot master) to get here makes it; every other one reads that.
    await setState(q, id, 'session_secret', randomBytes(16).toString('hex'), { ifAbsent: true });
    return (await getState(q, id, 'session_secret')) as string;
  });
}

export class Sessions {
  constructor(
    private readonly secret: string,
    private readonly expirySeconds = DEFAULT_EXPIRY_S,
  ) {}

  private sign(data: string): string {
    return createHmac('sha256', this.secret).update(data).digest('base64url');
  }

  /** A key for another kind of signed token, derived from the secret (never the secret itself). */
  derivedKey(label: string): Buffer {
    return createHmac('sha256', this.secret).update(`flotilla:${label}`).digest();
  }

  get lifetimeSeconds(): number {
    return this.expirySeconds;
  }

  /** A cookie's token; with `jti`, a login's (it also carries its issue time). */
  mint(userInfo: UserInfo, now = Date.now(), jti?: string): string {
    const header = b64url('{"alg":"HS256","typ":"JWT"}');
    const iat = Math.floor(now / 1000);
    const body: Record<string, unknown> = { user_info: userInfo, exp: iat + this.expirySeconds };
    if (jti !== undefined) Object.assign(body, { iat, jti });
    const claims = b64url(JSON.stringify(body));
    return `${header}.${claims}.${this.sign(`${header}.${claims}`)}`;
  }

  /** The claims of a valid, unexpired token; null otherwise. */
  verify(token: string, now = Date.now()): VerifiedSession | null {
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const [h, c, s] = parts as [string, string, string];
    const expected = Buffer.from(this.sign(`${h}.${c}`));
    const given = Buffer.from(s);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    try {
      const header = JSON.parse(Buffer.from(h, 'base64url').toString());
      if (header.alg !== 'HS256') return null;
      const claims = JSON.parse(Buffer.from(c, 'base64url').toString());
      if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now) return null;
      if (typeof claims.user_info !== 'object' || claims.user_info === null) return null;
      return {
        userInfo: claims.user_info as UserInfo,
        jti: typeof claims.jti === 'string' ? claims.jti : null,
        exp: claims.exp,
      };
    } catch {
      return null;
    }
  }
}

export interface VerifiedSession {
  userInfo: UserInfo;
  /** The session's id: a login's cookie has one; an anonymous one, or Buildbot's, none. */
  jti: string | null;
  exp: number;
}
