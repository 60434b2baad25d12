// Which control actions each resource accepts, and what they do. An action on a resource
// that does not exist is a 404, an action a resource does not have is Buildbot's 501.
import type { Redis } from 'ioredis';
import { type ConnectionPool, sql } from '../../core/db/pool.js';
import type { ForceScheduler } from '../../core/force/parameters.js';
import { invalidCall, notFound, unsupportedAction } from '../errors/catalogue.js';
import type { ActionCall, ControlHandler } from '../http/jsonrpc.js';
import { existsSql } from '../query/compile.js';
import type { Match } from '../registry/paths.js';
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
  redis: Redis;
  forceSchedulers: ReadonlyMap<string, ForceScheduler>;
  onPublishError?: (err: Error) => void;
}

async function mustExist(deps: ActionDeps, match: Match): Promise<void> {
  const [row] = await deps.db.query(sql`SELECT ${existsSql(match.endpoint, match.args)} AS ok`);
  if (!row.ok) throw notFound();
}

export function controlHandlers(deps: ActionDeps) {
  return (match: Match): ControlHandler | null => {
    const { endpoint } = match;
    if (endpoint.collection || !endpoint.actions) return null;
    const resource = endpoint.resource.name;
    return async (call: ActionCall) => {
      await mustExist(deps, match);
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
          return stopBuild(deps, call);
        case 'build:rebuild':
          return rebuild(deps, call);
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
          return workerAction(deps, call);
        default:
          throw unsupportedAction(call.method);
      }
    };
  };
}
