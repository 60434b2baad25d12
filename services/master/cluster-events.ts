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
  /**
   * Work may be waiting: the distributor (started after this) looks for it, at the builders
   * named (a request's), or at every builder.
   */
  wake: (builderids?: number[]) => void;
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

type WorkerAction = 'pause' | 'unpause' | 'stop' | 'kill';
const WORKER_ACTIONS: ReadonlySet<string> = new Set<WorkerAction>(['pause', 'unpause', 'stop', 'kill']);

/** What a master does about an event of the cluster. */
export type ClusterAction =
  | { do: 'wake'; request?: { brid: number; traced: boolean } }
  | { do: 'stop-build'; buildid: number }
  | { do: 'worker'; workerid: number; action: WorkerAction };

/**
 * The action for an event of this key, or null for nothing: `handle`'s key filter, apart so
 * that a test checks it against the kinds masters hear (core/events/master-kinds.ts).
 */
export function clusterActionOf(k: string): ClusterAction | null {
  // Events some process could not publish (its queue overflowed while Redis was away): any of
  // them may have been a new or handed-back request, so look for work now rather than at the
  // next poll.
  if (k === EVENTS_LOST_KEY) return { do: 'wake' };
  const parts = k.split('/');
  if (parts[0] === 'buildrequests' && parts.length === 3 && (parts[2] === 'new' || parts[2] === 'unclaimed'))
    return { do: 'wake', request: { brid: Number(parts[1]), traced: parts[2] === 'new' } };
  if (parts.length !== 4 || parts[0] !== 'control') return null;
  if (parts[1] === 'builds' && parts[3] === 'stop') return { do: 'stop-build', buildid: Number(parts[2]) };
  if (parts[1] === 'worker' && WORKER_ACTIONS.has(parts[3]!))
    return { do: 'worker', workerid: Number(parts[2]), action: parts[3] as WorkerAction };
  return null;
}

// The message's body is read only for the keys that use it: the bus parses it when asked
// (events/bus.ts' HeardMessage), and most of what a master hears are other builds' events.
async function handle(deps: ClusterEventsDeps, msg: BusMessage): Promise<void> {
  const action = clusterActionOf(msg.k);
  if (!action) return;
  const body = () => (msg.m ?? {}) as { reason?: unknown; results?: unknown; builderid?: unknown };
  const reasonOf = () => {
    const { reason } = body();
    return typeof reason === 'string' ? reason : 'no reason';
  };
  if (action.do === 'wake') {
    const tp = action.request?.traced ? msg.tp : undefined;
    if (action.request && typeof tp === 'string') deps.traces?.remember(action.request.brid, tp);
    // A request's event names its builder: only that builder can have new work (the body is
    // the request's row; a body without one wakes every builder).
    const { builderid } = action.request ? body() : {};
    deps.wake(typeof builderid === 'number' ? [builderid] : undefined);
  } else if (action.do === 'stop-build') {
    const { results } = body();
    deps.runner.stop(action.buildid, reasonOf(), typeof results === 'number' ? results : undefined);
  } else {
    const { workerid } = action;
    const name = deps.workerName(workerid);
    const conn = name ? deps.workers.get(name) : undefined;
    if (!name || !conn) return;
    switch (action.action) {
      case 'pause':
      case 'unpause': {
        const pause = action.action === 'pause';
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
