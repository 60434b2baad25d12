// Schedulers: findSchedulerId, trySetSchedulerMaster, schedulerEnable, and the change
// classifications a branch scheduler keeps between its tree-stable timer's firings.
//
// Buildbot facts (buildbot/db/schedulers.py, buildbot/data/schedulers.py):
// - found or created by name_hash, enabled by default (column default 1);
// - ownership as ownership.ts describes; schedulerEnable produces schedulers/<id>/updated
//   with the scheduler entity (which embeds its master);
// - scheduler_changes holds (schedulerid, changeid, important 0/1), one row per pair
//   (insert, else update); flushing deletes them, optionally only below a change id;
//   reading may filter on the changes' branch (null meaning "no branch"), repository,
//   project and codebase.
import { many, maybeOne, type Queryable, sql } from '../db/pool.js';
import { scheduler } from '../entities/scheduler.js';
import { noSuch } from '../errors.js';
import { schedulerKeys } from '../events/keys.js';
import { entity } from './entities.js';
import { findNamedId } from './names.js';
import { trySetMaster } from './ownership.js';
import type { Tx } from './transaction.js';

export async function findSchedulerId(tx: Tx, name: string): Promise<number> {
  return (await findNamedId(tx, 'schedulers', name))!;
}

/** True iff the scheduler is now owned by `masterid` (null releases it). */
export function trySetSchedulerMaster(
  tx: Tx,
  schedulerid: number,
  masterid: number | null,
): Promise<boolean> {
  return trySetMaster(tx, 'scheduler', schedulerid, masterid);
}

export async function schedulerEnable(tx: Tx, schedulerid: number, enabled: boolean): Promise<void> {
  const updated = await maybeOne<{ id: number }>(
    tx.q,
    sql`UPDATE schedulers SET enabled = ${enabled ? 1 : 0} WHERE id = ${schedulerid} RETURNING id`,
  );
  if (!updated) throw noSuch(`scheduler ${schedulerid}`);
  const e = await entity(tx.q, scheduler, schedulerid);
  tx.out.addAll(schedulerKeys(schedulerid), 'updated', e);
}

/** Record, for each change id, whether it is important to the scheduler. */
export async function classifyChanges(
  tx: Tx,
  schedulerid: number,
  classifications: ReadonlyMap<number, boolean>,
): Promise<void> {
  if (classifications.size === 0) return;
  const ids = [...classifications.keys()];
  const important = ids.map((id) => (classifications.get(id) ? 1 : 0));
  await tx.q.query(sql`
    INSERT INTO scheduler_changes (schedulerid, changeid, important)
    SELECT ${schedulerid}, c, i FROM unnest(${ids}::int[], ${important}::int[]) AS x(c, i)
    ON CONFLICT (schedulerid, changeid) DO UPDATE SET important = EXCLUDED.important`);
}

/** Forget the scheduler's classified changes (only those below `lessThan` when given). */
export async function flushChangeClassifications(
  tx: Tx,
  schedulerid: number,
  lessThan?: number,
): Promise<void> {
  await tx.q.query(sql`DELETE FROM scheduler_changes WHERE schedulerid = ${schedulerid}
                       AND (${lessThan ?? null}::int IS NULL OR changeid < ${lessThan ?? null}::int)`);
}

export interface ClassificationFilter {
  /** null: changes without a branch; undefined: any branch. */
  branch?: string | null;
  repository?: string;
  project?: string;
  codebase?: string;
}

/** changeid -> important, for the changes matching `filter`. */
export async function getChangeClassifications(
  tx: Tx,
  schedulerid: number,
  filter: ClassificationFilter = {},
): Promise<Map<number, boolean>> {
  const conds = [sql`sc.schedulerid = ${schedulerid}`];
  if (filter.branch !== undefined) conds.push(sql`ch.branch IS NOT DISTINCT FROM ${filter.branch}`);
  if (filter.repository !== undefined) conds.push(sql`ch.repository = ${filter.repository}`);
  if (filter.project !== undefined) conds.push(sql`ch.project = ${filter.project}`);
  if (filter.codebase !== undefined) conds.push(sql`ch.codebase = ${filter.codebase}`);
  const rows = await many<{ changeid: number; important: number | null }>(
    tx.q,
    sql`SELECT sc.changeid, sc.important FROM scheduler_changes sc JOIN changes ch ON ch.changeid = sc.changeid
        WHERE ${sql.join(conds, sql` AND `)} ORDER BY sc.changeid`,
  );
  return new Map(rows.map((r) => [r.changeid, Boolean(r.important)]));
}

/** Whether the scheduler is enabled; one that has no row yet is. */
export async function schedulerEnabled(q: Queryable, schedulerid: number): Promise<boolean> {
  const row = await maybeOne<{ enabled: number | null }>(
    q,
    sql`SELECT enabled FROM schedulers WHERE id = ${schedulerid}`,
  );
  return row ? Boolean(row.enabled ?? 1) : true;
}
