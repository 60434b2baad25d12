// Worker actions (stop, pause, unpause, kill): Buildbot's control message to the master the
// worker is connected to, control/worker/<id>/<action>.
import type { Redis } from 'ioredis';
import type { ActionCall } from './action.js';
import { sendControl } from './send.js';

export async function workerAction(redis: Redis, workerid: number, call: ActionCall): Promise<null> {
  const reason = typeof call.params.reason === 'string' ? call.params.reason : 'no reason';
  await sendControl(redis, ['control', 'worker', workerid, call.method], { reason });
  return null;
}
