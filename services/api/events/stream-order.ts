// Whether one event's stream id comes after another's, told from their text. The hub asks it
// of every event it hears (a repeat around a reconnection is dropped: hub.ts), and core's
// isAfter parses both ids each time (a regular expression and two BigInts each): that was
// 4.3% of the APIs' busy samples in phase S of the fleet run once the message bodies went
// unparsed, profiled (load/results/fleet.md, 2026-11-29 06:01 "the APIs' CPU in phase S");
// in plain turns the change is inside the runs' spread.
//
// Redis writes an id as `<ms>-<seq>`, both decimal without leading zeros: of two such numbers
// the longer is the larger, and two of one length compare as strings. Any other text is left
// to core's isAfter.
import { isAfter } from '../../core/events/stream.js';

const SHAPE = /^(?:0|[1-9]\d*)-(?:0|[1-9]\d*)$/;

/** Compares two decimal numbers without leading zeros, as text: -1, 0 or 1. */
function compareDecimal(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

/** Whether stream id `a` comes after `b` (false when either is no stream id, as isAfter says). */
export function idAfter(a: string, b: string): boolean {
  if (!SHAPE.test(a) || !SHAPE.test(b)) return isAfter(a, b);
  const da = a.indexOf('-');
  const db = b.indexOf('-');
  const ms = compareDecimal(a.slice(0, da), b.slice(0, db));
  return ms !== 0 ? ms > 0 : compareDecimal(a.slice(da + 1), b.slice(db + 1)) > 0;
}
