// When each master's first build started: its build's `new` event as this process hears it on
// the masters' channel, the moment Buildbot counts a build as running (its row written, its
// worker being prepared) and what issue 35's goal 1 names ("its first build running"). Phase A
// prints it beside the first command on a worker, which comes a few statements later; phase S
// (burst.ts) times every start by it.
import { Redis } from 'ioredis';
import { EVENTS_CHANNEL } from '../../services/core/events/bus.js';

const NEW_BUILD = /^builds\/\d+\/new$/;

/** The master id of a bus message that is a build's `new` event, else null. */
export function newBuildMaster(text: string): number | null {
  const msg = JSON.parse(text) as { k?: unknown; m?: { masterid?: unknown } };
  if (typeof msg.k !== 'string' || !NEW_BUILD.test(msg.k)) return null;
  return typeof msg.m?.masterid === 'number' ? msg.m.masterid : null;
}

/**
 * Calls `onStarted` at each build's `new` event heard from now on, with its master's id (the
 * caller keeps what it wants: phase A each master's first, and again after a restart).
 * Resolves once subscribed, with the function that stops listening.
 */
export async function listenBuildsStarted(
  redisUrl: string,
  onStarted: (masterid: number, atMs: number) => void,
): Promise<() => void> {
  const sub = new Redis(redisUrl);
  sub.on('message', (_channel: string, text: string) => {
    const masterid = newBuildMaster(text);
    if (masterid !== null) onStarted(masterid, performance.timeOrigin + performance.now());
  });
  await sub.subscribe(EVENTS_CHANNEL);
  return () => sub.disconnect();
}
