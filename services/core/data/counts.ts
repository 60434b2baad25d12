// Folding the count deltas of migration 0004. Any process may do it; an advisory lock keeps
// two from doing it at once, and doing it is always safe (totals read the same before and after).
import { type ConnectionPool, one, sql } from '../db/pool.js';
import type { Logger } from '../telemetry/logger.js';

const LOCK_KEY = 0x636e7473; // "cnts"

export async function compactCounts(db: ConnectionPool): Promise<boolean> {
  return db.tx(async (tx) => {
    const lock = await one<{ ok: boolean }>(tx, sql`SELECT pg_try_advisory_xact_lock(${LOCK_KEY}) AS ok`);
    if (!lock.ok) return false;
    await tx.query(sql`SELECT flotilla.compact_counts()`);
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
