// Worker actions (stop, pause, unpause, kill): Buildbot's control message to the master the
// worker is connected to, control/worker/<id>/<action>.
import type { Redis } from 'ioredis';
import { type ConnectionPool, sql } from '../../core/db/pool.js';
import { publish } from '../../core/events/bus.js';
import type { ActionCall } from '../http/jsonrpc.js';

export async function workerAction(
  deps: { db: ConnectionPool; redis: Redis },
  call: ActionCall,
): Promise<null> {
  const { endpoint, args } = call.match;
  const conds = endpoint.scope(args);
  const [worker] = await deps.db.query(sql`SELECT a.id FROM workers a WHERE ${sql.join(conds, sql` AND `)}`);
  const reason = typeof call.params.reason === 'string' ? call.params.reason : 'no reason';
  await publish(deps.redis, ['control', 'worker', worker.id, call.method], { reason });
  return null;
}
