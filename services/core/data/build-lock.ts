// A build's row locked (FOR NO KEY UPDATE) for the writes that number or compare under it: a
// build's steps (their numbers and names), its properties (read, then written). Two callers
// adding steps to one build number and name them one after the other.
//
// A build's own writes run in fenced transactions (services/master/claims.ts) whose first
// statement locks this row already; such a transaction says so (Tx.lockedBuild), and the lock
// is not asked for again: a statement fewer a step and a property write, two a build's start
// (the step's row and worker_preparation's), 63 -> 61 statements a short build
// (test/master/builds/statements.test.ts; load/results/fleet.md, 2026-11-29 03:30). The next
// statement's snapshot is taken after the lock either way, so it sees every step or property
// committed by whoever held the lock before (one statement reading with the lock would not:
// a row only locked, not updated, by another transaction is not read again once its lock is
// released, and that transaction's steps would be missed).
import { maybeOne, sql } from '../db/pool.js';
import { noSuch } from '../errors.js';
import type { Tx } from './transaction.js';

export async function lockBuild(tx: Tx, buildid: number): Promise<void> {
  if (tx.lockedBuild === buildid) return;
  const build = await maybeOne<{ id: number }>(
    tx.q,
    sql`SELECT id FROM builds WHERE id = ${buildid} FOR NO KEY UPDATE`,
  );
  if (!build) throw noSuch(`build ${buildid}`);
}
