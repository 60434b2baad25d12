// set_priority: a pending request gets a new priority (a later Buildbot's action; 3.7 has
// none). Params: priority (an integer). A request that has completed cannot change.

import type { Redis } from 'ioredis';
import { setBuildRequestPriority, transact } from '../../core/data/index.js';
import type { ConnectionPool } from '../../core/db/pool.js';
import { isInt32 } from '../../core/identifiers.js';
import { invalidParams } from '../errors/catalogue.js';
import type { ActionCall } from './action.js';

export async function setPriority(
  deps: { db: ConnectionPool; redis: Redis },
  call: ActionCall,
): Promise<null> {
  const priority = call.params.priority;
  if (!isInt32(priority)) {
    throw invalidParams({ priority: 'expected an integer' });
  }
  const brid = Number(call.match.args.buildrequestid);
  const changed = await transact(deps, (tx) => setBuildRequestPriority(tx, brid, priority));
  if (!changed) throw invalidParams({ priority: 'the build request has completed' });
  return null;
}
