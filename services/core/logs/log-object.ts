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

/** The object of a log's chunks (in line order) and its index. */
export function buildLogObject(rows: readonly LogChunkRow[]): { body: Buffer; index: IndexedChunk[] } {
  const parts: Uint8Array[] = [];
  const index: IndexedChunk[] = [];
  let offset = 0;
  for (const row of rows) {
    let content = row.content;
    let compressed = row.compressed;
    if (compressed === 0 && content.length > 0) {
      const gz = encode(GZIP, content);
      if (gz.length < content.length) {
        content = gz;
        compressed = GZIP;
      }
    }
    parts.push(content);
    index.push({
      first_line: row.first_line,
      last_line: row.last_line,
      compressed,
      byte_offset: offset,
      byte_length: content.length,
    });
    offset += content.length;
  }
  return { body: Buffer.concat(parts), index };
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
export function spansOf(chunks: readonly IndexedChunk[], maxBytes: number): IndexedChunk[][] {
  const groups: IndexedChunk[][] = [];
  let group: IndexedChunk[] = [];
  let bytes = 0;
  for (const c of chunks) {
    if (group.length > 0 && bytes + c.byte_length > maxBytes) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(c);
    bytes += c.byte_length;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
