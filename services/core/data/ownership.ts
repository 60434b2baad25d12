// Which master runs a scheduler or a change source: one row in scheduler_masters or
// changesource_masters, whose primary key (the item's id) lets exactly one master own it.
//
// Buildbot facts (buildbot/db/schedulers.py setSchedulerMaster, buildbot/db/changesources.py,
// buildbot/data/schedulers.py trySetSchedulerMaster): a blind insert wins the item; if the
// insert clashes, the item stays with its owner and the answer is true only if the owner is
// the asking master; masterid null releases the item. No event is produced.
// Two masters asking at once: the insert of the second waits for the first's transaction
// (ON CONFLICT), so exactly one of them inserts and the other reads the winner.
import { many, maybeOne, sql } from '../db/pool.js';
import type { Tx } from './transaction.js';

const TABLES = {
  scheduler: { table: 'scheduler_masters', id: 'schedulerid' },
  changesource: { table: 'changesource_masters', id: 'changesourceid' },
} as const;

export type Owned = keyof typeof TABLES;

/** True iff the item is now owned by `masterid` (for null: released, always true). */
export async function trySetMaster(
  tx: Tx,
  kind: Owned,
  itemid: number,
  masterid: number | null,
): Promise<boolean> {
  const t = sql.ident(TABLES[kind].table);
  const id = sql.ident(TABLES[kind].id);
  if (masterid === null) {
    await tx.q.query(sql`DELETE FROM ${t} WHERE ${id} = ${itemid}`);
    return true;
  }
  const inserted = await maybeOne<{ masterid: number }>(
    tx.q,
    sql`INSERT INTO ${t} (${id}, masterid) VALUES (${itemid}, ${masterid}) ON CONFLICT (${id}) DO NOTHING RETURNING masterid`,
  );
  if (inserted) return true;
  const owner = await maybeOne<{ masterid: number }>(
    tx.q,
    sql`SELECT masterid FROM ${t} WHERE ${id} = ${itemid}`,
  );
  return owner?.masterid === masterid;
}

/** Release every item `masterid` owns; returns their ids. */
export async function releaseAll(tx: Tx, kind: Owned, masterid: number): Promise<number[]> {
  const t = sql.ident(TABLES[kind].table);
  const id = sql.ident(TABLES[kind].id);
  const rows = await many<{ id: number }>(
    tx.q,
    sql`DELETE FROM ${t} WHERE masterid = ${masterid} RETURNING ${id} AS id`,
  );
  return rows.map((r) => r.id).sort((a, b) => a - b);
}
