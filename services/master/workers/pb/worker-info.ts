// getWorkerInfo over PB with the fallbacks Buildbot 3.7's master has for older workers
// (buildbot/worker/protocols/pb.py, remoteGetWorkerInfo): a worker without getWorkerInfo
// (NoSuchMethod) is told so by a print, then asked getSlaveInfo; if that answer holds
// slave_commands it is renamed worker_commands and that is all; else getCommands and
// getVersion are asked one by one, each skipped when the worker lacks it. Any other error
// fails the call, as in Buildbot.
import type { BuildbotWorkerInfo } from '../msgpack/messages.js';
import type { RemoteReference } from './broker.js';
import { type JellyValue, RemoteFailure } from './jelly.js';
import { fromJelly } from './values.js';

const NO_SUCH_METHOD = 'twisted.spread.flavors.NoSuchMethod';

/** The print Buildbot sends a worker that lacks getWorkerInfo. */
export const FALLBACK_MESSAGE =
  'buildbot-slave detected, failing back to deprecated buildslave API. (Ignoring missing getWorkerInfo method.)';

/** The answer, or undefined when the worker has no such method. */
async function optional(mind: RemoteReference, method: string): Promise<JellyValue | undefined> {
  try {
    return await mind.callRemote(method);
  } catch (err) {
    if (err instanceof RemoteFailure && err.type === NO_SUCH_METHOD) return undefined;
    throw err;
  }
}

const asObject = (v: unknown): BuildbotWorkerInfo =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as BuildbotWorkerInfo) : {};

export async function pbWorkerInfo(mind: RemoteReference): Promise<BuildbotWorkerInfo> {
  const info = await optional(mind, 'getWorkerInfo');
  if (info !== undefined) return asObject(fromJelly(info));
  await mind.callRemoteKw('print', [], { message: FALLBACK_MESSAGE });
  const old = asObject(fromJelly((await optional(mind, 'getSlaveInfo')) ?? null));
  if ('slave_commands' in old) {
    old.worker_commands = old.slave_commands as Record<string, string>;
    delete old.slave_commands;
    return old;
  }
  const commands = await optional(mind, 'getCommands');
  if (commands !== undefined) old.worker_commands = fromJelly(commands) as Record<string, string>;
  const version = await optional(mind, 'getVersion');
  if (version !== undefined) old.version = fromJelly(version) as string;
  return old;
}
