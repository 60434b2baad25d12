// cancel: a pending request completes CANCELLED at once; a claimed one has its builds
// stopped, and the builds they triggered too. Stopping writes nothing here (the masters end
// the builds), so a cancel refused because Redis could not carry a stop can simply be sent
// again.
import { cancelBuildRequest } from '../../core/data/buildrequests.js';
import { type DataContext, transact } from '../../core/data/transaction.js';
import type { ActionCall } from './action.js';
import { sendControl } from './send.js';

export async function cancel(ctx: DataContext, call: ActionCall): Promise<null> {
  const brid = Number(call.match.args.buildrequestid);
  const outcome = await transact(ctx, (tx) => cancelBuildRequest(tx, brid));
  const reason = typeof call.params.reason === 'string' ? call.params.reason : 'no reason';
  for (const buildid of outcome.buildsToStop)
    await sendControl(ctx.redis, ['control', 'builds', buildid, 'stop'], { reason });
  return null;
}
