// A finished log as one object in the store (docs/object-store.md): its chunks' stored bytes
// one after another, and an index (kept in PostgreSQL, migration 0029) of each chunk's lines,
// codec, offset and length. Chunks are kept as PostgreSQL had them (compress-log has merged
// them by then); one left uncompressed (log_compression none, or a chunk compression did not
// shrink) is stored gzipped when that is smaller, so the object is compressed whatever the
// master's setting. Reading a range is then the same code as reading rows (lines.ts), on the
// same bytes: the answers are PostgreSQL's byte for byte.
import { encode } from './codecs.js';
import type { LineRange, LogChunkRow } from './types.js';

const GZIP = 1;

export interface IndexedChunk extends LineRange {
  compressed: number;
  byte_offset: number;
  byte_length: number;
}

/**
 * A chunk as the object holds it: its stored bytes, or gzipped when it was stored uncompressed
 * and gzip is smaller.
 */
export function objectChunkOf(row: LogChunkRow): { content: Uint8Array; compressed: number } {
  if (row.compressed === 0 && row.content.length > 0) {
    const gz = encode(GZIP, row.content);
    if (gz.length < row.content.length) return { content: gz, compressed: GZIP };
  }
  return { content: row.content, compressed: row.compressed };
}

/** The index of a log's object, its chunks appended in line order as they are written. */
export class LogObjectIndex {
  readonly chunks: IndexedChunk[] = [];
  private bytes = 0;

  /** Indexes a chunk and answers what the object holds of it. */
  append(row: LogChunkRow): Uint8Array {
    const { content, compressed } = objectChunkOf(row);
    this.chunks.push({
      first_line: row.first_line,
      last_line: row.last_line,
      compressed,
      byte_offset: this.bytes,
      byte_length: content.length,
    });
    this.bytes += content.length;
    return content;
  }
}

/** The byte range (inclusive) that holds these indexed chunks, which follow each other. */
export function spanOf(chunks: readonly IndexedChunk[]): { start: number; end: number } | null {
  if (chunks.length === 0) return null;
  const last = chunks.at(-1)!;
  return { start: chunks[0]!.byte_offset, end: last.byte_offset + last.byte_length - 1 };
}

/** The chunk rows of `chunks` out of the bytes of their span (spanOf). */
export function rowsOfSpan(chunks: readonly IndexedChunk[], bytes: Uint8Array): LogChunkRow[] {
  const base = chunks[0]?.byte_offset ?? 0;
  return chunks.map((c) => {
    const at = c.byte_offset - base;
    if (at + c.byte_length > bytes.length)
      throw new RangeError(`the object is shorter than its index (chunk at ${c.byte_offset})`);
    return {
      first_line: c.first_line,
      last_line: c.last_line,
      compressed: c.compressed,
      content: bytes.subarray(at, at + c.byte_length),
    };
  });
}

/**
 * Consecutive groups of the index of at most `maxBytes` each (a chunk larger than that is a
 * group alone): what one ranged GET of a download fetches.
 */
export const spansOf = (chunks: readonly IndexedChunk[], maxBytes: number): IndexedChunk[][] =>
  groupsOfSize(chunks, maxBytes, (c) => c.byte_length);

/** Consecutive groups of `items` of at most `maxBytes` each by `sizeOf` (a larger item alone). */
export function groupsOfSize<T>(items: readonly T[], maxBytes: number, sizeOf: (item: T) => number): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let bytes = 0;
  for (const c of items) {
    if (group.length > 0 && bytes + sizeOf(c) > maxBytes) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(c);
    bytes += sizeOf(c);
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
