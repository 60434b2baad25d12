// What the hub, its clients and the log tailer know of each other, and nothing more: the hub
// hands events to subscriptions and drops or reloads clients; a client adds and removes
// subscriptions and reads the hub's settings. Kept apart from hub.ts and consumer.ts so
// that neither imports the other (they did, type-only, in a circle through log-lines.ts;
// test/structure.test.ts keeps circles from coming back).
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { BusMessage } from '../../core/events/bus.js';
import type { Pattern } from './paths.js';

export type UserInfo = Record<string, unknown>;

/**
 * Whether a user may receive the event with this routing key (its elements): at once when
 * it can be told from what is known, else a promise. The event waits for the answer (a
 * client's events keep their order); anything but `true` withholds it.
 */
export type Authorize = (userInfo: UserInfo, routingKey: readonly string[]) => boolean | Promise<boolean>;

export interface HubSettings {
  authorize: Authorize;
  /** WebSocket ping frames and SSE comment lines, this often; a client silent for two is dropped. */
  pingIntervalMs: number;
  /** A client with more than this waiting to be sent is too slow and is disconnected. */
  maxBufferedBytes: number;
  maxSubscriptions: number;
  /** Of which `logs/<id>/lines` (each a log tailed from Redis). */
  maxLogSubscriptions: number;
  /** How often the new lines of tailed logs are read and sent, as one event per log. */
  logLinesIntervalMs: number;
  /**
   * Whether a logged-in client's session still counts (not logged out, its user unchanged);
   * asked every sessionCheckIntervalMs for each client that came with one, which is
   * disconnected once it does not. Absent: sessions are not checked again.
   */
  sessionAlive?: (sessionId: string, user: UserInfo) => Promise<boolean>;
  sessionCheckIntervalMs: number;
}

export interface HubEvent {
  readonly key: string;
  readonly parts: readonly string[];
  readonly message: unknown;
  readonly id: string | undefined;
  /** Frames cached by the transports, one serialization per event. */
  readonly frames: { ws?: Buffer; sse?: Buffer };
}

export interface Subscription {
  readonly consumer: Client;
  readonly path: string;
  readonly pattern: Pattern;
  /** While the subscription replays what it missed: the live events held back, in order. */
  held: HubEvent[] | null;
  /** After a replay: live events up to this id were sent by the replay already. */
  floor: string | null;
}

/** One client (a /ws connection or an SSE stream), as the hub sees it (consumer.ts). */
export interface Client {
  readonly user: UserInfo;
  /** The logged-in session the client came with (checked again while it stays). */
  readonly sessionId: string | null;
  readonly closed: boolean;
  /** An event the hub matched against one of this client's subscriptions. */
  deliver(sub: Subscription, e: HubEvent): void;
  /** Called every ping interval. */
  heartbeat(): void;
  /** Tells the client to reload what every subscription shows (events were lost). */
  reloadAll(reason: string): void;
  /** Disconnects the client and forgets its subscriptions. */
  drop(reason: string): void;
  /** Forgets the subscriptions of a client that is gone. */
  release(): void;
}

/** The pod's hub, as a client sees it (hub.ts). */
export interface Hub {
  readonly redis: Redis;
  readonly settings: HubSettings;
  readonly log: FastifyBaseLogger;
  readonly consumers: Set<Client>;
  add(sub: Subscription): void;
  remove(sub: Subscription): void;
  toEvent(msg: BusMessage): HubEvent;
}
