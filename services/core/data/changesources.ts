// Change sources: findChangeSourceId, trySetChangeSourceMaster. Buildbot facts
// (buildbot/db/changesources.py, buildbot/data/changesources.py): found or created by
// name_hash; ownership as ownership.ts describes; no events.
import { findNamedId } from './names.js';
import { trySetMaster } from './ownership.js';
import type { Tx } from './transaction.js';

export async function findChangeSourceId(tx: Tx, name: string): Promise<number> {
  return (await findNamedId(tx, 'changesources', name))!;
}

/** True iff the change source is now owned by `masterid` (null releases it). */
export function trySetChangeSourceMaster(
  tx: Tx,
  changesourceid: number,
  masterid: number | null,
): Promise<boolean> {
  return trySetMaster(tx, 'changesource', changesourceid, masterid);
}
