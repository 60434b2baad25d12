// Output, as it arrives in arbitrary pieces, into lines of bounded size. A line ends at \n,
// at \r\n and at a lone \r, as Buildbot's LineBoundaryFinder ends them (a \r at the very end
// of the output ends its line too: the store takes no \r). The store keeps at most
// MAX_CHUNK_SIZE bytes of a line (core/logs/chunking.ts), so an unfinished line keeps only
// that many UTF-16 units (never fewer bytes), and of the rest only its size in bytes.
//
// Each piece is scanned once, from where the last scan stopped: the work is constant per
// byte, whatever the length of the line. The writer this replaced joined the unfinished line
// with each new piece and scanned the whole of it again, so a line of n bytes cost n²: a
// 100 MB one held the master's event loop, its probes and every build on it for about 100 s
// (docs/security.md, "Issue 28, item 2"). 40 MB without a newline in 32 KiB pieces: 88.9 s
// before, 0.01 s now; 3,000,000 short lines: 0.36 s before, 0.41 s now (a loaded 2-core
// machine: `npx tsx load/bench/long-line.ts 40`).
import { MAX_CHUNK_SIZE } from '../../core/logs/chunking.js';

/** What is done to each line before it is stored (the build's Redactor: redact.ts). */
export interface LineCleaner {
  clean(line: string): string;
  /** Where the head of a cut line may end without splitting a secret. */
  safeCut(text: string): number;
}

export const AS_IS: LineCleaner = { clean: (l) => l, safeCut: (t) => t.length };

/** A line of output: what was kept of it, and how many of its bytes were not. */
export interface SplitLine {
  text: string;
  /** UTF-8 bytes of the line past `text` (0: the line is whole). */
  dropped: number;
}

export class LineSplitter {
  private head = '';
  private dropped = 0;
  /** The last piece ended its line with \r: a \n that follows is part of that line end. */
  private afterCR = false;

  /** `keep`: UTF-16 units kept of a line (its head); the rest is counted, not kept. */
  constructor(private readonly keep = MAX_CHUNK_SIZE) {}

  /** The lines `text` ends (with the unfinished one before it). */
  push(text: string): SplitLine[] {
    const lines: SplitLine[] = [];
    let at = 0;
    if (this.afterCR && text.startsWith('\n')) at = 1;
    if (text.length > 0) this.afterCR = false;
    // Where the next \r is, found once and looked for again only once passed: indexOf for
    // each line would scan to the end of a piece without \r for every line in it.
    let cr = text.indexOf('\r', at);
    while (at < text.length) {
      if (cr !== -1 && cr < at) cr = text.indexOf('\r', at);
      const lf = text.indexOf('\n', at);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) {
        this.add(text, at, text.length);
        break;
      }
      this.add(text, at, end);
      lines.push(this.take());
      at = end + 1;
      if (text.charCodeAt(end) === 13) {
        if (at === text.length) this.afterCR = true;
        else if (text.charCodeAt(at) === 10) at++;
      }
    }
    return lines;
  }

  /** The unfinished line, if there is one (the output ended without a newline). */
  flush(): SplitLine | null {
    this.afterCR = false;
    return this.head === '' && this.dropped === 0 ? null : this.take();
  }

  private add(text: string, from: number, to: number): void {
    if (from === to) return;
    const room = this.keep - this.head.length;
    const split = Math.min(to, from + Math.max(room, 0));
    if (split > from) this.head += text.slice(from, split);
    if (split < to) this.dropped += Buffer.byteLength(text.slice(split, to));
  }

  private take(): SplitLine {
    const line = { text: this.head, dropped: this.dropped };
    this.head = '';
    this.dropped = 0;
    return line;
  }
}

/**
 * A line as the store gets it: redacted, then cut to `maxBytes` with a marker if it is
 * longer or was cut already. The head of a cut line is redacted after its end has been moved
 * back before any secret it would split, so that no part of a secret is kept.
 */
export function storedLine({ text, dropped }: SplitLine, cleaner: LineCleaner, maxBytes: number): string {
  if (dropped === 0) return fitLine(cleaner.clean(text), maxBytes);
  const total = Buffer.byteLength(text) + dropped;
  return fitLine(cleaner.clean(text.slice(0, cleaner.safeCut(text))), maxBytes, total);
}

/**
 * A whole message (already redacted) as a finished text log's content: its lines, each cut
 * as storedLine cuts them and ended by \n (an empty message is one empty line).
 */
export function logText(message: string): string {
  const s = new LineSplitter();
  const lines = s.push(message);
  const rest = s.flush();
  if (rest) lines.push(rest);
  if (lines.length === 0) return '\n';
  return lines.map((l) => `${storedLine(l, AS_IS, MAX_CHUNK_SIZE)}\n`).join('');
}

// The marker's longest form (any byte count a log can hold), so that room for it is kept
// before the marker's numbers are known.
const MARKER_ROOM = Buffer.byteLength(marker(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));

function marker(total: number, kept: number): string {
  return ` … [line cut: ${total} bytes long, the first ${kept} kept]`;
}

/**
 * A line as stored: whole when it fits `maxBytes` (UTF-8) and nothing of it was dropped
 * (`total` unset); else cut between characters and ended with a marker that says so, the
 * whole within `maxBytes`. `total`: the length in bytes of a line that was cut before this.
 */
export function fitLine(text: string, maxBytes: number, total?: number): string {
  if (total === undefined && text.length * 3 <= maxBytes) return text;
  const size = Buffer.byteLength(text);
  if (size <= maxBytes && total === undefined) return text;
  const kept = headBytes(text, maxBytes - MARKER_ROOM);
  return text.slice(0, kept.units) + marker(total ?? size, kept.bytes);
}

/** The longest head of `text` of at most `max` UTF-8 bytes that ends between characters. */
function headBytes(text: string, max: number): { units: number; bytes: number } {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const high = c >= 0xd800 && c <= 0xdbff;
    // The first half of a pair whose second half was cut off.
    if (high && i + 1 === text.length) break;
    const pair = high && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    // A lone surrogate is stored as U+FFFD, 3 bytes.
    const n = pair ? 4 : c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (bytes + n > max) break;
    bytes += n;
    i += pair ? 2 : 1;
  }
  return { units: i, bytes };
}
