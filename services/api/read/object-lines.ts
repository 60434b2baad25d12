// The lines a range read asks of a moved log, found with the log itself: the statement that
// finds the log (logs.ts findLog) also takes its object's key and the index rows of those
// lines (lines past the log's end have none). A first read of a moved log's lines is then
// that statement and one GET, as many round trips as its read from PostgreSQL (the log, then
// its chunks), where it was three (the log, the index, the GET); under load every round trip
// waits for a core, and this was the one hop a read from the store paid more. A log not moved
// (or moved between this statement and the next) is read as before, chunks or index in one
// statement. Measured, first reads of 100 lines against PostgreSQL: load/results/
// object-store.md, "First reads".
import { type SQLQuery, sql } from '../../core/db/pool.js';
import type { IndexedChunk } from '../../core/logs/log-object.js';
import type { ResultSpec } from '../query/spec.js';

/** The lines asked, as bounds the database takes (a range past them holds nothing anyway). */
export interface LinesAsked {
  first: number;
  last: number;
}

/** The key of a moved log's object and the index rows of the lines asked. */
export interface LinesOfObject {
  key: string;
  chunks: IndexedChunk[];
}

// Past these a JS number's text is no int8 (1e+21): offset and limit may be as large as the
// query allows (test/api/log-contents-bounds.test.ts).
const SAFE = Number.MAX_SAFE_INTEGER;
const bounded = (n: number) => Math.max(-SAFE, Math.min(SAFE, n));

export function linesAsked(spec: ResultSpec): LinesAsked {
  const first = spec.offset ?? 0;
  return { first: bounded(first), last: spec.limit == null ? SAFE : bounded(first + spec.limit - 1) };
}

/**
 * The column `object` of the log's row (`a`) for a range read (none for another read): its
 * object and the index of the lines asked, null if it is not moved.
 */
export const objectColumn = (spec: ResultSpec | null): SQLQuery =>
  spec ? sql`, ${objectOfLines(linesAsked(spec))} AS object` : sql``;

const objectOfLines = (lines: LinesAsked): SQLQuery => sql`(
  SELECT json_build_object('key', o.key, 'chunks', (
    SELECT coalesce(json_agg(json_build_array(c.first_line, c.last_line, c.compressed, c.byte_offset,
             c.byte_length) ORDER BY c.first_line), '[]'::json)
    FROM flotilla.log_object_chunks c
    WHERE c.logid = o.logid AND c.last_line >= ${lines.first}::int8 AND c.first_line <= ${lines.last}::int8))
  FROM flotilla.log_objects o WHERE o.logid = a.id)`;

/** The column read (json, or its text where a reader leaves it unparsed); null if not moved. */
export function linesOfObject(column: unknown): LinesOfObject | null {
  if (column == null) return null;
  const o = (typeof column === 'string' ? JSON.parse(column) : column) as {
    key: string;
    chunks: [number, number, number, number, number][];
  };
  return {
    key: o.key,
    chunks: o.chunks.map(([first_line, last_line, compressed, byte_offset, byte_length]) => ({
      first_line,
      last_line,
      compressed,
      byte_offset,
      byte_length,
    })),
  };
}
