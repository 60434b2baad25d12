// What the database keeps for the read API's totals and claimed=false (migrations 0004 and
// 0008), next to the same facts computed from scratch, for suites that compare the two.
import { type Queryable, sql } from '../../services/core/db/pool.js';

/** Every non-zero total kept in flotilla.count_deltas, as 'table|scope' → n. */
export async function keptTotals(db: Queryable): Promise<Map<string, number>> {
  const rows = await db.query(sql`
    SELECT tbl || '|' || scope AS k, sum(n)::int AS n FROM flotilla.count_deltas
    WHERE scope NOT LIKE '~%' GROUP BY 1 HAVING sum(n) <> 0`);
  return new Map(rows.map((r) => [r.k as string, r.n as number]));
}

/** The same totals, counted from scratch. */
export async function trueTotals(db: Queryable): Promise<Map<string, number>> {
  const rows = await db.query(sql`
    SELECT 'builds|' || s AS k, count(*)::int AS n FROM builds,
      unnest(flotilla.build_scopes(builderid, workerid, complete_at IS NOT NULL)) s GROUP BY 1
    UNION ALL
    SELECT 'buildrequests|' || s, count(*)::int FROM buildrequests r,
      unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
        EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id))) s GROUP BY 1
    UNION ALL
    SELECT 'buildsets|' || s, count(*)::int FROM buildsets, unnest(flotilla.buildset_scopes(complete <> 0)) s GROUP BY 1
    UNION ALL SELECT 'changes|', count(*)::int FROM changes HAVING count(*) > 0
    UNION ALL SELECT 'sourcestamps|', count(*)::int FROM sourcestamps HAVING count(*) > 0`);
  return new Map(rows.map((r) => [r.k as string, r.n as number]));
}

export interface UnclaimedSets {
  /** flotilla.unclaimed_buildrequests: what masters claim from. */
  pending: number[];
  /** flotilla.unclaimed_complete_buildrequests. */
  complete: number[];
}

/** The two unclaimed sets as kept (`kept`) and as they should be (`truth`), ids ascending. */
export async function unclaimedSets(db: Queryable): Promise<{ kept: UnclaimedSets; truth: UnclaimedSets }> {
  const [row] = await db.query(sql`
    SELECT coalesce((SELECT array_agg(brid ORDER BY brid) FROM flotilla.unclaimed_buildrequests), '{}') AS kp,
           coalesce((SELECT array_agg(brid ORDER BY brid) FROM flotilla.unclaimed_complete_buildrequests), '{}') AS kc,
           coalesce((SELECT array_agg(r.id ORDER BY r.id) FROM buildrequests r
                     WHERE coalesce(r.complete, 0) = 0
                       AND NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id)), '{}') AS tp,
           coalesce((SELECT array_agg(r.id ORDER BY r.id) FROM buildrequests r
                     WHERE coalesce(r.complete, 0) <> 0
                       AND NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id)), '{}') AS tc`);
  return { kept: { pending: row.kp, complete: row.kc }, truth: { pending: row.tp, complete: row.tc } };
}
