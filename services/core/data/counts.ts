// Folding the count deltas of migration 0004. Any process may do it; an advisory lock keeps
// two from doing it at once, and doing it is always safe (totals read the same before and after).
import { type ConnectionPool, one, sql } from '../db/pool.js';
import type { Logger } from '../telemetry/logger.js';

const LOCK_KEY = 0x636e7473; // "cnts"

export async function compactCounts(db: ConnectionPool): Promise<boolean> {
  return db.tx(async (tx) => {
    const lock = await one<{ ok: boolean }>(tx, sql`SELECT pg_try_advisory_xact_lock(${LOCK_KEY}) AS ok`);
    if (!lock.ok) return false;
    // Only the scopes with more than one delta, not flotilla.compact_counts() (migration 0004),
    // which deletes and writes again every scope's row, folded or not: on the fleet's 1,000
    // builders and 1,000 workers, 9,035 rows a time, 227 ms each, a third of PostgreSQL's time
    // during the drain (load/results/fleet.md, 2026-11-28 22:30); this, on the same table, 36 ms
    // (pgbench -T 5 -c 1 on each, load 33). The sums read the same before and after, as there.
    await tx.query(sql`
      WITH folded AS (
        SELECT tbl, scope FROM flotilla.count_deltas GROUP BY tbl, scope HAVING count(*) > 1),
      gone AS (
        DELETE FROM flotilla.count_deltas d USING folded f WHERE d.tbl = f.tbl AND d.scope = f.scope
        RETURNING d.tbl, d.scope, d.n)
      INSERT INTO flotilla.count_deltas (tbl, scope, n)
      SELECT tbl, scope, sum(n) FROM gone GROUP BY tbl, scope HAVING sum(n) <> 0`);
    return true;
  });
}

/** Compact every `intervalMs`; returns a function that stops it. */
export function startCountCompaction(db: ConnectionPool, log: Logger, intervalMs = 10_000): () => void {
  const timer = setInterval(() => {
    compactCounts(db).catch((err) => log.warn({ err: (err as Error).message }, 'count compaction failed'));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
