// One report job run: the event's position is claimed for (reporter, request), the build
// dictionary read, the generators asked, the reports sent, and the position recorded.
//
// What happens to each outcome:
// - superseded (this event or a later one of the request was delivered): nothing is sent, so
//   a "started" retried after "finished" went out never sets a forge back to pending;
// - busy (another event of the request is being delivered): the job waits a moment, without
//   using up an attempt, and claims again;
// - sent: the position is recorded; a master killed between the send and the record sends
//   the same status again when the job is retried (at least once, never out of order);
// - a failure worth a retry (a 5xx, no connection): the lease is let go and the job fails,
//   retried with backoff; a failure that would fail the same way again (a 4xx): given up.
// Order: a build's start waits while its request's pending report is still queued, and its end
// while its start's is, so a forge hears them in order even when the events come a few
// milliseconds apart; a report that failed for good no longer holds up the next one.
// A report never touches its build: the build finished long before, whatever happens here.
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { MasterConfig } from '../../core/config/master-config.js';
import {
  claimDelivery,
  completeDelivery,
  type DeliveryKey,
  deliveryPosition,
  releaseDelivery,
} from '../../core/data/index.js';
import type { Queryable } from '../../core/db/pool.js';
import { loadDetails } from './details.js';
import { type ReportJob, reportJobId } from './events.js';
import { DeliveryError } from './http-client.js';
import type { Report } from './report.js';
import { needs, type Reporter } from './reporter.js';

// Longer than one attempt can take (a few requests of REQUEST_TIMEOUT_MS each), so a live
// holder keeps its lease; a dead one's is free again this long after it died.
export const LEASE_SECONDS = 120;
// A report that must wait (busy, or behind an earlier one) looks again this long after.
export const BUSY_RETRY_MS = 500;

export type DeliveryOutcome = 'sent' | 'nothing' | 'superseded' | 'gone';

export function positionOf(job: ReportJob): number {
  switch (job.kind) {
    case 'request-new':
      return deliveryPosition.requestNew;
    case 'request-cancel':
      return deliveryPosition.requestCancel;
    case 'build-new':
      return deliveryPosition.buildNew(job.build!.buildid as number);
    case 'build-finished':
      return deliveryPosition.buildFinished(job.build!.buildid as number);
  }
}

/** The job of the event reported before this one, for the same request. */
export function predecessorJobId(job: ReportJob): string | null {
  switch (job.kind) {
    case 'build-new':
      return reportJobId({ kind: 'request-new', buildrequestid: job.buildrequestid });
    case 'build-finished':
      return reportJobId({ kind: 'build-new', buildrequestid: job.buildrequestid, build: job.build! });
    default:
      return null;
  }
}

export interface DeliverDeps {
  db: Queryable;
  config: MasterConfig;
  reporter: Reporter;
  /** Is the job of this id in the reporter's queue, still to run (waiting, active, delayed)? */
  queued: (jobId: string) => Promise<boolean>;
}

async function later(job: Job<ReportJob>, token: string | undefined): Promise<never> {
  await job.moveToDelayed(Date.now() + BUSY_RETRY_MS, token);
  throw new DelayedError();
}

export async function deliver(
  deps: DeliverDeps,
  job: Job<ReportJob>,
  token?: string,
): Promise<DeliveryOutcome> {
  const { reporter, config } = deps;
  const data = job.data;
  const key: DeliveryKey = { reporter: reporter.name, buildrequestid: data.buildrequestid };
  const position = positionOf(data);
  // The job's id is the event's: a retry of this job (here or on another master) takes its
  // own lease back at once; another event's job waits for it.
  const holder = job.id ?? `${data.kind}-${data.buildrequestid}`;
  const before = predecessorJobId(data);
  if (before && (await deps.queued(before))) return later(job, token);
  const claim = await claimDelivery(deps.db, key, position, holder, LEASE_SECONDS);
  if (claim === 'superseded') return 'superseded';
  if (claim === 'busy') return later(job, token);
  try {
    const details = await loadDetails(deps.db, config, config.buildbotURL, data, needs(reporter, data.kind));
    if (!details) {
      await completeDelivery(deps.db, key, position, holder);
      return 'gone';
    }
    const settings = { title: config.title, buildbotURL: config.buildbotURL, users: details.users };
    const reports = reporter.generators
      .filter((g) => g.wants(data.kind))
      .map((g) => g.generate(data.kind, details.build, settings))
      .filter((r): r is Report => r !== null);
    const sent = reports.length ? await reporter.sender.send(reports) : 0;
    await completeDelivery(deps.db, key, position, holder);
    return sent > 0 ? 'sent' : 'nothing';
  } catch (err) {
    await releaseDelivery(deps.db, key, holder).catch(() => {
      // The lease expires on its own.
    });
    if (err instanceof DeliveryError && !err.retryable) throw new UnrecoverableError(err.message);
    throw err;
  }
}
