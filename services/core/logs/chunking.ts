// How log text becomes `logchunks` rows: appendLog's split and compressLog's merge,
// with Buildbot 3.7's limits (buildbot/db/logs.py) so that either side reads what the
// other wrote.
//
// appendLog (Buildbot: thdAppendLog, thdSplitAndAppendChunk, _splitBigChunk):
// - the text must end with \n; that newline is dropped and the rest stored as UTF-8;
// - a remainder shorter than MAX_CHUNK_SIZE bytes is one chunk, however many lines it
//   holds (the 1,000-line limit is compressLog's, not appendLog's);
// - otherwise the chunk ends at the last \n before byte MAX_CHUNK_SIZE (so at most
//   65,535 bytes), that \n is dropped, and the rest is split again;
// - a line with no \n in its first MAX_CHUNK_SIZE bytes is cut to that many bytes, less
//   a UTF-8 sequence the cut would split; the rest of that line is dropped, and the line
//   counts as one;
// - each chunk is stored compressed only if that makes it strictly smaller.
// One deliberate difference: where Buildbot's loop stops on an empty remainder (text
// "\n", or a split whose \n is the last byte) it writes no chunk for that empty line,
// yet counts it in num_lines (or drops it); we write the empty line as a chunk of its own.
//
// compressLog (Buildbot: compressLog): walks the rows by first_line and closes a group
// before a row that would take the group's stored (compressed) bytes past
// MAX_CHUNK_SIZE or make row.last_line - group.first_line exceed MAX_CHUNK_LINES (so a
// group spans up to 1,001 lines). Groups of two or more rows (one or more with force)
// are decoded, joined with \n and stored again as one row (compressed only if smaller).
// No log is merged if all its rows are empty. Where Buildbot starts its first group at
// line 0 and would merge across missing lines, we start at the first row and close a
// group at any gap, so a merged row never renumbers lines.

import { type CompressionCode, type DecodeOptions, decode, encode, MAX_DECODED_BYTES } from './codecs.js';
import { LogError } from './errors.js';
import type { LineRange, LogChunkRow } from './types.js';

/** Largest chunk appendLog stores (bytes), and compressLog's cap on a group's stored bytes. */
export const MAX_CHUNK_SIZE = 65536;
/** compressLog's cap on a group: last_line - first_line may not exceed it. */
export const MAX_CHUNK_LINES = 1000;

const NEWLINE = 0x0a;
const utf8 = new TextEncoder();

/** An uncompressed chunk of a log, before storing. */
export interface RawChunk extends LineRange {
  /** UTF-8 lines joined by \n, no final newline. */
  text: Uint8Array;
}

/** A row's extent as compressLog's first pass reads it (`length(content)`, the stored size). */
export interface ChunkExtent extends LineRange {
  length: number;
}

function countNewlines(bytes: Uint8Array): number {
  let count = 0;
  let i = bytes.indexOf(NEWLINE);
  while (i !== -1) {
    count++;
    i = bytes.indexOf(NEWLINE, i + 1);
  }
  return count;
}

function checkLineNumber(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new LogError('LOG_CHUNK_ORDER', `${what} must be a whole number >= 0, got ${value}`);
  }
}

/**
 * One chunk's bytes from the front of `content`, and what is left after it (null when
 * nothing is; an empty array is an empty last line).
 */
function takeChunk(content: Uint8Array): [Uint8Array, Uint8Array | null] {
  if (content.length < MAX_CHUNK_SIZE) return [content, null];
  const split = content.subarray(0, MAX_CHUNK_SIZE).lastIndexOf(NEWLINE);
  if (split !== -1) return [content.subarray(0, split), content.subarray(split + 1)];
  // A line longer than a chunk: keep its head up to a UTF-8 sequence boundary.
  let cut = MAX_CHUNK_SIZE;
  while (cut > 0 && ((content[cut] ?? 0) & 0xc0) === 0x80) cut--;
  const next = content.indexOf(NEWLINE, MAX_CHUNK_SIZE);
  return [content.subarray(0, cut), next === -1 ? null : content.subarray(next + 1)];
}

/**
 * Splits appended text into the chunks Buildbot would write for a log whose next line
 * number is `nextLine`. Returns them uncompressed, with the log's new num_lines.
 */
export function splitAppend(text: string, nextLine: number): { chunks: RawChunk[]; numLines: number } {
  checkLineNumber(nextLine, 'the next line number');
  if (!text.endsWith('\n')) {
    throw new LogError('LOG_APPEND_UNTERMINATED', 'appended log text must end with a newline');
  }
  const bytes = utf8.encode(text);
  let rest: Uint8Array | null = bytes.subarray(0, bytes.length - 1);
  const chunks: RawChunk[] = [];
  let first = nextLine;
  while (rest !== null) {
    const [chunk, after]: [Uint8Array, Uint8Array | null] = takeChunk(rest);
    const last = first + countNewlines(chunk);
    chunks.push({ first_line: first, last_line: last, text: chunk });
    first = last + 1;
    rest = after;
  }
  return { chunks, numLines: first };
}

/** Buildbot's thdCompressChunk: the codec's bytes if strictly smaller, else the raw bytes (code 0). */
export function storeChunk(
  raw: Uint8Array,
  code: CompressionCode,
): { content: Uint8Array; compressed: number } {
  if (code !== 0) {
    const packed = encode(code, raw);
    if (packed.length < raw.length) return { content: packed, compressed: code };
  }
  return { content: raw, compressed: 0 };
}

/** splitAppend, then storeChunk for each chunk: the rows to insert and the new num_lines. */
export function appendChunks(
  text: string,
  nextLine: number,
  code: CompressionCode,
): { rows: LogChunkRow[]; numLines: number } {
  const { chunks, numLines } = splitAppend(text, nextLine);
  const rows = chunks.map((c) => ({
    first_line: c.first_line,
    last_line: c.last_line,
    ...storeChunk(c.text, code),
  }));
  return { rows, numLines };
}

/**
 * compressLog's first pass: from the rows' extents (ordered by first_line), the line
 * ranges whose rows are to be merged into one row each.
 */
export function planCompressLog(rows: Iterable<ChunkExtent>, options: { force?: boolean } = {}): LineRange[] {
  const force = options.force ?? false;
  const plan: LineRange[] = [];
  let groupFirst = 0;
  let groupLast = -1;
  let groupBytes = 0;
  let groupRows = 0;
  let totalBytes = 0;
  const close = () => {
    if (groupRows > 1 || (force && groupRows > 0))
      plan.push({ first_line: groupFirst, last_line: groupLast });
  };
  let previousLast = -1;
  for (const row of rows) {
    checkRow(row, previousLast);
    previousLast = row.last_line;
    if (groupRows === 0) groupFirst = row.first_line;
    if (
      (groupRows > 0 && row.first_line !== groupLast + 1) ||
      groupBytes + row.length > MAX_CHUNK_SIZE ||
      row.last_line - groupFirst > MAX_CHUNK_LINES
    ) {
      close();
      groupFirst = row.first_line;
      groupBytes = 0;
      groupRows = 0;
    }
    groupLast = row.last_line;
    groupBytes += row.length;
    totalBytes += row.length;
    groupRows++;
  }
  if (totalBytes === 0) return [];
  close();
  return plan;
}

function checkRow(row: LineRange, previousLast: number): void {
  checkLineNumber(row.first_line, 'first_line');
  checkLineNumber(row.last_line, 'last_line');
  if (row.last_line < row.first_line) {
    throw new LogError('LOG_CHUNK_ORDER', `chunk ${row.first_line}..${row.last_line} ends before it starts`);
  }
  if (row.first_line <= previousLast) {
    throw new LogError(
      'LOG_CHUNK_ORDER',
      `chunk ${row.first_line}..${row.last_line} is not after the previous one (ending at ${previousLast})`,
    );
  }
}

/**
 * compressLog's second pass for one group: the rows (ordered, consecutive lines)
 * decoded, joined with \n and stored again as one row with `code`.
 */
export function mergeChunks(
  rows: readonly LogChunkRow[],
  code: CompressionCode,
  options: DecodeOptions = {},
): LogChunkRow {
  const maxBytes = options.maxBytes ?? MAX_DECODED_BYTES;
  if (rows.length === 0) throw new LogError('LOG_CHUNK_ORDER', 'no chunks to merge');
  const parts: Uint8Array[] = [];
  let size = -1;
  let previousLast = -1;
  for (const row of rows) {
    checkRow(row, previousLast);
    if (previousLast !== -1 && row.first_line !== previousLast + 1) {
      throw new LogError('LOG_CHUNK_ORDER', `lines ${previousLast + 1}..${row.first_line - 1} are missing`);
    }
    previousLast = row.last_line;
    const part = decode(row.compressed, row.content, { maxBytes });
    if (countNewlines(part) !== row.last_line - row.first_line) {
      throw new LogError(
        'LOG_CHUNK_INCONSISTENT',
        `chunk ${row.first_line}..${row.last_line} holds ${countNewlines(part) + 1} lines`,
      );
    }
    size += part.length + 1;
    if (size > maxBytes) throw new LogError('LOG_CODEC_TOO_LARGE', `merged chunk exceeds ${maxBytes} bytes`);
    parts.push(part);
  }
  const joined = new Uint8Array(size);
  let at = 0;
  parts.forEach((part, i) => {
    if (i > 0) joined[at++] = NEWLINE;
    joined.set(part, at);
    at += part.length;
  });
  const first = rows[0]!.first_line;
  return { first_line: first, last_line: previousLast, ...storeChunk(joined, code) };
}

/**
 * The whole of compressLog for a finished log held in memory: for each planned group,
 * the range of rows it replaces and the merged row. (A caller short of memory uses
 * planCompressLog on extents and mergeChunks per group instead.)
 */
export function compressLogRows(
  rows: readonly LogChunkRow[],
  code: CompressionCode,
  options: { force?: boolean } & DecodeOptions = {},
): { replaces: LineRange; row: LogChunkRow }[] {
  const plan = planCompressLog(
    rows.map((r) => ({ first_line: r.first_line, last_line: r.last_line, length: r.content.length })),
    options,
  );
  return plan.map((range) => ({
    replaces: range,
    row: mergeChunks(
      rows.filter((r) => r.first_line >= range.first_line && r.last_line <= range.last_line),
      code,
      options,
    ),
  }));
}
