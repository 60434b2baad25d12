// Buildbot's session cookie: TWISTED_SESSION holds an HS256 JWT of {user_info, exp}, signed
// with the hex secret a Buildbot master keeps in object_state (object `www`). Any API pod
// (and a Buildbot master on the same database) mints and accepts the same cookies.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Queryable, sql } from '../../core/db/pool.js';

export const COOKIE = 'TWISTED_SESSION';
export const SECURE_COOKIE = 'TWISTED_SECURE_SESSION';
const WWW_OBJECT = { name: 'www', class_name: 'buildbot.www.service.WWWService' };
const DEFAULT_EXPIRY_S = 7 * 24 * 3600;

export type UserInfo = Record<string, unknown>;

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/**
 * The secret, created the way Buildbot creates it when no master has yet; or, when one is
 * configured (SESSION_SECRET), that one, written into object_state so that every pod and a
 * Buildbot master on the same database sign with it.
 */
export async function loadSessionSecret(db: Queryable, configured?: string): Promise<string> {
  return db.tx(async (tx) => {
    await tx.query(
      sql`INSERT INTO objects (name, class_name) VALUES (${WWW_OBJECT.name}, ${WWW_OBJECT.class_name})
          ON CONFLICT (name, class_name) DO NOTHING`,
    );
    const [obj] = await tx.query(
      sql`SELECT id FROM objects WHERE name = ${WWW_OBJECT.name} AND class_name = ${WWW_OBJECT.class_name}`,
    );
    if (configured !== undefined) {
      await tx.query(
        sql`INSERT INTO object_state (objectid, name, value_json)
            VALUES (${obj.id}, 'session_secret', ${JSON.stringify(configured)})
            ON CONFLICT (objectid, name) DO UPDATE SET value_json = EXCLUDED.value_json
            WHERE object_state.value_json IS DISTINCT FROM EXCLUDED.value_json`,
      );
      return configured;
    }
    const fresh = JSON.stringify(randomBytes(16).toString('hex'));
    await tx.query(
      sql`INSERT INTO object_state (objectid, name, value_json) VALUES (${obj.id}, 'session_secret', ${fresh})
          ON CONFLICT (objectid, name) DO NOTHING`,
    );
    const [row] = await tx.query(
      sql`SELECT value_json FROM object_state WHERE objectid = ${obj.id} AND name = 'session_secret'`,
    );
    return JSON.parse(row.value_json) as string;
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

  mint(userInfo: UserInfo, now = Date.now()): string {
    const header = b64url('{"alg":"HS256","typ":"JWT"}');
    const claims = b64url(
      JSON.stringify({ user_info: userInfo, exp: Math.floor(now / 1000) + this.expirySeconds }),
    );
    return `${header}.${claims}.${this.sign(`${header}.${claims}`)}`;
  }

  /** The user of a valid, unexpired token; null otherwise. */
  verify(token: string, now = Date.now()): UserInfo | null {
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
      return claims.user_info as UserInfo;
    } catch {
      return null;
    }
  }
}
