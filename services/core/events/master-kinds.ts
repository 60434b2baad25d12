// The events a master acts on: the only ones published on EVENTS_CHANNEL, the channel every
// master subscribes to (bus.ts). Everything else (a build's steps and logs, most of what the
// cluster produces) goes to the stream and to EVENTS_WITH_IDS_CHANNEL only, which API pods
// read for /ws and SSE. Before, each master received every event, read it off its socket and
// had ioredis split it, and Redis copied it to each. Measured (load/results/fleet.md,
// 2026-11-29 05:53-06:25): a build start's events on this channel 23 -> 1, what Redis sends
// its clients 39.5 -> 15.6 KiB a start; hearing a start's 23 events cost a master 61-69 us of
// CPU, its one now 3 us (load/bench/hear-cost.ts), 0.2 ms a start across three masters, under
// phase S's noise on the shared machine (neither the masters' nor Redis's CPU a start moved
// measurably there). It grows with a build's events and with the number of masters.
//
// Each kind names the handlers that read it; test/master/master-kinds.test.ts drives
// every master handler's key filter with the keys the product publishes and fails when one
// acts on a key this list does not carry.
//
// A rolling upgrade. Old publishers (API pods, masters of an earlier version) publish every
// event on EVENTS_CHANNEL: a new master filters what it hears, as it always did. An old
// master beside new publishers hears only these kinds, so this list must hold every kind
// that any master still running in a rollout acts on: a kind is taken out only in a version
// after the last master that read it, and a handler that starts reading a kind adds it here
// in the same change (its new master hears it from new publishers; old ones send all).
// Anything else listening on EVENTS_CHANNEL outside the masters must read
// EVENTS_WITH_IDS_CHANNEL instead, which carries every event.

/**
 * Each kind as its key's shape (its segments, `*` standing for any one segment: an id, a name)
 * and the master handlers that act on it.
 */
export const MASTER_KINDS = {
  'flotilla/events/lost': 'cluster-events (wake), schedulers/manager (tick), reporters/index (catch up)',
  'buildrequests/*/new': 'cluster-events (wake), reporters/events',
  'buildrequests/*/unclaimed': 'cluster-events (wake)',
  'buildrequests/*/cancel': 'reporters/events',
  'builds/*/new': 'reporters/events',
  'builds/*/finished': 'reporters/events',
  'buildsets/*/new': 'schedulers/manager (dependent schedulers)',
  'buildsets/*/complete': 'schedulers/manager (dependent schedulers), builds/steps/trigger',
  'changes/*/new': 'schedulers/manager, old-build-canceller',
  'schedulers/*/updated': 'schedulers/manager (enabled or not)',
  'control/builds/*/stop': 'cluster-events (the owning master stops it)',
  'control/worker/*/*': 'cluster-events (pause, unpause, stop, kill)',
  'control/locks/*/released': 'builds/locks (waiters woken)',
} as const;

/** The kinds by first segment, each as its segments. */
const byHead = new Map<string, string[][]>();
for (const pattern of Object.keys(MASTER_KINDS)) {
  const segments = pattern.split('/');
  const list = byHead.get(segments[0]!) ?? [];
  list.push(segments);
  byHead.set(segments[0]!, list);
}

/**
 * Whether masters hear an event of this key (a RoutingKey: bus.ts imports this file, not the
 * other way round). Called on every event a process publishes, so it looks up the key's first
 * segment and compares segments, without joining or splitting.
 */
export function mastersHear(key: readonly (string | number)[]): boolean {
  const kinds = byHead.get(String(key[0]));
  if (!kinds) return false;
  return kinds.some(
    (segments) =>
      segments.length === key.length &&
      segments.every((s, i) => i === 0 || s === '*' || s === String(key[i])),
  );
}
