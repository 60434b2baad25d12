// enable: turn a scheduler on or off (Buildbot's SchedulerEndpoint control, what its web UI's
// toggle sends). Params: enabled (a boolean). The master that owns the scheduler hears
// schedulers/<id>/updated and stops or starts it; a disabled scheduler adds no build sets.
import type { Redis } from 'ioredis';
import { schedulerEnable, transact } from '../../core/data/index.js';
import type { ConnectionPool } from '../../core/db/pool.js';
import { invalidParams } from '../errors/catalogue.js';
import type { ActionCall } from './action.js';

export async function enableScheduler(
  deps: { db: ConnectionPool; redis: Redis },
  call: ActionCall,
): Promise<null> {
  const { enabled } = call.params;
  // Buildbot writes whatever it is given into a smallint column (a 500 for anything but a
  // boolean or an integer); a boolean is what its UI sends.
  if (typeof enabled !== 'boolean') throw invalidParams({ enabled: 'expected true or false' });
  await transact(deps, (tx) => schedulerEnable(tx, Number(call.match.args.schedulerid), enabled));
  return null;
}
