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

export interface ClassificationFilter {
  /** null: changes without a branch; undefined: any branch. */
  branch?: string | null;
  repository?: string;
  project?: string;
  codebase?: string;
}

/** The conditions on the change `ch` that `filter` sets. */
function changeConditions(filter: ClassificationFilter) {
  const conds = [];
  if (filter.branch !== undefined) conds.push(sql`ch.branch IS NOT DISTINCT FROM ${filter.branch}`);
  if (filter.repository !== undefined) conds.push(sql`ch.repository = ${filter.repository}`);
  if (filter.project !== undefined) conds.push(sql`ch.project = ${filter.project}`);
  if (filter.codebase !== undefined) conds.push(sql`ch.codebase = ${filter.codebase}`);
  return conds;
}

/**
 * Forget the scheduler's classified changes: those below `lessThan` when given, and of the
 * changes matching `filter` (an any-branch scheduler flushes one branch's, so that another
 * branch's waiting changes are kept for its own timer).
 */
export async function flushChangeClassifications(
  tx: Tx,
  schedulerid: number,
  lessThan?: number,
  filter: ClassificationFilter = {},
): Promise<void> {
  const conds = changeConditions(filter);
  const ofChanges =
    conds.length === 0
      ? sql`TRUE`
      : sql`changeid IN (SELECT ch.changeid FROM changes ch WHERE ${sql.join(conds, sql` AND `)})`;
  await tx.q.query(sql`DELETE FROM scheduler_changes WHERE schedulerid = ${schedulerid}
                       AND (${lessThan ?? null}::int IS NULL OR changeid < ${lessThan ?? null}::int)
                       AND ${ofChanges}`);
}

/** changeid -> important, for the changes matching `filter`. */
export async function getChangeClassifications(
  tx: Tx,
  schedulerid: number,
  filter: ClassificationFilter = {},
): Promise<Map<number, boolean>> {
  const conds = [sql`sc.schedulerid = ${schedulerid}`, ...changeConditions(filter)];
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

// A mixed cluster: a Buildbot master may have run a scheduler of the same name before a
// Flotilla master took it over, and what it built is known only from the build sets it made
// (Buildbot 3.7's SingleBranchScheduler keeps no position of its own: its object_state holds
// nothing about changes, and scheduler_changes only what waits for its tree-stable timer).

/**
 * Whether a build set of the scheduler named `scheduler` already builds the change: one with
 * the change's own source stamp or, with `orNewer` (a tree-stable scheduler, whose build set
 * is the stamp of the newest change it gathered), that of a newer change of the same branch
 * and codebase.
 */
export async function changeBuiltBy(
  q: Queryable,
  scheduler: string,
  changeid: number,
  orNewer: boolean,
): Promise<boolean> {
  // property_value is JSON text ([value, source]) as both kinds of master write it, spaced
  // differently; the CASE keeps the cast from any row that is not a JSON list.
  const ofScheduler = sql`EXISTS (
    SELECT 1 FROM buildset_properties p
    WHERE p.buildsetid = bss.buildsetid AND p.property_name = 'scheduler'
      AND CASE WHEN left(ltrim(p.property_value), 1) = '[' THEN p.property_value::jsonb ->> 0 END = ${scheduler})`;
  const row = await maybeOne<{ built: boolean }>(
    q,
    sql`
    SELECT EXISTS (
             SELECT 1 FROM buildset_sourcestamps bss WHERE bss.sourcestampid = c.sourcestampid AND ${ofScheduler})
           OR (${orNewer}::boolean AND EXISTS (
             SELECT 1 FROM changes n JOIN buildset_sourcestamps bss ON bss.sourcestampid = n.sourcestampid
             WHERE n.changeid > c.changeid AND n.codebase = c.codebase
               AND n.branch IS NOT DISTINCT FROM c.branch AND n.repository = c.repository
               AND n.project = c.project AND ${ofScheduler})) AS built
    FROM changes c WHERE c.changeid = ${changeid}`,
  );
  return row?.built ?? false;
}

/**
 * Keep the record of the changes a scheduler has weighed (`{changeid, at}` under `key` in
 * its object_state, services/master/schedulers/watch.ts) current while another master runs
 * it: `at` becomes `at`; a scheduler without a record gets one at the newest change. Only
 * for an enabled scheduler: a disabled one's record ages, as a record of a scheduler out of
 * the configuration does.
 */
export async function touchChangesSeen(
  q: Queryable,
  schedulerid: number,
  objectid: number,
  key: string,
  at: number,
): Promise<void> {
  // As JSON text, not float8: a cast to numeric keeps only 15 digits of the seconds.
  const atJson = JSON.stringify(at);
  await q.query(sql`
    INSERT INTO object_state (objectid, name, value_json)
    SELECT ${objectid}, ${key},
           jsonb_build_object('changeid', (SELECT coalesce(max(changeid), 0) FROM changes), 'at', ${atJson}::jsonb)::text
    FROM schedulers WHERE id = ${schedulerid} AND coalesce(enabled, 1) = 1
    ON CONFLICT (objectid, name) DO UPDATE
      SET value_json = jsonb_set(object_state.value_json::jsonb, '{at}', ${atJson}::jsonb)::text`);
}
