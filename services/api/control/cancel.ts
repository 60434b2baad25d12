// cancel: a pending request completes CANCELLED at once; a claimed one has its builds
// stopped, and the builds they triggered too.
import { cancelBuildRequest } from '../../core/data/buildrequests.js';
import { type DataContext, transact } from '../../core/data/transaction.js';
import { publish } from '../../core/events/bus.js';
import type { ActionCall } from '../http/jsonrpc.js';

export async function cancel(ctx: DataContext, call: ActionCall): Promise<null> {
  const brid = Number(call.match.args.buildrequestid);
  const outcome = await transact(ctx, (tx) => cancelBuildRequest(tx, brid));
  const reason = typeof call.params.reason === 'string' ? call.params.reason : 'no reason';
  for (const buildid of outcome.buildsToStop)
    await publish(ctx.redis, ['control', 'builds', buildid, 'stop'], { reason });
  return null;
}
