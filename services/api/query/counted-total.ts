// meta.total from the totals the database keeps (migration 0004) instead of a count(*), where
// the request's filters name only counted scopes.
import { type SQLQuery, sql } from '../../core/db/pool.js';
import type { Endpoint, PathArgs } from '../registry/model.js';
import type { ResultSpec } from './spec.js';

/**
 * The exact total of a request from the totals the database keeps (migration 0004), when
 * the path and the filters fix only counted dimensions, each to one value, or one of them to
 * a list of values (`builderid__in=...`: the scopes of distinct values of one dimension are
 * disjoint, so the total is the sum of theirs, and a value named twice is still one scope);
 * null otherwise, and the caller counts the matching rows instead.
 *
 * The list case is the waterfall's: its 30 builders' newest builds counted 300,000 rows of
 * the ten-million-build set for meta.total, 150 ms of `SELECT count(*) FROM builds WHERE
 * builderid IN (<30>)` on a quiet database and 477 ms p95 for the whole read with 20 builds
 * running at load 36 (load/results/fleet-reads.md); the 30 kept totals are 30 index lookups.
 */
export function countedTotal(endpoint: Endpoint, args: PathArgs, spec: ResultSpec): SQLQuery | null {
  const counted = endpoint.resource.counted;
  if (!counted || !endpoint.countScope) return null;
  const fixed = new Map<string, SQLQuery[]>(
    Object.entries(endpoint.countScope(args)).map(([d, v]) => [d, [v]]),
  );
  let listed = false;
  for (const f of spec.filters) {
    const name = f.field.name;
    if (!counted.dims.includes(name) || fixed.has(name) || f.values.length === 0) return null;
    if (f.values.length > 1) {
      if (listed || (f.op !== 'eq' && f.op !== 'in')) return null;
      listed = true;
      fixed.set(
        name,
        f.values.map((v) => sql`${String(v)}::text`),
      );
      continue;
    }
    const v = f.values[0]!;
    if (f.op === 'eq' || f.op === 'in') fixed.set(name, [sql`${String(v)}::text`]);
    else if (f.op === 'ne' && typeof v === 'boolean') fixed.set(name, [sql`${String(!v)}::text`]);
    else return null;
  }
  const dims = counted.dims.filter((d) => fixed.has(d));
  if (!counted.scopes.some((s) => s.length === dims.length && s.every((d) => dims.includes(d)))) return null;
  const list = dims.find((d) => fixed.get(d)!.length > 1);
  const keyOf = (at: number) => {
    const parts = dims.map((d) => sql`${`${d}=`}::text || ${fixed.get(d)![d === list ? at : 0]!}`);
    return parts.length ? sql.join(parts, sql` || '&' || `) : sql`''`;
  };
  const keys = list ? fixed.get(list)!.map((_, i) => keyOf(i)) : [keyOf(0)];
  return sql`(SELECT coalesce(sum(cd.n), 0) FROM flotilla.count_deltas cd
              WHERE cd.tbl = ${counted.table}::text AND cd.scope IN (${sql.join(keys, sql`, `)}))`;
}
