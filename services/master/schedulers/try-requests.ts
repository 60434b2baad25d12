// The master's side of Try_Userpass (../workers/pb/try-userpass.ts asks, over the PB port):
// a try's build set added as a Try_Jobdir's is (./try-buildset.ts), in one transaction with
// the check that the scheduler is enabled (Buildbot unregisters a disabled one's users), and
// the reads `buildbot try --wait` follows its builds with.
import {
  buildOutcome,
  buildsOfRequest,
  type DataContext,
  findBuilderId,
  findSchedulerId,
  schedulerEnabled,
  transact,
} from '../../core/data/index.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { TryRequests } from '../workers/connection.js';
import { addTryBuildset } from './try-buildset.js';

export function tryRequests(ctx: DataContext, log: Logger): TryRequests {
  return {
    add: (s, job, builders, reason) =>
      transact(ctx, async (tx) => {
        if (!(await schedulerEnabled(tx.q, await findSchedulerId(tx, s.name)))) return null;
        const added = await addTryBuildset(tx, s, job, builders, reason, log);
        const requests: { builder: string; brid: number }[] = [];
        for (const builder of builders) {
          const id = await findBuilderId(tx, builder, false);
          const brid = id === null ? undefined : added.brids[id];
          if (brid !== undefined) requests.push({ builder, brid });
        }
        return { bsid: added.bsid, requests };
      }),
    builds: (brid) => buildsOfRequest(ctx.db, brid),
    build: (buildid) => buildOutcome(ctx.db, buildid),
  };
}
