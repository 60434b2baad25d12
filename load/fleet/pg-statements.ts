// pg_stat_statements of the run's database, read at both ends of a window and diffed: what
// PostgreSQL ran in between, without resetting the counters (which needs a grant the
// flotilla role lacks). Phase S (burst.ts) and phase B (pg-window.ts) read it so. Null when
// the bench cluster does not load the extension (load/results/fleet.md, 2026-11-29 00:40,
// says how to load it).
import { type ConnectionPool, sql } from '../../services/core/db/pool.js';

export interface Statement {
  calls: number;
  ms: number;
  /** Plans made and their time: counted only under pg_stat_statements.track_planning (else 0). */
  plans: number;
  planMs: number;
  query: string;
}

/** The counters now, by queryid; null without the extension. */
export async function statements(db: ConnectionPool): Promise<Map<string, Statement> | null> {
  try {
    const rows = await db.query(sql`
      SELECT queryid::text AS id, calls::float8 AS calls, total_exec_time AS ms,
        plans::float8 AS plans, total_plan_time AS plan_ms, query FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`);
    return new Map(
      rows.map((r) => [
        r.id,
        {
          calls: Number(r.calls),
          ms: Number(r.ms),
          plans: Number(r.plans),
          planMs: Number(r.plan_ms),
          query: r.query,
        },
      ]),
    );
  } catch {
    return null;
  }
}

/** What ran between two readings, the most called first. */
export function statementsBetween(
  before: Map<string, Statement>,
  after: Map<string, Statement>,
): Statement[] {
  const out: Statement[] = [];
  for (const [id, a] of after) {
    const b = before.get(id);
    const calls = a.calls - (b?.calls ?? 0);
    if (calls > 0)
      out.push({
        calls,
        ms: a.ms - (b?.ms ?? 0),
        plans: a.plans - (b?.plans ?? 0),
        planMs: a.planMs - (b?.planMs ?? 0),
        query: a.query,
      });
  }
  return out.sort((x, y) => y.calls - x.calls);
}

/** A statement's text on one line, fit for a Markdown table's cell. */
export const oneLine = (query: string, length: number): string =>
  query.replace(/\s+/g, ' ').replaceAll('|', '\\|').slice(0, length);
