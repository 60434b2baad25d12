// The event bus: every event (Buildbot routing key + message) and every control message is
// published on Redis, so that any API pod or master receives what any other produced. Events are published after their transaction commits; losing Redis loses
// liveness, never data.
//
// Each event is also appended to a capped Redis Stream (EVENTS_STREAM), so that a client
// which lost its connection can ask for what it missed since the last event id it saw
// (stream.ts). API pods hear every event on EVENTS_WITH_IDS_CHANNEL, where each message also
// carries its stream id; EVENTS_CHANNEL carries Buildbot's {k, m} of the kinds masters act on
// only (master-kinds.ts). Append and both publishes happen in one Lua script: Redis runs
// scripts one at a time, so the channels carry events in stream order, which is what makes
// "everything after id X" mean the same live and replayed.
import { createHash } from 'node:crypto';
import { context, isSpanContextValid, propagation, trace } from '@opentelemetry/api';
import type { Redis } from 'ioredis';
import { mastersHear } from './master-kinds.js';

export const EVENTS_CHANNEL = 'flotilla:events';
export const EVENTS_WITH_IDS_CHANNEL = 'flotilla:events:with-ids';
export const EVENTS_STREAM = 'flotilla:events:stream';
/**
 * The resume window, in events (trimmed approximately, by whole stream nodes). A build of
 * ten steps produces about 150 events, so this keeps a few hundred builds' worth; messages
 * average a few hundred bytes, so the stream stays in the tens of MB.
 */
export const EVENTS_STREAM_MAXLEN = 50_000;

export type RoutingKey = readonly (string | number)[];

/**
 * Not an event but the mark of events a process could not publish (events/publisher.ts: its
 * queue overflowed while Redis was away), at the place in its order where they were: whoever
 * shows what events describe must reload it. Message: `{ lost: <how many> }`.
 */
export const EVENTS_LOST_KEY = 'flotilla/events/lost';

export interface BusMessage {
  /** Routing key joined with '/', as Buildbot's /ws shows it (`builds/12/new`). */
  k: string;
  m: unknown;
  /** The event's id in EVENTS_STREAM (on EVENTS_WITH_IDS_CHANNEL and when read back). */
  id?: string;
  /**
   * The W3C trace context of the work that produced the event (a traceparent), so that what a
   * master does about it (a build for a new request) continues the same trace.
   */
  tp?: string;
}

/** The active trace context as a traceparent, if there is one. */
function traceparent(): string | undefined {
  const active = context.active();
  // No valid span context: the W3C propagator, the one that writes `traceparent`, writes
  // nothing, so it is not asked. Most events have none (a build of a request that carried no
  // trace), and asking cost 0.7% of the masters' busy samples outside socket writes in phase
  // S (load/results/fleet.md, 2026-11-29 03:38).
  const span = trace.getSpanContext(active);
  if (!span || !isSpanContextValid(span)) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  return carrier.traceparent;
}

export function keyString(key: RoutingKey): string {
  return key.map(String).join('/');
}

// KEYS[1] the stream; ARGV: maxlen, the JSON {k, m}, the masters' channel (empty for an event
// no master acts on: not published there), the channel with ids. The second channel's text
// is the same JSON with `"id":"<stream id>"` added as its last key. The script's text differs
// from the one that published on both channels always, so its SHA does too: publishers of
// either version load their own (a rolling upgrade runs both; master-kinds.ts).
const PUBLISH_SCRIPT = `
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[2])
if ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[3], ARGV[2]) end
redis.call('PUBLISH', ARGV[4], string.sub(ARGV[2], 1, -2) .. ',"id":"' .. id .. '"}')
return id`;
const PUBLISH_SHA = createHash('sha1').update(PUBLISH_SCRIPT).digest('hex');

/**
 * The event as the bus carries it (JSON of a BusMessage), with the active trace context: made
 * when the event happens, so that an event published later (events/publisher.ts) still
 * carries the trace of the work that produced it.
 */
export function busPayload(key: RoutingKey, message: unknown): string {
  const tp = traceparent();
  const payload: BusMessage = { k: keyString(key), m: message, ...(tp ? { tp } : {}) };
  return JSON.stringify(payload);
}

/**
 * PUBLISH_SCRIPT's keys and arguments for one payload (`numkeys` first, as EVAL takes them);
 * `forMasters`: whether its key is a kind masters act on (master-kinds.ts' mastersHear).
 */
export function publishArgs(payload: string, forMasters: boolean): [number, ...string[]] {
  const masters = forMasters ? EVENTS_CHANNEL : '';
  return [1, EVENTS_STREAM, String(EVENTS_STREAM_MAXLEN), payload, masters, EVENTS_WITH_IDS_CHANNEL];
}

export { PUBLISH_SCRIPT, PUBLISH_SHA };

/** Appends the event to the stream and publishes it now; resolves with its id. */
export async function publish(redis: Redis, key: RoutingKey, message: unknown): Promise<string> {
  const [, ...args] = publishArgs(busPayload(key, message), mastersHear(key));
  try {
    return (await redis.evalsha(PUBLISH_SHA, 1, ...args)) as string;
  } catch (err) {
    if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
    return (await redis.eval(PUBLISH_SCRIPT, 1, ...args)) as string;
  }
}

/** A message from EVENTS_CHANNEL, or null for anything that is not one. */
export function parseBusMessage(raw: string): BusMessage | null {
  let msg: unknown;
  try {
    msg = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof msg !== 'object' || msg === null || typeof (msg as BusMessage).k !== 'string') return null;
  return msg as BusMessage;
}

/**
 * The key of a payload as busPayload writes it (`{"k":"<key>",...`), read from the text's
 * start without parsing the rest; null when the text is not of that form (a key with an
 * escape in it included): then it is parsed whole.
 */
export function leadingKey(raw: string): string | null {
  if (!raw.startsWith('{"k":"')) return null;
  const end = raw.indexOf('"', 6);
  if (end < 0) return null;
  const k = raw.slice(6, end);
  return k.includes('\\') ? null : k;
}

/**
 * A message heard on EVENTS_CHANNEL: its key read from the text's start, the rest parsed the
 * first time a handler reads `m`, `tp` or `id`. Every master hears every event of the kinds
 * masters act on, and each handler wants few of them; a publisher of an earlier version sends
 * it every event of the cluster (master-kinds.ts), whose steps' and logs' events are then never
 * parsed. Measured (load/results/fleet.md,
 * 2026-11-29 03:38, phase S with MASTER_CPU_PROF): parsing every message and its handlers were
 * 4.7% of the masters' busy samples outside the socket writes.
 */
class HeardMessage implements BusMessage {
  private whole: BusMessage | null | undefined;
  constructor(
    readonly k: string,
    private readonly raw: string,
  ) {}
  private parsed(): BusMessage | null {
    if (this.whole === undefined) this.whole = parseBusMessage(this.raw);
    return this.whole;
  }
  get m(): unknown {
    return this.parsed()?.m;
  }
  get tp(): string | undefined {
    return this.parsed()?.tp;
  }
  get id(): string | undefined {
    return this.parsed()?.id;
  }
}

/** Hand each message of the event channel to a handler; returns the function that stops it. */
export type Subscribe = (handler: (msg: BusMessage) => void) => () => void;

/**
 * A Subscribe over a Redis connection in subscriber mode, shared by everything in a process
 * that listens (a master's control and its schedulers): one listener parses each message
 * once (its key; the rest when asked: HeardMessage) and hands it to every handler. `ready`
 * settles once the channel is subscribed.
 */
export function busSubscription(
  subscriber: Redis,
  onError?: (err: Error) => void,
): Subscribe & { ready: Promise<void> } {
  const handlers = new Set<(msg: BusMessage) => void>();
  subscriber.on('message', (channel: string, raw: string) => {
    if (channel !== EVENTS_CHANNEL || handlers.size === 0) return;
    const k = leadingKey(raw);
    const msg = k === null ? parseBusMessage(raw) : new HeardMessage(k, raw);
    if (msg) for (const h of handlers) h(msg);
  });
  const ready = subscriber.subscribe(EVENTS_CHANNEL).then(
    () => {},
    (err: Error) => onError?.(err),
  );
  // Subscribed again on every ready connection, as the API's hub does: ioredis restores a
  // subscription after a reconnect only from what it knew when the connection closed, and a
  // full suite saw a subscriber ready on the primary that the server counted no subscriber
  // for (test/core/redis-sentinel.test.ts, twice). SUBSCRIBE to a channel already held is a
  // no-op.
  subscriber.on('ready', () => {
    subscriber.subscribe(EVENTS_CHANNEL).catch((err: Error) => onError?.(err));
  });
  const subscribe = (handler: (msg: BusMessage) => void) => {
    handlers.add(handler);
    return () => {
      handlers.delete(handler);
    };
  };
  return Object.assign(subscribe, { ready });
}
