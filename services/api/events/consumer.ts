// One client of the event endpoints (a /ws connection or an SSE stream) and its
// subscriptions. What both share lives here: per-path subscriptions, authorization of every
// event, the replay of missed events when a subscription resumes, and the bound on what may
// wait to be sent. ws.ts and sse.ts only frame the messages and drive their transport.
import { EVENTS_LOST_KEY } from '../../core/events/bus.js';
import { isAfter, readSince } from '../../core/events/stream.js';
import { logLinesOf, matches, parsePattern } from './paths.js';
import type { Client, Hub, HubEvent, Subscription, UserInfo } from './types.js';

// Live events held back while one subscription replays; more means the client cannot keep up.
const MAX_HELD = 10_000;

export type SubscribeResult = 'subscribed' | 'already' | 'too many' | 'too many logs';

export abstract class Consumer implements Client {
  readonly subscriptions = new Map<string, Subscription>();
  closed = false;
  /** The logged-in session the client came with (checked again while it stays). */
  sessionId: string | null = null;
  /** How many of the subscriptions are logs' live lines (capped apart: each tails a stream). */
  private logTails = 0;
  /** Events whose authorization is still being decided, and those behind them, in order. */
  private readonly waiting: { decision: boolean | Promise<boolean>; act: (ok: boolean) => void }[] = [];

  constructor(
    protected readonly hub: Hub,
    readonly user: UserInfo,
  ) {
    hub.consumers.add(this);
  }

  /** Hands one frame to the transport. */
  protected abstract send(frame: Buffer | string): void;
  /** Bytes accepted by send() and not yet written to the socket. */
  protected abstract buffered(): number;
  protected abstract eventFrame(e: HubEvent): Buffer | string;
  protected abstract reloadFrame(path: string, reason: string): string;
  /** Ends the connection, telling the client why where the transport can. */
  protected abstract end(reason: string): void;
  /** Called every ping interval. */
  abstract heartbeat(): void;

  /**
   * Starts consuming `path`. With `since` (an event id), the events after it that match the
   * path are sent first, then live ones, with neither gap nor repeat; when the events after
   * `since` are no longer kept, a reload frame is sent instead and the subscription goes live.
   */
  subscribe(path: string, since: string | null): SubscribeResult {
    if (this.subscriptions.has(path)) return 'already';
    if (this.subscriptions.size >= this.hub.settings.maxSubscriptions) return 'too many';
    const tail = logLinesOf(path) !== null;
    if (tail && this.logTails >= this.hub.settings.maxLogSubscriptions) return 'too many logs';
    if (tail) this.logTails++;
    const sub: Subscription = {
      consumer: this,
      path,
      pattern: parsePattern(path),
      held: since === null ? null : [],
      floor: null,
    };
    this.subscriptions.set(path, sub);
    this.hub.add(sub);
    if (since !== null) void this.replay(sub, since);
    return 'subscribed';
  }

  unsubscribe(path: string): boolean {
    const sub = this.subscriptions.get(path);
    if (!sub) return false;
    this.subscriptions.delete(path);
    if (logLinesOf(path) !== null) this.logTails--;
    this.hub.remove(sub);
    return true;
  }

  /** An event the hub matched against one of this consumer's subscriptions. */
  deliver(sub: Subscription, e: HubEvent): void {
    if (this.closed) return;
    if (sub.held) {
      if (sub.held.length < MAX_HELD) sub.held.push(e);
      else this.drop('too slow: the events it missed do not drain');
      return;
    }
    if (sub.floor !== null && e.id !== undefined) {
      if (!isAfter(e.id, sub.floor)) return;
      sub.floor = null;
    }
    this.inOrder(this.hub.settings.authorize(this.user, e.parts), (ok) => {
      if (ok) this.write(this.eventFrame(e));
    });
  }

  /**
   * Acts on each event's authorization in the order the events came: at once while nothing
   * waits, otherwise after the decisions before it. A decision still open holds the events
   * behind it (never sends them undecided).
   */
  private inOrder(decision: boolean | Promise<boolean>, act: (ok: boolean) => void): void {
    if (this.waiting.length === 0 && typeof decision === 'boolean') {
      act(decision);
      return;
    }
    this.waiting.push({ decision, act });
    if (this.waiting.length > MAX_HELD) this.drop('too slow: events wait for their authorization');
    else if (this.waiting.length === 1) void this.drain();
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0 && !this.closed) {
      const head = this.waiting[0]!;
      const ok = await head.decision;
      this.waiting.shift();
      if (!this.closed) head.act(ok);
    }
    this.waiting.length = 0;
  }

  /** Tells the client to reload what every subscription shows (events were lost). */
  reloadAll(reason: string): void {
    for (const path of this.subscriptions.keys()) this.write(this.reloadFrame(path, reason));
  }

  protected write(frame: Buffer | string): void {
    if (this.closed) return;
    this.send(frame);
    const limit = this.hub.settings.maxBufferedBytes;
    if (this.buffered() > limit) this.drop(`too slow: more than ${limit} bytes waiting to be sent`);
  }

  /** Disconnects the client and forgets its subscriptions. */
  drop(reason: string): void {
    if (this.closed) return;
    this.release();
    this.hub.log.info({ reason }, 'events client dropped');
    this.end(reason);
  }

  /** Forgets the subscriptions of a client that is gone. */
  release(): void {
    if (this.closed) return;
    this.closed = true;
    for (const sub of this.subscriptions.values()) this.hub.remove(sub);
    this.subscriptions.clear();
    this.hub.consumers.delete(this);
  }

  private async replay(sub: Subscription, since: string): Promise<void> {
    let cursor: string | null = since;
    let covered: string | null = since;
    try {
      while (cursor !== null) {
        const page = await readSince(this.hub.redis, cursor);
        if (this.closed || this.subscriptions.get(sub.path) !== sub) return;
        if (!page.ok) {
          this.write(this.reloadFrame(sub.path, page.reason));
          covered = null;
          break;
        }
        for (const msg of page.events) {
          const e = this.hub.toEvent(msg);
          covered = e.id ?? covered;
          // Events dropped by their process (core/events/publisher.ts) fell in this range.
          if (e.key === EVENTS_LOST_KEY)
            this.write(this.reloadFrame(sub.path, 'events were lost while the event bus was away'));
          else if (matches(sub.pattern, e.parts) && (await this.hub.settings.authorize(this.user, e.parts))) {
            this.write(this.eventFrame(e));
            await this.paced();
            if (this.closed) return;
          }
        }
        cursor = page.next;
      }
    } catch (err) {
      this.hub.log.warn({ err: (err as Error).message }, 'events could not be replayed');
      this.write(this.reloadFrame(sub.path, 'the events after this id could not be read'));
      covered = null;
    }
    const held = sub.held ?? [];
    sub.held = null;
    sub.floor = covered;
    for (const e of held) this.deliver(sub, e);
  }

  /** Lets a replay go no faster than the client reads. */
  private async paced(): Promise<void> {
    const threshold = this.hub.settings.maxBufferedBytes / 4;
    while (!this.closed && this.buffered() > threshold) await new Promise((r) => setTimeout(r, 5));
  }
}
