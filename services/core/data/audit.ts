// The audit log (migration 0019): one row per control action, written by the API's JSON-RPC
// dispatcher (services/api/http/jsonrpc.ts) and by any other control path (token creation
// and revocation, configuration reloads) through this one function. Deleted only by the
// retention job (deleteAuditEntries in ./retention.ts).
import { one, type Queryable, sql } from '../db/pool.js';

export interface AuditEntry {
  /** Seconds since the epoch. */
  at: number;
  /** Who asked: the user's owner name (email, user name or full name), or 'anonymous'. */
  actor: string;
  /** The client's address as the API determines it (www.trust_proxy); null when unknown. */
  address: string | null;
  /** The JSON-RPC method (stop, force, ...); null when the call could not be decoded. */
  method: string | null;
  /** The path the action was sent to, below /api/v2 (e.g. `/builds/12`). */
  path: string;
  /** The arguments, as the caller made them safe to keep (no secrets, bounded size). */
  args: Record<string, unknown>;
  /** 'success', or the stable code of the error answered (FORBIDDEN, INVALID_PARAMS, ...). */
  outcome: string;
  /** The HTTP status answered. */
  status: number;
  /** The API token the action came with (migration 0027); absent or null: none. */
  tokenid?: number | null;
}

/** Adds one row; its id. */
export async function recordAudit(q: Queryable, e: AuditEntry): Promise<number> {
  const row = await one<{ id: string }>(
    q,
    sql`INSERT INTO flotilla.audit_log (at, actor, address, method, path, args, outcome, status, tokenid)
        VALUES (${e.at}, ${e.actor}, ${e.address}, ${e.method}, ${e.path}, ${JSON.stringify(e.args)}::jsonb,
                ${e.outcome}, ${e.status}, ${e.tokenid ?? null})
        RETURNING id`,
  );
  return Number(row.id);
}
