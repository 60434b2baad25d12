// API tokens (issue 33, section 4): a script sends `Authorization: Bearer flt_<id>_<secret>`
// and acts as the user who made the token, with at most the roles the user gave it
// (core/auth/authz.ts's token_roles). The id finds the row; the secret is checked against
// the row's hash in constant time.
//
// Why SHA-256 and not the scrypt of passwords: the secret is 32 bytes from the system's
// random source, so there is no dictionary to try and 2^256 secrets to search; a slow hash
// protects guessable passwords and would cost every request. A database dump or backup
// therefore yields no usable token.
//
// Every request with a token reads its row from the primary, never a replica and never a
// cache: a revocation (or an expiry, or the user's removal) counts on every pod for the very
// next request. One read by primary key per request is the price. The login throttle is not
// involved: it counts failed passwords, and a token is not one (a valid token works while its
// user's password logins are locked out); a wrong token is refused, and its 256 bits cannot
// be guessed, so wrong tokens are not counted either.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { TOKEN_ROLES } from '../../core/auth/authz.js';
import { type UserDirectory, userInfoOf } from '../../core/auth/users.js';
import { type ApiTokenRow, apiTokenById } from '../../core/data/api-tokens.js';
import type { Queryable } from '../../core/db/pool.js';
import { tokenRefused } from '../errors/catalogue.js';
import type { UserInfo } from './session.js';

/** Secret scanners (and people) recognise a Flotilla token by this. */
export const TOKEN_PREFIX = 'flt_';
const SECRET_BYTES = 32;
// flt_<id>_<secret>: the id is a bigserial, the secret 32 bytes in base64url (43 characters).
const TOKEN_FORMAT = /^flt_([1-9][0-9]{0,15})_([A-Za-z0-9_-]{43})$/;
const BEARER = /^Bearer +(\S*) *$/i;

/** The user_info key of the token a request came with (its id): for events' recheck. */
export const TOKEN_ID = 'token_id';

/** The id of the token a request's user came with; null for a login session or none. */
export function tokenIdOf(user: UserInfo | undefined): number | null {
  const id = user?.[TOKEN_ID];
  return typeof id === 'number' ? id : null;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** A new token's text and the hash to store; the id is the row's. */
export function newSecret(): { secret: string; hash: Buffer } {
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { secret, hash: hashSecret(secret) };
}

export const tokenText = (id: number, secret: string) => `${TOKEN_PREFIX}${id}_${secret}`;

/** An Authorization header's Bearer token: null when the header is not Bearer at all. */
export function bearerOf(header: string | undefined): { id: number; secret: string } | 'malformed' | null {
  if (header === undefined || !/^bearer(?: |$)/i.test(header)) return null;
  const m = BEARER.exec(header);
  const t = m ? TOKEN_FORMAT.exec(m[1]!) : null;
  if (!t) return 'malformed';
  return { id: Number(t[1]), secret: t[2]! };
}

// Compared against when no row has the id, so that a missing id costs the same work.
const NO_HASH = Buffer.alloc(32);

export class ApiTokens {
  constructor(
    private readonly db: Queryable,
    private readonly users: UserDirectory | null,
  ) {}

  /**
   * The user a request's Authorization header makes it: null when it sends no Bearer token;
   * throws TOKEN_REFUSED when the token is malformed, unknown, revoked or expired, or its user
   * is gone.
   */
  async resolve(header: string | undefined, now = Date.now()): Promise<UserInfo | null> {
    const bearer = bearerOf(header);
    if (bearer === null) return null;
    if (bearer === 'malformed') {
      throw tokenRefused(`malformed Authorization header: expected "Bearer ${TOKEN_PREFIX}..."`);
    }
    const row = await apiTokenById(this.db, bearer.id);
    const given = hashSecret(bearer.secret);
    const same = timingSafeEqual(given, row?.secret_hash.length === 32 ? row.secret_hash : NO_HASH);
    if (!row || !same) throw tokenRefused('invalid API token');
    // Only the holder of the real secret learns why it no longer counts.
    const reason = this.whyNot(row, now);
    if (reason) throw tokenRefused(reason);
    return this.userOf(row)!;
  }

  /** Whether token `id` still counts (an events connection's recheck). */
  async alive(id: number, now = Date.now()): Promise<boolean> {
    const row = await apiTokenById(this.db, id);
    return row !== undefined && this.whyNot(row, now) === null;
  }

  private whyNot(row: ApiTokenRow, now: number): string | null {
    if (row.revoked_at !== null) return 'API token revoked';
    if (row.expires_at * 1000 <= now) return 'API token expired';
    if (this.userOf(row) === null) return "the API token's user no longer exists";
    return null;
  }

  /**
   * Who the token acts as: a password user as their entry is now (groups changed since count,
   * a removed user's tokens stop); a user of another login as they were when they made it.
   */
  private userOf(row: ApiTokenRow): UserInfo | null {
    let user: UserInfo = row.user_info;
    if (row.via === 'password') {
      const entry = this.users?.find(row.owner);
      if (!entry) return null;
      user = { ...userInfoOf(entry) };
    }
    return { ...user, [TOKEN_ROLES]: [...row.roles], [TOKEN_ID]: row.id };
  }
}
