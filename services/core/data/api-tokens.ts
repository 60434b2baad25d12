// API tokens (migration 0020): a user's named credentials for scripts. The secret itself is
// never stored, only its SHA-256 (services/api/auth/api-tokens.ts makes and checks them).
// Revoking keeps the row (revoked_at), so a user's list shows what was revoked and when.
import { many, maybeOne, type Queryable, sql } from '../db/pool.js';

export interface ApiTokenRow {
  id: number;
  owner: string;
  name: string;
  secret_hash: Buffer;
  roles: string[];
  user_info: Record<string, unknown>;
  via: 'password' | 'token';
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export type NewApiToken = Omit<ApiTokenRow, 'id' | 'revoked_at'>;

/** What a user's list shows of a token: everything but its hash and the user it acts as. */
export type ApiTokenSummary = Pick<
  ApiTokenRow,
  'id' | 'name' | 'roles' | 'created_at' | 'expires_at' | 'revoked_at'
>;

/**
 * Adds a token unless the owner already has `maxLive` unexpired, unrevoked ones; its id, or
 * null at the limit. A live token of the same name is PostgreSQL's unique violation (23505).
 */
export async function insertApiToken(q: Queryable, t: NewApiToken, maxLive: number): Promise<number | null> {
  const row = await maybeOne<{ id: string }>(
    q,
    sql`INSERT INTO flotilla.api_tokens
          (owner, name, secret_hash, roles, user_info, via, created_at, expires_at)
        SELECT ${t.owner}, ${t.name}, ${t.secret_hash}, ${t.roles}::text[], ${JSON.stringify(t.user_info)}::jsonb,
               ${t.via}, ${t.created_at}, ${t.expires_at}
        WHERE (SELECT count(*) FROM flotilla.api_tokens
               WHERE owner = ${t.owner} AND revoked_at IS NULL AND expires_at > ${t.created_at}) < ${maxLive}
        RETURNING id`,
  );
  return row ? Number(row.id) : null;
}

/** One token by id, whoever owns it (the bearer check compares its hash); undefined if none. */
export async function apiTokenById(q: Queryable, id: number): Promise<ApiTokenRow | undefined> {
  const row = await maybeOne<ApiTokenRow & { id: string }>(
    q,
    sql`SELECT id, owner, name, secret_hash, roles, user_info, via, created_at, expires_at, revoked_at
        FROM flotilla.api_tokens WHERE id = ${id}`,
  );
  return row ? { ...row, id: Number(row.id) } : undefined;
}

/** The owner's tokens, oldest first. */
export async function apiTokensOf(q: Queryable, owner: string): Promise<ApiTokenSummary[]> {
  const rows = await many<ApiTokenSummary & { id: string }>(
    q,
    sql`SELECT id, name, roles, created_at, expires_at, revoked_at
        FROM flotilla.api_tokens WHERE owner = ${owner} ORDER BY id`,
  );
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/**
 * Revokes the owner's token `id` (one already revoked keeps its first time). Whether the
 * owner has such a token.
 */
export async function revokeApiToken(q: Queryable, owner: string, id: number, now: number): Promise<boolean> {
  const row = await maybeOne<{ id: string }>(
    q,
    sql`UPDATE flotilla.api_tokens SET revoked_at = coalesce(revoked_at, ${now})
        WHERE id = ${id} AND owner = ${owner} RETURNING id`,
  );
  return row !== undefined;
}
