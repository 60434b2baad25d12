// Reading lines back out of `logchunks` rows, as Buildbot 3.7 answers
// `/logs/<id>/contents` and `/logs/<id>/raw` (buildbot/db/logs.py getLogLines,
// buildbot/data/logchunks.py).
//
// getLogLines(first, last) takes the rows with first_line <= last and last_line >= first,
// by first_line; decodes each; drops the lines before `first` (counting \n from the
// front) and after `last` (from the back); joins the pieces with \n and ends with \n,
// or answers '' when no row overlaps.
//
// raw: getLogLines(0, max(0, num_lines - 1)); html/text logs are sent as that text
// (so with a final newline); for stdio logs each line loses its first character (the
// stream o/e/h/i) and the lines are joined with \n, with no final newline.
// One deliberate difference: Buildbot cuts stdio lines with Python's splitlines(), which
// also breaks at \r, \v, \f, \x1c-\x1e, \x85, U+2028 and U+2029 and then drops the first
// character of each piece; we break at \n only, so such characters survive intact.
//
// Bytes are processed as bytes (a \n byte is always a newline in UTF-8), so raw logs
// stream chunk by chunk in constant memory; text for JSON is decoded once, with U+FFFD
// for invalid UTF-8 where Buildbot would fail.

import { type DecodeOptions, decode } from './codecs.js';
import { LogError } from './errors.js';
import type { LineRange, LogChunkRow, LogType } from './types.js';

const NEWLINE = 0x0a;
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

function checkRange(range: LineRange): void {
  const { first_line: first, last_line: last } = range;
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || first < 0 || last < first) {
    throw new LogError('LOG_RANGE_INVALID', `line range ${first}..${last} is not 0 <= first <= last`);
  }
}

/** Whether a row holds any line of the range (the SQL condition of a range read). */
export function overlaps(row: LineRange, range: LineRange): boolean {
  return row.first_line <= range.last_line && row.last_line >= range.first_line;
}

/**
 * The logchunks endpoint's range from its offset and limit (Buildbot's LogChunkEndpoint):
 * offset..offset+limit-1, or offset..num_lines-1 without a limit; null where Buildbot
 * answers "not found" (limit 0, an offset past the end without a limit, negatives).
 */
export function contentsRange(
  numLines: number,
  offset?: number | null,
  limit?: number | null,
): LineRange | null {
  const first = offset ?? 0;
  const last = limit == null ? Math.max(0, numLines - 1) : first + limit - 1;
  if (first < 0 || last < 0 || first > last) return null;
  return { first_line: first, last_line: last };
}

/** The range a raw download reads: every line, and line 0 of an empty log. */
export function rawRange(numLines: number): LineRange {
  return { first_line: 0, last_line: Math.max(0, numLines - 1) };
}

/**
 * The bytes of the lines of `row` inside `range`, joined by \n, without a final newline.
 * LOG_CHUNK_INCONSISTENT where the row holds fewer lines than trimming needs.
 */
export function chunkLines(row: LogChunkRow, range: LineRange, options: DecodeOptions = {}): Uint8Array {
  const data = decode(row.compressed, row.content, options);
  let start = 0;
  let end = data.length;
  if (row.first_line < range.first_line) {
    let at = -1;
    for (let skip = range.first_line - row.first_line; skip > 0; skip--) {
      at = data.indexOf(NEWLINE, at + 1);
      if (at === -1) throw inconsistent(row, range);
    }
    start = at + 1;
  }
  if (row.last_line > range.last_line) {
    let at = end;
    for (let drop = row.last_line - range.last_line; drop > 0; drop--) {
      at = at === 0 ? -1 : data.lastIndexOf(NEWLINE, at - 1);
      if (at < start) throw inconsistent(row, range);
    }
    end = at;
  }
  return data.subarray(start, end);
}

function inconsistent(row: LogChunkRow, range: LineRange): LogError {
  return new LogError(
    'LOG_CHUNK_INCONSISTENT',
    `chunk ${row.first_line}..${row.last_line} holds too few lines to cut out ${range.first_line}..${range.last_line}`,
  );
}

/** Rows must come by first_line without overlapping: LOG_CHUNK_ORDER otherwise. */
function checkOrder(row: LineRange, previousLast: number): void {
  if (row.first_line <= previousLast || row.last_line < row.first_line) {
    throw new LogError(
      'LOG_CHUNK_ORDER',
      `chunk ${row.first_line}..${row.last_line} is out of order (previous ended at ${previousLast})`,
    );
  }
}

/**
 * Buildbot's getLogLines: the text of lines range.first_line..range.last_line from the
 * rows that overlap it (rows outside the range are skipped), each line ending in \n;
 * '' when no row overlaps.
 */
export function readLogLines(
  rows: Iterable<LogChunkRow>,
  range: LineRange,
  options: DecodeOptions = {},
): string {
  checkRange(range);
  const pieces: Uint8Array[] = [];
  let size = 0;
  let previousLast = -1;
  for (const row of rows) {
    checkOrder(row, previousLast);
    previousLast = row.last_line;
    if (!overlaps(row, range)) continue;
    const piece = chunkLines(row, range, options);
    pieces.push(piece);
    size += piece.length + 1;
  }
  const joined = new Uint8Array(size);
  let at = 0;
  for (const piece of pieces) {
    joined.set(piece, at);
    at += piece.length;
    joined[at++] = NEWLINE;
  }
  return utf8.decode(joined);
}

/** Length of the UTF-8 sequence starting data[start], as far as data[..end] holds it. */
function firstCharLength(data: Uint8Array, start: number, end: number): number {
  const lead = data[start]!;
  if (lead < 0xc0) return 1;
  const want = lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
  let n = 1;
  while (n < want && start + n < end && (data[start + n]! & 0xc0) === 0x80) n++;
  return n;
}

/** \n in each byte of a 32-bit word. */
const NEWLINES = 0x0a0a0a0a;

/**
 * Lines joined by \n with the first character of each removed, preceded by a \n when
 * `separate`; written over `lines` itself (which must be the caller's to overwrite) and
 * answered as the start of it. Output never overtakes input: each line moves down by the
 * characters dropped before it (the separator takes the room of the first line's first
 * character; a first line that is empty leaves no room, and that one case copies).
 *
 * The rest of each line moves four bytes at a time, a word being tested for \n as a whole
 * (the zero-byte test of x = word ^ 0x0a0a0a0a: (x - 0x01010101) & ~x & 0x80808080 marks
 * the first \n exactly). On 40-byte lines this takes about 30 ns a line, where indexOf and
 * copyWithin per line took 45 (most of it the copyWithin call), a byte-by-byte loop 60, and
 * a subarray per line, with its allocation and garbage, about 140.
 */
function dropStreamChars(lines: Uint8Array, separate: boolean): Uint8Array {
  const len = lines.length;
  if (separate && (len === 0 || lines[0] === NEWLINE)) {
    const rest = dropStreamChars(lines, false);
    const out = new Uint8Array(rest.length + 1);
    out[0] = NEWLINE;
    out.set(rest, 1);
    return out;
  }
  const words = new DataView(lines.buffer, lines.byteOffset, len);
  let i = len > 0 && lines[0] !== NEWLINE ? firstCharLength(lines, 0, len) : 0;
  let o = 0;
  if (separate) lines[o++] = NEWLINE;
  for (;;) {
    // Move the rest of the line at i down to o, through its \n.
    let ended = false;
    while (i + 4 <= len) {
      const word = words.getUint32(i, true);
      const x = word ^ NEWLINES;
      const marks = (x - 0x01010101) & ~x & 0x80808080;
      if (marks !== 0) {
        // Byte by byte up to the \n: the word's bytes after it are the next line's, unread.
        const n = ((31 - Math.clz32(marks & -marks)) >> 3) + 1;
        for (let k = 0; k < n; k++) lines[o + k] = word >>> (8 * k);
        o += n;
        i += n;
        ended = true;
        break;
      }
      words.setUint32(o, word, true);
      o += 4;
      i += 4;
    }
    while (!ended && i < len) {
      const c = lines[i++]!;
      lines[o++] = c;
      ended = c === NEWLINE;
    }
    if (!ended) return lines.subarray(0, o);
    if (i < len && lines[i] !== NEWLINE) i += firstCharLength(lines, i, len);
  }
}

export interface RawLogOptions extends DecodeOptions {
  /**
   * The rows' content is the stream's to overwrite (rows fresh from the database): stdio
   * lines are then cut in place instead of in a copy.
   */
  ownsContent?: boolean;
}

/**
 * A raw download, one row at a time: push each row (ordered by first_line, batches
 * welcome) and send what it returns. Holds nothing between rows but a flag and a line
 * number, so a log of any size streams in constant memory.
 */
export class RawLogStream {
  private readonly range: LineRange;
  private started = false;
  private previousLast = -1;

  constructor(
    private readonly type: LogType,
    numLines: number,
    private readonly options: RawLogOptions = {},
  ) {
    this.range = rawRange(numLines);
  }

  /** The bytes this row adds to the body (empty for a row outside the log's lines). */
  push(row: LogChunkRow): Uint8Array {
    checkOrder(row, this.previousLast);
    this.previousLast = row.last_line;
    if (!overlaps(row, this.range)) return new Uint8Array(0);
    const lines = chunkLines(row, this.range, this.options);
    if (this.type !== 's') {
      const out = new Uint8Array(lines.length + 1);
      out.set(lines);
      out[lines.length] = NEWLINE;
      return out;
    }
    // Codes other than 0 decode into a new buffer; code 0 answers the row's own bytes.
    const own = this.options.ownsContent || row.compressed !== 0 ? lines : new Uint8Array(lines);
    const separate = this.started;
    this.started = true;
    return dropStreamChars(own, separate);
  }
}

/** The raw body of a log, streamed: yields one piece per row that holds lines of it. */
export async function* rawLogBytes(
  rows: Iterable<LogChunkRow> | AsyncIterable<LogChunkRow>,
  type: LogType,
  numLines: number,
  options: DecodeOptions = {},
): AsyncGenerator<Uint8Array> {
  const stream = new RawLogStream(type, numLines, options);
  for await (const row of rows) {
    const piece = stream.push(row);
    if (piece.length > 0) yield piece;
  }
}
