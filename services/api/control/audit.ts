// The audit of control actions: what the JSON-RPC dispatcher (../http/jsonrpc.ts) records of
// every call, answered or refused, as a row of flotilla.audit_log (core/data/audit.ts) and as
// one structured log line (`msg: 'audit'`, the row's fields).
//
// When the row is written: right after the action, before the answer is sent, retried a few
// times; not inside the action's own transaction. Only some actions are one transaction
// (force, cancel, priority, enable); stop and the worker actions are messages on the event
// bus, and a refused or invalid call has no transaction at all. One place after the action
// records them all alike. A success whose row still cannot be written after the retries (the
// database away for seconds) is answered as a success, since the action did happen; its log
// line is still written, and an error line says the row is missing.
import type { AuditEntry } from '../../core/data/audit.js';
import { recordAudit } from '../../core/data/audit.js';
import type { Queryable } from '../../core/db/pool.js';
import type { Logger } from '../../core/telemetry/logger.js';

// A force scheduler's parameters are the user's own text: kept, but each string cut to this
// many characters, each object or list to this many members, this deep, and the whole to
// ARGS_MAX_BYTES of JSON (else only its size is kept).
const STRING_MAX = 1000;
const MEMBERS_MAX = 100;
const DEPTH_MAX = 6;
const ARGS_MAX_BYTES = 16 * 1024;

// An argument whose name looks like one of these is never stored, only that it was there.
const SECRET_NAME = /pass|secret|token|credential|api[-_]?key|private[-_]?key|auth|cookie|session/i;
export const REDACTED = '***';

// PostgreSQL's jsonb holds neither NUL nor half a surrogate pair.
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const storable = (s: string) => s.replace(UNSTORABLE, '\uFFFD');

function cut(s: string): string {
  const t = storable(s);
  return t.length > STRING_MAX ? `${t.slice(0, STRING_MAX)}…` : t;
}

function safe(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return cut(v);
  if (v === null || typeof v !== 'object') return v;
  if (depth >= DEPTH_MAX) return '[nested]';
  if (Array.isArray(v)) return v.slice(0, MEMBERS_MAX).map((x) => safe(x, depth + 1));
  // No prototype: a key `__proto__` (JSON.parse makes it an own key) stays a key.
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, x] of Object.entries(v).slice(0, MEMBERS_MAX)) {
    out[cut(k)] = SECRET_NAME.test(k) ? REDACTED : safe(x, depth + 1);
  }
  return out;
}

/** A call's arguments as the audit log keeps them: no secrets, bounded, storable. */
export function auditArgs(params: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const kept = safe(params, 0) as Record<string, unknown>;
  const bytes = Buffer.byteLength(JSON.stringify(kept));
  return bytes > ARGS_MAX_BYTES ? { _omitted: `${bytes} bytes of arguments` } : kept;
}

// Attempts and the waits between them: about a second in all, shorter than a client's
// patience and longer than a pool's brief exhaustion or a primary's restart to accept.
const RETRY_WAITS_MS = [0, 100, 300, 600];

export class Auditor {
  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
  ) {}

  /** Logs the entry and writes its row (retried); never throws. */
  async record(given: AuditEntry): Promise<void> {
    // The method and path are the client's own text too (the path decoded: %00 is a NUL):
    // bounded and storable, else the row could never be written and the call went unaudited.
    const entry: AuditEntry = {
      ...given,
      method: given.method === null ? null : cut(given.method),
      path: cut(given.path),
    };
    this.log.info({ ...entry }, 'audit');
    let last: unknown;
    for (const wait of RETRY_WAITS_MS) {
      if (wait) await new Promise((r) => setTimeout(r, wait));
      try {
        await recordAudit(this.db, entry);
        return;
      } catch (err) {
        last = err;
      }
    }
    this.log.error({ err: last, audit: entry }, 'audit row not written');
  }
}
