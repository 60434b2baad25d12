// stop: ask the master that runs the build to stop it. The request travels on the event bus
// as Buildbot's control message (control/builds/<id>/stop), which the owning master acts on.
// When that master is no longer active nobody would act on it, so the build is ended here,
// the way its master would have ended it.
import type { Redis } from 'ioredis';
import { finishOrphanedBuild, transact } from '../../core/data/index.js';
import { type ConnectionPool, sql } from '../../core/db/pool.js';
import { publish } from '../../core/events/bus.js';
import { Results } from '../../core/results.js';
import type { ActionCall } from '../http/jsonrpc.js';

export async function stopBuild(deps: { db: ConnectionPool; redis: Redis }, call: ActionCall): Promise<null> {
  const { endpoint, args } = call.match;
  const conds = endpoint.scope(args);
  const [build] = await deps.db.query(sql`
    SELECT a.id, a.complete_at, m.active FROM builds a JOIN masters m ON m.id = a.masterid
    WHERE ${sql.join(conds, sql` AND `)}`);
  const reason = typeof call.params.reason === 'string' ? call.params.reason : 'no reason';
  const results = Number.isInteger(call.params.results) ? (call.params.results as number) : Results.CANCELLED;
  const message: Record<string, unknown> = { reason };
  if (Number.isInteger(call.params.results)) message.results = results;
  await publish(deps.redis, ['control', 'builds', build.id, 'stop'], message);
  if (build.complete_at === null && !build.active) {
    await transact({ db: deps.db, redis: deps.redis }, (tx) =>
      finishOrphanedBuild(tx, build.id, results, `cancelled (${reason})`),
    );
  }
  return null;
}
