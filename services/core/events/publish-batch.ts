// A batch of events published by one script call: what the publisher (publisher.ts) sends, in
// place of one EVALSHA of bus.ts's PUBLISH_SCRIPT per event. Each event is still appended to
// the stream and published on the channels exactly as PUBLISH_SCRIPT does, in the batch's
// order; Redis runs the whole call without another client's command between, so the order
// and "everything after id X" hold as before.
//
// Why: a build start publishes 23 events, and a master sent each as its own command (ioredis
// made, encoded and settled a command object a call; Redis set a script up a call). Phase S's
// warm bursts had ioredis at 11.5% of the masters' busy samples outside the socket writes
// (load/results/fleet.md, 2026-11-29 06:45-07:12). Measured alone, a start's 23 events sent
// each way in turns, three rounds (load/bench/publish-cost.ts, the command in its head, a
// fresh redis-server, 2026-11-29 07:26, load 3-5), microseconds a start:
//
//   batches of 23 events    publisher 217-364 -> 119-155, Redis 188-204 -> 152-177
//   batches of 256          publisher 133-326 ->  35-63,  Redis 163-188 -> 112-128
//   batches of 4            publisher 735-846 -> 641-782, Redis 514-561 -> 547-660
//
// A publisher's batches are whatever queued since its last send: in phase S a master's claim
// pass starts hundreds of builds at once. Phase S itself, four runs in turns at 07:21-07:26,
// could not tell the two apart (its bursts moved by 20% run to run).
//
// A failure part way (a write refused by Redis) stops the batch there: the ids of the events
// that went come back, then the error's text after ERROR_MARK, and the publisher sends the rest
// again from the failed one, as it did after a failed EVALSHA.
import { createHash } from 'node:crypto';
import { EVENTS_CHANNEL, EVENTS_STREAM, EVENTS_STREAM_MAXLEN, EVENTS_WITH_IDS_CHANNEL } from './bus.js';

/** What starts the last element of a batch's reply when an event of it failed. */
export const ERROR_MARK = '!error ';

// KEYS[1] the stream; ARGV[1] maxlen, ARGV[2] the masters' channel, ARGV[3] the channel with
// ids, then per event its JSON and '1' when masters hear it (master-kinds.ts), '' when not.
const PUBLISH_BATCH_SCRIPT = `
local ids = {}
for i = 4, #ARGV, 2 do
  local id = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[i])
  if type(id) == 'table' and id.err then
    ids[#ids + 1] = '${ERROR_MARK}' .. id.err
    return ids
  end
  if ARGV[i + 1] ~= '' then redis.pcall('PUBLISH', ARGV[2], ARGV[i]) end
  redis.pcall('PUBLISH', ARGV[3], string.sub(ARGV[i], 1, -2) .. ',"id":"' .. id .. '"}')
  ids[#ids + 1] = id
end
return ids`;
export const PUBLISH_BATCH_SHA = createHash('sha1').update(PUBLISH_BATCH_SCRIPT).digest('hex');
export { PUBLISH_BATCH_SCRIPT };

/** One event of a batch: its payload (bus.ts's busPayload) and whether masters hear it. */
export interface BatchEvent {
  payload: string;
  forMasters: boolean;
}

/** PUBLISH_BATCH_SCRIPT's keys and arguments (`numkeys` first, as EVALSHA takes them). */
export function publishBatchArgs(events: readonly BatchEvent[]): [number, ...string[]] {
  const args: [number, ...string[]] = [
    1,
    EVENTS_STREAM,
    String(EVENTS_STREAM_MAXLEN),
    EVENTS_CHANNEL,
    EVENTS_WITH_IDS_CHANNEL,
  ];
  for (const e of events) args.push(e.payload, e.forMasters ? '1' : '');
  return args;
}

/**
 * Each event's outcome from the call's reply: null for one published, the error for the one
 * that failed and for every one after it (not sent). `callError` is the call's own (the
 * script never ran: nothing was published).
 */
export function batchOutcomes(count: number, reply: unknown, callError: Error | null): (Error | null)[] {
  if (callError || !Array.isArray(reply)) {
    const err = callError ?? new Error('no reply');
    return Array.from({ length: count }, () => err);
  }
  const last = reply.at(-1);
  const failed = typeof last === 'string' && last.startsWith(ERROR_MARK);
  const sent = failed ? reply.length - 1 : reply.length;
  const err = new Error(failed ? last.slice(ERROR_MARK.length) : 'no reply');
  return Array.from({ length: count }, (_, i) => (i < sent ? null : err));
}
