// An event as the hub hears it on EVENTS_WITH_IDS_CHANNEL, read only as far as the hub needs:
// its key from the text's start and its stream id from the text's end, the message parsed the
// first time a client's frame asks for it. The hub hears every event of the cluster whether or
// not any client is connected, and most of them (a build's steps and logs) match no
// subscription: their text is never parsed.
//
// The text is what core/events/bus.ts's PUBLISH_SCRIPT publishes: busPayload's JSON, whose
// first member is `"k"`, with `,"id":"<stream id>"}` put in place of its closing brace. A
// text of any other form (a key with an escape in it, no id at the end) is parsed whole, as
// before.
//
// Measured (load/results/fleet.md, 2026-11-29 06:01 "the APIs' CPU in phase S"): parsing
// every message was 12.6% of the APIs' busy samples in S, profiled; in plain turns with and
// without this, the APIs' CPU a start stayed within the runs' spread (1.0-1.73 ms against
// 1.28-1.68): kept since what it leaves out is pure waste, not claimed as measured.
import { type BusMessage, leadingKey, parseBusMessage } from '../../core/events/bus.js';
import type { HubEvent } from './types.js';

const TAIL = ',"id":"';

/**
 * `"k"`'s value as bus.ts's leadingKey reads it from the text's start (no escape in it), and
 * `"id"`'s when the text ends with it: an unescaped `,"id":"` only occurs between members, and
 * one followed by nothing but the value and `"}` is the outer object's last member.
 */
function keyAndId(raw: string): { key: string; id: string } | null {
  if (!raw.endsWith('"}')) return null;
  const key = leadingKey(raw);
  if (key === null) return null;
  const idAt = raw.lastIndexOf(TAIL);
  if (idAt < 6 + key.length) return null;
  const id = raw.slice(idAt + TAIL.length, -2);
  if (id.includes('"') || id.includes('\\')) return null;
  return { key, id };
}

class HeardEvent implements HubEvent {
  readonly frames: HubEvent['frames'] = {};
  private split: string[] | undefined;
  private whole: BusMessage | null | undefined;
  constructor(
    readonly key: string,
    readonly id: string,
    private readonly raw: string,
  ) {}
  get parts(): readonly string[] {
    this.split ??= this.key.split('/');
    return this.split;
  }
  get message(): unknown {
    if (this.whole === undefined) this.whole = parseBusMessage(this.raw);
    return this.whole?.m;
  }
  /** The text is not JSON after all: its message was never there (it was dropped unread before). */
  get malformed(): boolean {
    void this.message;
    return this.whole === null;
  }
}

/** The event of a message heard on the channel with ids; null for anything that is not one. */
export function heardEvent(raw: string): HubEvent | null {
  const read = keyAndId(raw);
  if (read) return new HeardEvent(read.key, read.id, raw);
  const msg = parseBusMessage(raw);
  return msg ? eventOf(msg) : null;
}

/** The event of a message already parsed (read back from the stream after a drop). */
export function eventOf(msg: BusMessage): HubEvent {
  return { key: msg.k, parts: msg.k.split('/'), message: msg.m, id: msg.id, frames: {} };
}

/** Whether an event may be sent out: one heard whose text is not JSON is not. */
export function sendable(e: HubEvent): boolean {
  return !(e instanceof HeardEvent && e.malformed);
}
