// Which control actions each resource accepts, and what they do. An action on a resource
// that does not exist is a 404, an action a resource does not have is Buildbot's 501. The
// resource a path names is found by the read path (its key: a build's id, a worker's...);
// the actions then work on that key through the data operations of core/data.
import type { Redis } from 'ioredis';
import type { ConnectionPool } from '../../core/db/pool.js';
import type { ForceScheduler } from '../../core/force/parameters.js';
import type { RowReader } from '../db-routing/read-pool.js';
import { invalidCall, notFound, unsupportedAction } from '../errors/catalogue.js';
import { entityKey } from '../query/run.js';
import type { Match } from '../registry/paths.js';
import type { ActionCall, ControlHandler } from './action.js';
import { cancel } from './cancel.js';
import { force } from './force.js';
import { setPriority } from './priority.js';
import { rebuild } from './rebuild.js';
import { enableScheduler } from './schedulers.js';
import { stopBuild } from './stop.js';
import { workerAction } from './workers.js';

/** What the API's control actions need (the master's control listener has its own deps). */
export interface ActionDeps {
  db: ConnectionPool;
  /** Where the resource a path names is looked up (the read path's reader). */
  reads: RowReader;
  redis: Redis;
  forceSchedulers: ReadonlyMap<string, ForceScheduler>;
  onPublishError?: (err: Error) => void;
}

export function controlHandlers(deps: ActionDeps) {
  return (match: Match): ControlHandler | null => {
    const { endpoint } = match;
    if (endpoint.collection || !endpoint.actions) return null;
    const resource = endpoint.resource.name;
    return async (call: ActionCall) => {
      const key = await entityKey(deps.reads, match.endpoint, match.args);
      if (key === null) throw notFound();
      // Buildbot answers 200 `result: null` to any other method of a force scheduler or a
      // scheduler; here they are -32601 like an unknown method anywhere else.
      if (!endpoint.actions!.includes(call.method)) {
        // Buildbot fails with a 500 for any build request action but cancel.
        if (resource === 'buildrequest')
          throw invalidCall(`build requests support only: ${endpoint.actions!.join(', ')}`);
        throw unsupportedAction(call.method);
      }
      switch (`${resource}:${call.method}`) {
        case 'build:stop':
          return stopBuild(deps, Number(key), call);
        case 'build:rebuild':
          return rebuild(deps, Number(key));
        case 'buildrequest:cancel':
          return cancel(deps, call);
        case 'buildrequest:set_priority':
          return setPriority(deps, call);
        case 'scheduler:enable':
          return enableScheduler(deps, call);
        case 'forcescheduler:force':
          return force(deps, deps.forceSchedulers, call);
        case 'worker:stop':
        case 'worker:pause':
        case 'worker:unpause':
        case 'worker:kill':
          return workerAction(deps.redis, Number(key), call);
        default:
          throw unsupportedAction(call.method);
      }
    };
  };
}
