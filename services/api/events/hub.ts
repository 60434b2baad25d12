// The API pod's one subscription to the event bus, fanned out to the pod's own clients. Each
// message from Redis is parsed once; each subscription of the same length as its routing key
// is matched against it; each frame is serialized once per event and shared by every client.
//
// When the subscriber connection comes back after a drop, the events published meanwhile are
// read back from the event stream (by the id of the last one heard) and dispatched before
// what arrives live, so clients see no gap; if they are no longer kept, every client is told
// to reload.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { type BusMessage, EVENTS_LOST_KEY, EVENTS_WITH_IDS_CHANNEL } from '../../core/events/bus.js';
import { isAfter, lastEventId, readSince } from '../../core/events/stream.js';
import { eventOf, heardEvent, sendable } from './heard.js';
import { LogTailer } from './log-lines.js';
import { logLinesOf, matches } from './paths.js';
import type { Client, Hub, HubEvent, HubSettings, Subscription } from './types.js';

/** Messages between API pods (SSE add/remove for a stream another pod holds). */
export const podChannel = (podId: string): string => `flotilla:events:pod:${podId}`;

export class EventHub implements Hub {
  readonly podId = randomUUID();
  readonly consumers = new Set<Client>();
  readonly logs: LogTailer;
  private readonly byLength = new Map<number, Set<Subscription>>();
  private lastId: string | null = null;
  /** The id of the last event sent out (lastId may start from the stream's newest). */
  private lastDispatched: string | null = null;
  /** Live events held while catching up after a reconnection; null when live. */
  private held: HubEvent[] | null = null;
  private podHandler: (msg: unknown) => void = () => {};
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private connectedOnce = false;
  /** Events dispatched since start, for tests and metrics. */
  dispatched = 0;

  constructor(
    readonly redis: Redis,
    private readonly subscriber: Redis,
    readonly settings: HubSettings,
    readonly log: FastifyBaseLogger,
  ) {
    this.logs = new LogTailer(redis, settings.logLinesIntervalMs, log);
  }

  /** Resolves once Redis confirmed the subscription: events flow to clients from then on. */
  ready: Promise<void> = Promise.resolve();
  private stopped = false;

  /** Subscribes to the bus, retrying while Redis is away (the pod serves meanwhile). */
  start(): void {
    // Without a listener, ioredis prints every lost connection to stderr as an unhandled
    // error; the reconnect and catch-up below are the handling, so it is a warning here.
    this.subscriber.on('error', (err: Error) =>
      this.log.warn({ err: err.message }, 'events subscriber: redis error'),
    );
    this.subscriber.on('message', (channel: string, raw: string) => {
      if (channel === EVENTS_WITH_IDS_CHANNEL) this.onBusMessage(raw);
      else if (channel === podChannel(this.podId)) this.onPodMessage(raw);
    });
    this.subscriber.on('ready', () => {
      if (!this.connectedOnce) return;
      this.catchUp().catch((err: Error) => this.log.warn({ err: err.message }, 'events catch-up failed'));
    });
    this.heartbeatTimer = setInterval(() => {
      for (const c of this.consumers) c.heartbeat();
    }, this.settings.pingIntervalMs);
    this.heartbeatTimer.unref();
    if (this.settings.sessionAlive) {
      this.sessionTimer = setInterval(() => void this.checkSessions(), this.settings.sessionCheckIntervalMs);
      this.sessionTimer.unref();
    }
    this.ready = this.subscribeFirst();
  }

  private async subscribeFirst(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.subscriber.subscribe(EVENTS_WITH_IDS_CHANNEL, podChannel(this.podId));
        break;
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'could not subscribe to events; retrying');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    // Where a catch-up after a later drop starts, if no event has arrived by then.
    this.lastId ??= await lastEventId(this.redis).catch(() => null);
    this.connectedOnce = true;
  }

  private sessionTimer: NodeJS.Timeout | null = null;
  private checkingSessions = false;

  /** Disconnects the clients whose session ended (a logout on any pod, a changed user). */
  private async checkSessions(): Promise<void> {
    if (this.checkingSessions) return;
    this.checkingSessions = true;
    try {
      const alive = this.settings.sessionAlive!;
      for (const c of [...this.consumers]) {
        if (c.sessionId === null || c.closed) continue;
        const ok = await alive(c.sessionId, c.user).catch(() => false);
        if (!ok) c.drop('the session ended');
      }
    } finally {
      this.checkingSessions = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.sessionTimer) clearInterval(this.sessionTimer);
    this.logs.stop();
    for (const c of [...this.consumers]) c.release();
    this.subscriber.disconnect();
  }

  onPodMessages(handler: (msg: unknown) => void): void {
    this.podHandler = handler;
  }

  add(sub: Subscription): void {
    const logid = logLinesOf(sub.path);
    if (logid !== null) {
      this.logs.add(sub, logid);
      return;
    }
    const n = sub.pattern.length;
    const set = this.byLength.get(n) ?? new Set();
    this.byLength.set(n, set);
    set.add(sub);
  }

  remove(sub: Subscription): void {
    const logid = logLinesOf(sub.path);
    if (logid !== null) {
      this.logs.remove(sub, logid);
      return;
    }
    const set = this.byLength.get(sub.pattern.length);
    set?.delete(sub);
    if (set?.size === 0) this.byLength.delete(sub.pattern.length);
  }

  toEvent(msg: BusMessage): HubEvent {
    return eventOf(msg);
  }

  /** The number of subscriptions held, log tails included. */
  subscriptionCount(): number {
    let n = this.logs.subscriptionCount();
    for (const set of this.byLength.values()) n += set.size;
    return n;
  }

  /** Each message's key and id are read, its body parsed only for a client (heard.ts). */
  private onBusMessage(raw: string): void {
    const e = heardEvent(raw);
    if (!e) return;
    if (this.held) this.held.push(e);
    else this.dispatch(e);
  }

  private dispatch(e: HubEvent): void {
    if (e.id !== undefined) {
      // Ids on the channel and in the stream rise together (one script adds and publishes),
      // so an id at or before the last one sent out is a repeat: a catch-up and the live
      // channel have both carried one event around a reconnection (events/resume, rarely,
      // in full runs on a loaded machine; the path that repeats it is not pinned down).
      // Dropping it here keeps clients exactly-once whichever path repeated it.
      if (this.lastDispatched !== null && !isAfter(e.id, this.lastDispatched)) return;
      this.lastDispatched = e.id;
      this.lastId = e.id;
    }
    this.dispatched++;
    // A process dropped events it could not publish while Redis was away: every client may
    // have missed some, and only a reload shows it the truth again.
    if (e.key === EVENTS_LOST_KEY) {
      this.log.warn({ lost: (e.message as { lost?: unknown } | null)?.lost }, 'a process dropped events');
      for (const c of this.consumers) c.reloadAll('events were lost while the event bus was away');
      return;
    }
    const subs = this.byLength.get(e.parts.length);
    if (!subs) return;
    for (const sub of subs) if (matches(sub.pattern, e.parts) && sendable(e)) sub.consumer.deliver(sub, e);
  }

  private async catchUp(): Promise<void> {
    if (this.held) return;
    this.held = [];
    try {
      // Once this resolves the channel is subscribed again: what follows arrives live (held).
      await this.subscriber.subscribe(EVENTS_WITH_IDS_CHANNEL, podChannel(this.podId));
      let cursor = this.lastId;
      while (cursor !== null) {
        const page = await readSince(this.redis, cursor);
        if (!page.ok) {
          this.log.warn({ reason: page.reason }, 'events were lost while Redis was away');
          for (const c of this.consumers) c.reloadAll('events were lost while the server was disconnected');
          break;
        }
        for (const msg of page.events) this.dispatch(this.toEvent(msg));
        cursor = page.next;
      }
    } finally {
      const held = this.held ?? [];
      this.held = null;
      const seen = this.lastId;
      for (const e of held) if (e.id === undefined || seen === null || isAfter(e.id, seen)) this.dispatch(e);
    }
  }

  private onPodMessage(raw: string): void {
    try {
      this.podHandler(JSON.parse(raw));
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'bad message between pods');
    }
  }
}
