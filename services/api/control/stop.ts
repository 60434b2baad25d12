// stop: ask the master that runs the build to stop it. The request travels on the event bus
// as Buildbot's control message (control/builds/<id>/stop), which the owning master acts on.

import type { Redis } from 'ioredis';
import { type ConnectionPool, sql } from '../../core/db/pool.js';
import { publish } from '../../core/events/bus.js';
import type { ActionCall } from '../http/jsonrpc.js';

export async function stopBuild(deps: { db: ConnectionPool; redis: Redis }, call: ActionCall): Promise<null> {
  const { endpoint, args } = call.match;
  const conds = endpoint.scope(args);
  const [build] = await deps.db.query(sql`SELECT a.id FROM builds a WHERE ${sql.join(conds, sql` AND `)}`);
  const reason = typeof call.params.reason === 'string' ? call.params.reason : 'no reason';
  const message: Record<string, unknown> = { reason };
  if (Number.isInteger(call.params.results)) message.results = call.params.results;
  await publish(deps.redis, ['control', 'builds', build.id, 'stop'], message);
  return null;
}
