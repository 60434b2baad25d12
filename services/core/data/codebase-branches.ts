// A codebase's branches (Buildbot 4.3, db/codebase_branches.py update_branch and
// data/codebase_branches.py): after a poll that recorded commits on a branch, the GitPoller
// sets the branch (found by (codebaseid, name_hash), else created) to its newest commit with
// the time of the poll, and announces `branches/<id>/update` with the branch. Its name is
// the poller's key for the ref: the name for a listed branch, the full ref otherwise.
import { one, sql } from '../db/pool.js';
import { branch } from '../entities/branch.js';
import { branchKeys } from '../events/keys.js';
import { entity } from './entities.js';
import { nameHash } from './names.js';
import type { Tx } from './transaction.js';

/** Create or move a branch to `commitid` (announced); its id. */
export async function updateBranch(
  tx: Tx,
  b: { codebaseid: number; name: string; commitid: number | null; last_timestamp: number },
): Promise<number> {
  const { id } = await one<{ id: number }>(
    tx.q,
    sql`INSERT INTO codebase_branches (codebaseid, name, name_hash, commitid, last_timestamp)
        VALUES (${b.codebaseid}, ${b.name}, ${nameHash(b.name)}, ${b.commitid}, ${b.last_timestamp})
        ON CONFLICT (codebaseid, name_hash)
        DO UPDATE SET commitid = EXCLUDED.commitid, name = EXCLUDED.name, last_timestamp = EXCLUDED.last_timestamp
        RETURNING id`,
  );
  tx.out.addAll(branchKeys(id), 'update', await entity(tx.q, branch, id));
  return id;
}
