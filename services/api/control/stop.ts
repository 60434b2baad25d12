// stop: ask the master that runs the build to stop it. The request travels on the event bus
// as Buildbot's control message (control/builds/<id>/stop), which the owning master acts on.
// When that master is no longer active nobody would act on it, so the build is ended here,
// the way its master would have ended it. Only a stop that a running build's active master
// must hear is refused (503) while Redis cannot carry it.
import { buildRunState, finishOrphanedBuild, transact } from '../../core/data/index.js';
import type { DataContext } from '../../core/data/transaction.js';
import { Results } from '../../core/results.js';
import { notFound } from '../errors/catalogue.js';
import type { ActionCall } from './action.js';
import { sendControl } from './send.js';

export async function stopBuild(ctx: DataContext, buildid: number, call: ActionCall): Promise<null> {
  const build = await buildRunState(ctx.db, buildid);
  if (!build) throw notFound();
  const reason = typeof call.params.reason === 'string' ? call.params.reason : 'no reason';
  const results = Number.isInteger(call.params.results) ? (call.params.results as number) : Results.CANCELLED;
  const message: Record<string, unknown> = { reason };
  if (Number.isInteger(call.params.results)) message.results = results;
  try {
    await sendControl(ctx.redis, ['control', 'builds', buildid, 'stop'], message);
  } catch (err) {
    if (!build.complete && build.masterActive) throw err;
  }
  if (!build.complete && !build.masterActive) {
    await transact(ctx, (tx) => finishOrphanedBuild(tx, buildid, results, `cancelled (${reason})`));
  }
  return null;
}
