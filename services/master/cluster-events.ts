// What a master does with the cluster's events: new or handed-back requests, and the mark of
// events lost (flotilla/events/lost), wake the distributor; stop messages reach the builds it runs; worker actions reach the workers
// connected to it. All arrive on the event bus's Redis channel.
import { type DataContext, setWorkerState, transact } from '../core/data/index.js';
import { type BusMessage, EVENTS_LOST_KEY, type Subscribe } from '../core/events/bus.js';
import type { Logger } from '../core/telemetry/logger.js';
import type { BuildRunner } from './builds/runner.js';
import type { RequestTraces } from './trace-links.js';
import type { ConnectedWorkers } from './workers/connection.js';

export interface ClusterEventsDeps {
  /** The process's event subscription (shared with its schedulers), and when it is live. */
  subscribe: Subscribe & { ready: Promise<void> };
  ctx: DataContext;
  runner: BuildRunner;
  /** Work may be waiting: the distributor (started after this) looks for it. */
  wake: () => void;
  workers: ConnectedWorkers;
  /** Worker names by id, for the workers this master knows. */
  workerName: (id: number) => string | undefined;
  paused: Set<string>;
  /** Where the traces of new requests are kept for their builds. */
  traces?: RequestTraces;
  log: Logger;
}

export async function listenToCluster(deps: ClusterEventsDeps): Promise<() => Promise<void>> {
  const { log } = deps;
  const stop = deps.subscribe((msg) => {
    handle(deps, msg).catch((err) =>
      log.warn({ key: msg.k, err: (err as Error).message }, 'event handling failed'),
    );
  });
  await deps.subscribe.ready;
  return async () => stop();
}

// The message's body is read only for the keys that use it: the bus parses it when asked
// (events/bus.ts' HeardMessage), and most of what a master hears are other builds' events.
async function handle(deps: ClusterEventsDeps, msg: BusMessage): Promise<void> {
  const { k } = msg;
  const parts = k.split('/');
  const body = () => (msg.m ?? {}) as { reason?: unknown; results?: unknown };
  const reasonOf = () => {
    const { reason } = body();
    return typeof reason === 'string' ? reason : 'no reason';
  };
  // Events some process could not publish (its queue overflowed while Redis was away): any of
  // them may have been a new or handed-back request, so look for work now rather than at the
  // next poll.
  if (k === EVENTS_LOST_KEY) {
    deps.wake();
  } else if (
    parts[0] === 'buildrequests' &&
    parts.length === 3 &&
    (parts[2] === 'new' || parts[2] === 'unclaimed')
  ) {
    const tp = parts[2] === 'new' ? msg.tp : undefined;
    if (typeof tp === 'string') deps.traces?.remember(Number(parts[1]), tp);
    deps.wake();
  } else if (parts[0] === 'control' && parts[1] === 'builds' && parts[3] === 'stop') {
    const { results } = body();
    deps.runner.stop(Number(parts[2]), reasonOf(), typeof results === 'number' ? results : undefined);
  } else if (parts[0] === 'control' && parts[1] === 'worker') {
    const name = deps.workerName(Number(parts[2]));
    const conn = name ? deps.workers.get(name) : undefined;
    if (!name || !conn) return;
    const workerid = Number(parts[2]);
    switch (parts[3]) {
      case 'pause':
      case 'unpause': {
        const pause = parts[3] === 'pause';
        if (pause) deps.paused.add(name);
        else deps.paused.delete(name);
        await transact(deps.ctx, (tx) => setWorkerState(tx, workerid, pause, false));
        if (!pause) deps.wake();
        break;
      }
      case 'stop': {
        // Graceful: no new builds; disconnect once the running ones are done.
        const reason = reasonOf();
        deps.paused.add(name);
        await transact(deps.ctx, (tx) => setWorkerState(tx, workerid, true, true));
        void deps.runner.whenWorkerIdle(name).then(() => conn.shutdown(`stopped: ${reason}`));
        break;
      }
      case 'kill':
        conn.shutdown(`killed: ${reasonOf()}`);
        break;
    }
  }
}
