// Catching up on build ends that no master heard. A report job is queued when a master hears
// its event (index.ts), and the event bus keeps nothing for a master that is not there: a build
// that ended while no master with reporters ran (all were down, or the one that would have
// queued its job died first) would never have its end reported, and its forge would show it
// pending for ever. So each master, when its reporters start and every CATCH_UP_MS after, asks
// the database for finished builds whose end a reporter has not delivered, on requests it has
// reported before (core/data/reporter-deliveries.ts), and queues their jobs. The job id is the
// event's, so a job already queued (by the live path, another master, an earlier pass) is not
// queued again, and delivery positions keep a report from going out twice or out of order:
// delivery is at least once, whoever heard what.
import type { Queue } from 'bullmq';
import { finishedBuildsNotDelivered } from '../../core/data/index.js';
import type { Queryable } from '../../core/db/pool.js';
import { type ReportJob, reportJobId } from './events.js';
import { type Reporter, wants } from './reporter.js';

export const CATCH_UP_MS = 60_000;
/** Builds whose delivery state was last touched longer ago than this are not looked at. */
export const CATCH_UP_WINDOW_SECONDS = 24 * 3600;
// At most this many builds per reporter and pass, the newest first.
const BATCH = 200;

/** One pass over every reporter that reports build ends: how many undelivered ends it found. */
export async function catchUp(db: Queryable, queues: Map<Reporter, Queue<ReportJob>>): Promise<number> {
  let found = 0;
  for (const [reporter, queue] of queues) {
    if (!wants(reporter, 'build-finished')) continue;
    const builds = await finishedBuildsNotDelivered(db, reporter.name, CATCH_UP_WINDOW_SECONDS, BATCH);
    for (const build of builds) {
      const job: ReportJob = {
        kind: 'build-finished',
        buildrequestid: build.buildrequestid as number,
        build,
      };
      await queue.add(job.kind, job, { jobId: reportJobId(job) });
      found++;
    }
  }
  return found;
}
