// Reading the events kept in EVENTS_STREAM after a given id: what a client that reconnects
// missed. The stream is capped, so the answer is either every event after the id, or "gone":
// some event after the id has been trimmed (or Redis lost the stream), and the client must
// reload what it shows instead.
import type { Redis } from 'ioredis';
import { type BusMessage, EVENTS_STREAM, parseBusMessage } from './bus.js';

/** A stream id `ms-seq`, as two integers, for ordering. */
export type StreamId = readonly [bigint, bigint];

const ID_FORMAT = /^(\d{1,20})(?:-(\d{1,20}))?$/;

export function parseStreamId(text: string): StreamId | null {
  const m = ID_FORMAT.exec(text);
  return m ? [BigInt(m[1]!), BigInt(m[2] ?? '0')] : null;
}

export function compareStreamIds(a: StreamId, b: StreamId): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] === b[1] ? 0 : a[1] < b[1] ? -1 : 1;
}

/** Redis's own way of writing an id, `<ms>-<seq>` in decimal without leading zeros. */
const REDIS_ID = /^(?:0|[1-9]\d{0,19})-(?:0|[1-9]\d{0,19})$/;

/** Two decimal numbers without leading zeros compared as text (the longer is the larger): -1, 0 or 1. */
function compareDecimal(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

/**
 * Whether the event id `a` comes after `b` (ids that do not parse never do). An API pod asks it
 * of every event it hears, so ids as Redis writes them are compared as text: parsing both (a
 * regular expression and two BigInts each) was 4.3% of the APIs' busy samples in phase S of the
 * fleet run once the message bodies went unparsed, profiled (load/results/fleet.md, 2026-11-29
 * "the APIs' CPU in phase S"); in plain turns the change was inside the runs' spread.
 */
export function isAfter(a: string, b: string): boolean {
  if (REDIS_ID.test(a) && REDIS_ID.test(b)) {
    const [da, db] = [a.indexOf('-'), b.indexOf('-')];
    const ms = compareDecimal(a.slice(0, da), b.slice(0, db));
    return ms !== 0 ? ms > 0 : compareDecimal(a.slice(da + 1), b.slice(db + 1)) > 0;
  }
  const x = parseStreamId(a);
  const y = parseStreamId(b);
  return x !== null && y !== null && compareStreamIds(x, y) > 0;
}

export type ReadSince =
  | {
      ok: true;
      events: BusMessage[] /** where the next page starts; null when this was the last */;
      next: string | null;
    }
  | { ok: false; reason: string };

interface StreamInfo {
  lastGenerated: StreamId;
  first: StreamId | null;
}

function parseInfo(flat: unknown[]): StreamInfo {
  const fields = new Map<string, unknown>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), flat[i + 1]);
  const id = (v: unknown) => parseStreamId(String(v ?? '0-0')) ?? ([0n, 0n] as const);
  const first = fields.get('first-entry') as [string, unknown] | null | undefined;
  return { lastGenerated: id(fields.get('last-generated-id')), first: first ? id(first[0]) : null };
}

/**
 * Nothing after `cursor` (an id the stream gave) was trimmed: it is still in the stream, or
 * it is the newest id, so nothing came after it. Trimming removes the oldest entries and
 * Redis does not record which (max-deleted-entry-id moves only on XDEL), so an id older than
 * the first entry kept is "gone" even when it happened to be the last one trimmed. So is an
 * id from an older incarnation of the stream (Redis restarted without it): it is older than
 * the new stream's first entry.
 */
function coveredFrom(info: StreamInfo, cursor: StreamId): boolean {
  const sinceLast = compareStreamIds(cursor, info.lastGenerated);
  if (sinceLast >= 0) return sinceLast === 0;
  return info.first !== null && compareStreamIds(cursor, info.first) >= 0;
}

/**
 * One page of the events after `since` (exclusive), at most `count`, read together with the
 * stream's state in one MULTI so that the window check and the page agree. Callers page with
 * `next` until it is null.
 */
export async function readSince(redis: Redis, since: string, count = 500): Promise<ReadSince> {
  const cursor = parseStreamId(since);
  if (!cursor) return { ok: false, reason: `unknown event id '${since}'` };
  const replies = await redis
    .multi()
    .xinfo('STREAM', EVENTS_STREAM)
    .xrange(EVENTS_STREAM, `(${cursor[0]}-${cursor[1]}`, '+', 'COUNT', count)
    .exec();
  const [infoReply, rangeReply] = replies ?? [];
  if (!infoReply || infoReply[0]) {
    return { ok: false, reason: `event id '${since}' is older than the events kept` };
  }
  const info = parseInfo(infoReply[1] as unknown[]);
  if (!coveredFrom(info, cursor)) {
    const future = compareStreamIds(cursor, info.lastGenerated) > 0;
    return {
      ok: false,
      reason: future ? `unknown event id '${since}'` : `event id '${since}' is older than the events kept`,
    };
  }
  if (!rangeReply || rangeReply[0]) throw rangeReply?.[0] ?? new Error('XRANGE failed');
  const entries = rangeReply[1] as [string, string[]][];
  const events: BusMessage[] = [];
  for (const [id, fields] of entries) {
    const text = streamField(fields, 'e');
    const msg = text === undefined ? null : parseBusMessage(text);
    if (msg) events.push({ ...msg, id });
  }
  const last = entries.at(-1)?.[0];
  return { ok: true, events, next: entries.length === count && last ? last : null };
}

/** The value of one field of a stream entry (XRANGE and XREAD give [name, value, ...]). */
export function streamField(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** The id of the newest event, or null when the stream is empty or missing. */
export async function lastEventId(redis: Redis): Promise<string | null> {
  const [entry] = (await redis.xrevrange(EVENTS_STREAM, '+', '-', 'COUNT', 1)) as [string, string[]][];
  return entry ? entry[0] : null;
}
