// A process's events go to Redis in the background, in the order their transactions committed.
// A write is acknowledged as soon as PostgreSQL has committed it: while every transaction
// awaited its events' publication, a Redis outage stalled every build (25-26 s of a 30 s
// outage, the redis-30s row of load/results/faults.md), since a worker's output was
// acknowledged only after its events were out and the worker's window filled. Redis carries
// liveness here, never a duty: nothing on a build's path waits for it.
//
// Order. One loop per Redis connection sends the queue from its head, a batch at a time, as
// one pipeline: SCRIPT LOAD, then one EVALSHA of the batch (publish-batch.ts). Redis runs a
// connection's commands in order, so the script is known to the EVALSHA after the load, and no NOSCRIPT fallback
// (bus.ts's publish) can let a later event overtake an earlier one. A batch that fails is sent
// again, after a backoff or as soon as the connection is ready, from the event after the last
// one Redis confirmed; nothing behind it goes first. Consumers depend on this: the API's event
// hub drops an event whose id is not after the last it sent, and a build's `finished` must
// not come before its `new`. The order is per connection, that is per process (one bus
// connection each); events of different processes were never ordered with each other.
//
// At least once: an event that ran in Redis but whose answer was lost with the connection is
// sent again, and then appears twice, under two ids. Events describe state (a build's row as
// it now is), so a repeat shows the same thing twice; nothing counts events.
//
// The bound. At most LIMIT events wait. When Redis is away longer than that many events take
// to produce, the oldest waiting are dropped and counted, and the count goes out first when
// Redis is back, as one EVENTS_LOST_KEY event in their place: API pods tell their clients to
// reload what they show (the reload frame a client gets when the events it missed are no
// longer kept). The oldest go because the newest are nearest to what a reload will show, and
// because the count keeps memory bounded whatever the outage. 20,000 events of a few hundred
// bytes each hold a few MB; the chaos cluster's four builds produce a few thousand in a 30 s
// outage (load/results/faults.md).
import type { Redis } from 'ioredis';
import { settledWithin } from '../lifecycle/within.js';
import { busPayload, EVENTS_LOST_KEY, type RoutingKey } from './bus.js';
import { mastersHear } from './master-kinds.js';
import { batchOutcomes, PUBLISH_BATCH_SCRIPT, PUBLISH_BATCH_SHA, publishBatchArgs } from './publish-batch.js';

export const LIMIT = 20_000;
// Events per pipeline: one round trip each, small enough that a failed batch costs little.
const BATCH = 256;
// Between tries while Redis does not answer: doubling from 100 ms up to 2 s (ioredis itself
// reconnects at most 2 s apart, core/redis.ts), cut short when the connection is ready.
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2000;

interface Item {
  seq: number;
  payload: string;
  /** Its key is a kind masters act on (master-kinds.ts). */
  forMasters: boolean;
}

export interface PublisherOptions {
  limit?: number;
  /** Told once when publishing starts failing, and when events are dropped. */
  onError?: (err: Error) => void;
}

export class EventPublisher {
  private readonly queue: Item[] = [];
  /** The batch on its way to Redis: older than everything in `queue`. */
  private sending: Item[] = [];
  private nextSeq = 0;
  /** Events dropped and not yet announced with an EVENTS_LOST_KEY event. */
  private unannounced = 0;
  /** Every event dropped since the start (overflow, or the connection closed for good). */
  dropped = 0;
  /** Every event Redis confirmed. */
  published = 0;
  private running = false;
  private stopped = false;
  private failing = false;
  private wake: (() => void) | null = null;
  private readonly waiters: { seq: number; resolve: () => void }[] = [];
  private readonly limit: number;
  onError: ((err: Error) => void) | undefined;

  constructor(
    private readonly redis: Redis,
    opts: PublisherOptions = {},
  ) {
    this.limit = opts.limit ?? LIMIT;
    this.onError = opts.onError;
  }

  /** Events waiting or on their way. */
  get pending(): number {
    return this.queue.length + this.sending.length;
  }

  /** Queue the events (in their order, after everything queued before); returns at once. */
  enqueue(events: readonly { key: RoutingKey; message: unknown }[]): void {
    if (events.length === 0) return;
    if (this.stopped) {
      this.dropped += events.length;
      return;
    }
    for (const e of events) {
      let payload: string;
      try {
        payload = busPayload(e.key, e.message);
      } catch (err) {
        // A message JSON cannot carry; the data it describes is committed regardless.
        this.onError?.(err as Error);
        this.dropped++;
        continue;
      }
      this.queue.push({ seq: this.nextSeq++, payload, forMasters: mastersHear(e.key) });
    }
    const over = this.queue.length - this.limit;
    if (over > 0) {
      this.queue.splice(0, over);
      if (this.unannounced === 0)
        this.onError?.(new Error(`events dropped: more than ${this.limit} waiting for Redis`));
      this.unannounced += over;
      this.dropped += over;
      this.settle();
    }
    if (!this.running) void this.drain();
  }

  /**
   * Resolves once every event queued before the call has been published or dropped (or the
   * publisher stopped). While Redis is away that is when it is back: callers that must not
   * wait for ever race it against a limit of their own.
   */
  flushed(): Promise<void> {
    const seq = this.nextSeq - 1;
    if (this.oldestPending() > seq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  /** Stop publishing: what waits is dropped. The loop ends at its next step. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    // A batch on its way counts as dropped now: its reply may never come (ioredis leaves a
    // command pending for good when disconnected while it was reconnecting).
    this.dropped += this.queue.length + this.sending.length;
    this.queue.length = 0;
    this.sending = [];
    this.wake?.();
    this.settle();
  }

  private oldestPending(): number {
    return this.sending[0]?.seq ?? this.queue[0]?.seq ?? this.nextSeq;
  }

  private settle(): void {
    const oldest = this.oldestPending();
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.seq < oldest) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  private async drain(): Promise<void> {
    this.running = true;
    let delay = RETRY_FIRST_MS;
    try {
      while (!this.stopped && (this.queue.length > 0 || this.unannounced > 0)) {
        // A connection closed for good (quit or disconnect) will never take them.
        if (this.redis.status === 'end') {
          this.stop();
          break;
        }
        this.sending = this.queue.splice(0, BATCH);
        const ok = await this.send();
        if (ok) {
          delay = RETRY_FIRST_MS;
          this.failing = false;
          continue;
        }
        if (this.stopped) break;
        await this.pause(delay);
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    } catch (err) {
      // Nothing above should throw; if something does, the events waiting are the price,
      // not an unhandled rejection.
      this.onError?.(err as Error);
      this.stop();
    } finally {
      this.running = false;
      this.dropped += this.sending.length;
      this.sending = [];
      // Stopped while a batch was out: what came back unsent is dropped too.
      if (this.stopped) {
        this.dropped += this.queue.length;
        this.queue.length = 0;
      }
      this.settle();
    }
  }

  /**
   * Send the batch in `sending` (after an EVENTS_LOST_KEY event when some were dropped);
   * whatever Redis did not confirm goes back to the head of the queue. True when all went.
   */
  private async send(): Promise<boolean> {
    const lost = this.unannounced;
    const marks = lost > 0 ? 1 : 0;
    const batch = this.sending;
    const events = marks ? [lostMark(lost), ...batch] : batch;
    const pipe = this.redis
      .pipeline()
      .script('LOAD', PUBLISH_BATCH_SCRIPT)
      .evalsha(PUBLISH_BATCH_SHA, ...publishBatchArgs(events));
    let failure: Error | null = null;
    let replies: [Error | null, unknown][] = [];
    try {
      replies = (await pipe.exec()) ?? [];
    } catch (err) {
      failure = err as Error;
    }
    if (this.stopped) return false;
    // The script's reply after the SCRIPT LOAD's: the lost mark (if sent), then each event's
    // outcome, in order (publish-batch.ts); a reply missing counts as a failure of all.
    const call = replies[1];
    const results = batchOutcomes(
      events.length,
      call?.[1],
      call ? call[0] : (failure ?? new Error('no reply')),
    );
    let last = -1;
    results.forEach((err, i) => {
      if (!err) last = i;
    });
    failure ??= results.find((err) => err) ?? null;
    if (marks && !results[0]) this.unannounced -= lost;
    const confirmed = Math.max(0, last + 1 - marks);
    // An event that failed before the last confirmed one cannot be sent again without
    // overtaking that one: it is dropped and announced. (No run has shown one: on one
    // connection a failure fails everything after it.)
    const skipped = results.slice(marks, last + 1).filter((err) => err).length;
    this.published += confirmed - skipped;
    this.unannounced += skipped;
    this.dropped += skipped;
    const unsent = batch.slice(confirmed);
    this.sending = [];
    if (unsent.length > 0) {
      this.queue.unshift(...unsent);
      const over = this.queue.length - this.limit;
      if (over > 0) {
        this.queue.splice(0, over);
        this.unannounced += over;
        this.dropped += over;
      }
    }
    this.settle();
    if (failure && !this.failing) {
      this.failing = true;
      this.onError?.(failure);
    }
    return failure === null;
  }

  /** Wait `ms`, or until the connection is ready again, or until stopped. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.redis.once('ready', done);
      this.wake = done;
    });
  }
}

/** The EVENTS_LOST_KEY event that stands for `lost` dropped events, as a batch carries it. */
function lostMark(lost: number): { payload: string; forMasters: boolean } {
  const key = EVENTS_LOST_KEY.split('/');
  return { payload: busPayload(key, { lost }), forMasters: mastersHear(key) };
}

const publishers = new WeakMap<Redis, EventPublisher>();

/** The publisher of this connection: one per connection, so that one order holds for it. */
export function publisherFor(redis: Redis, onError?: (err: Error) => void): EventPublisher {
  let p = publishers.get(redis);
  if (!p) {
    p = new EventPublisher(redis, onError ? { onError } : {});
    publishers.set(redis, p);
  } else if (onError && !p.onError) p.onError = onError;
  return p;
}

/**
 * How long a stopping process waits for its last events to go out: long enough for a Redis
 * that answers, short beside a shutdown's grace period when it does not.
 */
export const EVENTS_FLUSH_MS = 5000;

/**
 * Wait until the events queued on this connection so far are out, for at most `limitMs`
 * (a stopping process sends its last events, but does not wait for an absent Redis).
 * True when they went.
 */
export async function flushEvents(redis: Redis, limitMs: number): Promise<boolean> {
  const p = publishers.get(redis);
  if (!p || p.pending === 0) return true;
  return settledWithin(p.flushed(), limitMs);
}
