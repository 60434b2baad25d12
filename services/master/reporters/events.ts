// The build events reporters hear, from the cluster's event bus (core/events), as the jobs
// they become. Buildbot's generators consume routing keys ('buildrequests', None, 'new'),
// ('buildrequests', None, 'cancel'), ('builds', None, 'new') and ('builds', None, 'finished');
// those are the three-part keys `buildrequests/<brid>/new`... here too.
//
// Every master hears every event and queues its job; the job id (the event and its subject)
// makes the queue keep one, so a report is queued once however many masters run, and still
// queued when the master that produced the event is gone. A build event's job carries the
// build as the event had it: a `new` reported late still reports a build that had just
// started, as Buildbot's reporters report the message they were given.
import type { BusMessage } from '../../core/events/bus.js';

export type ReportEventKind = 'request-new' | 'request-cancel' | 'build-new' | 'build-finished';

export interface ReportJob {
  kind: ReportEventKind;
  buildrequestid: number;
  /** Build events: the build as the event carried it. */
  build?: Record<string, unknown>;
}

const KEY = /^(buildrequests|builds)\/(\d+)\/(new|cancel|finished)$/;

/** The job for a bus message, or null for any message that is not a reporter's event. */
export function reportJobOf(msg: BusMessage): ReportJob | null {
  const m = KEY.exec(msg.k);
  if (!m) return null;
  const entity = msg.m as Record<string, unknown> | null;
  if (typeof entity !== 'object' || entity === null) return null;
  const brid = entity.buildrequestid;
  if (typeof brid !== 'number') return null;
  if (m[1] === 'buildrequests') {
    if (m[3] === 'new') return { kind: 'request-new', buildrequestid: brid };
    if (m[3] === 'cancel') return { kind: 'request-cancel', buildrequestid: brid };
    return null;
  }
  if (typeof entity.buildid !== 'number') return null;
  if (m[3] === 'new') return { kind: 'build-new', buildrequestid: brid, build: entity };
  if (m[3] === 'finished') return { kind: 'build-finished', buildrequestid: brid, build: entity };
  return null;
}

/** The job's id in its reporter's queue: one per event (BullMQ refuses `:` in ids). */
export function reportJobId(job: ReportJob): string {
  return job.build ? `${job.kind}-${job.build.buildid}` : `${job.kind}-${job.buildrequestid}`;
}
