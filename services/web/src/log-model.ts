// The lines of one log, held a page at a time: only the pages on screen are read
// (/logs/<id>/contents?offset&limit, 1,000 lines, one stored chunk's worth), at most
// MAX_PAGES kept, the least recently used dropped. Live lines (`logs/<id>/lines` events)
// extend the pages they continue; a page that does not hold every line the log is known to
// have is read again, so a gap (lines missed while /ws was away, or written while a page
// was being read) always closes and no line is lost. Live lines that come ahead of their
// page (a read of it in flight, whose answer ends before them) are kept, up to AHEAD_MAX, and
// continue the page once the read lands: without them, a log written fast on a loaded machine
// read its last page again and again, each answer older than the lines that came meanwhile,
// and its newest lines showed '…' for as long as it ran (CI of 2026-11-29, test/web/ui.test.ts).
//
// Colours carry from line to line (ansi.ts): the state each line starts in is worked out
// a page at a time from the state the page above ends in, and kept until that page or one
// above it changes. Only pages held are walked, so a page whose page above is not held
// (the end of a long log opened directly) starts plain; it is walked again, and its colours
// may change, once the page above arrives. In a stdio log each stream (stdout, stderr,
// headers) carries its own state, as the two pipes the worker reads are two terminals' worth
// of escapes, interleaved only by arrival.

import type { LogLinesMessage } from '../../core/api-shapes.js';
import { type AnsiState, ansiEnd, PLAIN } from './ansi.js';
import { apiUrl } from './api.js';

export const PAGE = 1000;
const MAX_PAGES = 64;
const MAX_IN_FLIGHT = 2;
/** Live lines kept ahead of their page: a page's worth (a longer gap is read over REST). */
const AHEAD_MAX = PAGE;

/** The state open per stream ('o', 'e', 'h' in a stdio log; '' in any other). */
type Streams = Readonly<Record<string, AnsiState>>;
const NONE: Streams = Object.freeze({});

/** A stdio line's stream and text (its first character names the stream). */
export function streamOf(text: string, stdio: boolean): [stream: string, body: string] {
  if (stdio && text.length > 0 && 'oeh'.includes(text[0]!)) return [text[0]!, text.slice(1)];
  return ['', text];
}

export class LogModel {
  private readonly pages = new Map<number, string[]>();
  private readonly inFlight = new Set<number>();
  private wanted: number[] = [];
  /** Live lines that came ahead of the text before them, by line index (see the header). */
  private readonly ahead = new Map<number, string>();
  /** Per page: the states its lines start in, and the state it leaves (see the header). */
  private readonly carried = new Map<number, { n: number; starts: Streams[]; end: Streams }>();
  numLines: number;
  /** Bumped whenever something on screen may have changed. */
  version = 0;
  error: string | null = null;
  onChange: () => void = () => {};

  constructor(
    readonly logid: number,
    numLines: number,
    /** A stdio log: each line's first character names its stream. */
    readonly stdio = false,
  ) {
    this.numLines = numLines;
  }

  /** The colours open where line i (0-based) starts, left by the lines above it. */
  startState(i: number): AnsiState {
    const text = this.line(i);
    const c = this.carry(Math.floor(i / PAGE));
    if (text === null || !c) return PLAIN;
    return c.starts[i % PAGE]![streamOf(text, this.stdio)[0]] ?? PLAIN;
  }

  private carry(page: number): { n: number; starts: Streams[]; end: Streams } | null {
    const lines = this.pages.get(page);
    if (!lines) return null;
    const have = this.carried.get(page);
    if (have && have.n === lines.length) return have;
    let state = page > 0 ? (this.carry(page - 1)?.end ?? NONE) : NONE;
    const starts: Streams[] = [];
    for (const text of lines) {
      starts.push(state);
      const [stream, body] = streamOf(text, this.stdio);
      const before = state[stream] ?? PLAIN;
      const after = ansiEnd(body, before);
      if (after !== before) state = { ...state, [stream]: after };
    }
    const c = { n: lines.length, starts, end: state };
    this.carried.set(page, c);
    return c;
  }

  /** Page p changed: what it and the pages below it carry is worked out again. */
  private uncarry(page: number): void {
    for (const p of this.carried.keys()) if (p >= page) this.carried.delete(p);
  }

  /** The text of line i (0-based), or null while it is being read. */
  line(i: number): string | null {
    const p = this.pages.get(Math.floor(i / PAGE));
    return p?.[i % PAGE] ?? null;
  }

  private complete(page: number): boolean {
    const p = this.pages.get(page);
    if (!p) return false;
    return p.length >= Math.min(PAGE, this.numLines - page * PAGE);
  }

  /** The lines [first, last) are on screen: read the pages they need, nearest first. */
  want(first: number, last: number): void {
    const pages: number[] = [];
    for (let p = Math.floor(first / PAGE); p <= Math.floor(Math.max(first, last - 1) / PAGE); p++) {
      if (p * PAGE < this.numLines && !this.complete(p)) pages.push(p);
    }
    this.wanted = pages;
    this.pump();
  }

  private pump(): void {
    for (const p of this.wanted) {
      if (this.inFlight.size >= MAX_IN_FLIGHT) return;
      if (this.inFlight.has(p) || this.complete(p)) continue;
      void this.read(p);
    }
  }

  private async read(page: number): Promise<void> {
    this.inFlight.add(page);
    try {
      const res = await fetch(apiUrl(`logs/${this.logid}/contents`, { offset: page * PAGE, limit: PAGE }), {
        headers: { accept: 'application/json' },
        credentials: 'same-origin',
      });
      if (!res.ok) throw new Error(`${res.status} ${(await res.text()).slice(0, 200)}`);
      const body = (await res.json()) as { logchunks: { firstline: number; content: string }[] };
      const chunk = body.logchunks[0];
      const lines = chunk ? splitLines(chunk.content) : [];
      const have = this.pages.get(page);
      // Live lines may have arrived meanwhile: keep whichever holds more.
      if (!have || have.length < lines.length) this.store(page, lines);
      this.numLines = Math.max(this.numLines, page * PAGE + lines.length);
      this.continueAhead();
      this.error = null;
    } catch (err) {
      this.error = `reading lines ${page * PAGE + 1}-${(page + 1) * PAGE}: ${(err as Error).message}`;
    } finally {
      this.inFlight.delete(page);
      this.version++;
      this.onChange();
      if (!this.error) this.pump();
    }
  }

  private store(page: number, lines: string[]): void {
    this.uncarry(page);
    this.pages.delete(page);
    this.pages.set(page, lines);
    while (this.pages.size > MAX_PAGES) {
      const oldest = this.pages.keys().next().value as number;
      if (this.wanted.includes(oldest)) break;
      this.pages.delete(oldest);
      this.carried.delete(oldest);
    }
  }

  /** New lines from /ws: appended where they continue a page, else kept until they do. */
  append(m: LogLinesMessage): void {
    const lines = splitLines(m.content);
    for (let k = 0; k < lines.length; k++) {
      const i = m.firstline + k;
      if (!this.extend(i, lines[k]!) && this.line(i) === null) this.keepAhead(i, lines[k]!);
    }
    this.continueAhead();
    this.numLines = Math.max(this.numLines, m.firstline + lines.length);
    this.version++;
    this.onChange();
    this.pump();
  }

  /** Line i appended to its page, if it continues that page (a new page: if the one above is whole). */
  private extend(i: number, text: string): boolean {
    const page = Math.floor(i / PAGE);
    const at = i % PAGE;
    let p = this.pages.get(page);
    if (!p && at === 0 && (page === 0 || this.complete(page - 1))) {
      p = [];
      this.pages.set(page, p);
    }
    if (!p || at !== p.length) return false;
    p.push(text);
    this.uncarry(page);
    return true;
  }

  private keepAhead(i: number, text: string): void {
    this.ahead.set(i, text);
    // The oldest kept go first: a gap that long is read over REST anyway.
    for (const old of this.ahead.keys()) {
      if (this.ahead.size <= AHEAD_MAX) break;
      this.ahead.delete(old);
    }
  }

  /** The kept lines that now continue their pages, in order; those already held, dropped. */
  private continueAhead(): void {
    if (!this.ahead.size) return;
    for (const i of [...this.ahead.keys()].sort((a, b) => a - b)) {
      const text = this.ahead.get(i)!;
      if (this.line(i) !== null || this.extend(i, text)) this.ahead.delete(i);
    }
  }

  /** What REST says now (after a reconnect, or a log event): the gap is read on demand. */
  setNumLines(n: number): void {
    if (n <= this.numLines) return;
    this.numLines = n;
    this.version++;
    this.onChange();
    this.pump();
  }
}

/** Lines of a logchunk's content: each line ends with \n (the last one may not). */
export function splitLines(content: string): string[] {
  if (content === '') return [];
  const lines = content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
