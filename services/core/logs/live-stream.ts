// The live copy of an open log: a capped Redis stream per log, which the master fills after
// each append is in PostgreSQL, and from which API pods serve the tail of a log that is
// still being written, so that many clients following builds cost Redis reads instead of
// PostgreSQL ones. PostgreSQL stays the record: a line missing from the stream (Redis was
// away, or the cap dropped it) is read from PostgreSQL instead, never lost.
//
// Each entry is one append: `first` (its first line number) and `text` (its lines, each
// ending with \n, exactly as the logchunk holds them).

import type { Redis } from 'ioredis';
import { streamField } from '../events/stream.js';

export const logStreamKey = (logid: number): string => `flotilla:log:${logid}`;

// Enough for the tail clients follow; older lines come from PostgreSQL.
const STREAM_MAXLEN = 20_000;
// A log nobody finishes (its master died) does not stay in Redis for ever.
const STREAM_TTL_S = 3600;
// Entries read per round trip when walking back from the newest, and how far to walk.
const PAGE = 100;
const MAX_PAGES = 10;

/** Add one append to the log's stream (after it is in PostgreSQL). */
export async function appendToLogStream(redis: Redis, logid: number, firstLine: number, text: string) {
  const key = logStreamKey(logid);
  await redis
    .multi()
    .xadd(key, 'MAXLEN', '~', String(STREAM_MAXLEN), '*', 'first', String(firstLine), 'text', text)
    .expire(key, STREAM_TTL_S)
    .exec();
}

interface Piece {
  first: number;
  text: string;
}

function piece(fields: string[]): Piece | null {
  const first = Number(streamField(fields, 'first') ?? Number.NaN);
  const text = streamField(fields, 'text');
  return Number.isSafeInteger(first) && text !== undefined ? { first, text } : null;
}

/**
 * Lines first..last (inclusive) of the log, each ending with \n, as /contents answers them;
 * null when the stream does not hold every one of them without a gap.
 */
export async function readLogStreamLines(
  redis: Redis,
  logid: number,
  first: number,
  last: number,
): Promise<string | null> {
  const key = logStreamKey(logid);
  // The oldest entry says at once whether the stream reaches back far enough.
  const oldest = (await redis.xrange(key, '-', '+', 'COUNT', 1))[0];
  const start = oldest ? piece(oldest[1]) : null;
  if (!start || start.first > first) return null;

  const pieces: Piece[] = [];
  let end = '+';
  for (let page = 0; page < MAX_PAGES; page++) {
    const entries = await redis.xrevrange(key, end, '-', 'COUNT', PAGE);
    if (entries.length === 0) return null;
    for (const [id, fields] of entries) {
      const p = piece(fields);
      if (!p) return null;
      pieces.push(p);
      end = `(${id}`;
      if (p.first <= first) return assemble(pieces.reverse(), first, last);
    }
  }
  return null;
}

function assemble(pieces: Piece[], first: number, last: number): string | null {
  const out: string[] = [];
  let next = pieces[0]!.first;
  for (const p of pieces) {
    if (p.first !== next) return null;
    const lines = p.text.split('\n');
    lines.pop(); // the text ends with \n
    for (let i = 0; i < lines.length; i++) {
      const n = p.first + i;
      if (n >= first && n <= last) out.push(lines[i]!);
    }
    next = p.first + lines.length;
  }
  // The stream must reach the last line wanted (it can lag PostgreSQL when Redis failed).
  if (next <= last) return null;
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}
