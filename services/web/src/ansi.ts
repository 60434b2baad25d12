// ANSI colours in log lines (SGR: ESC [ ... m): bold, dim, italic, underline, the 16
// colours as classes, 256-colour and true-colour as inline CSSOM colours (allowed under a
// CSP without 'unsafe-inline', unlike a style attribute). Other escape sequences (cursor
// moves, erase) are dropped. As in a terminal, what a line opens stays open on the lines
// after it until a reset: a line is parsed from the state the line above left (`start`),
// and `ansiEnd` gives the state it leaves. Which line is "above" is the log model's
// business (log-model.ts: per stream, as far up as the pages it holds).

export interface Segment {
  text: string;
  cls: string;
  color?: string;
  background?: string;
}

/** The SGR attributes open at a point of a log. Never changed in place: shared freely. */
export interface AnsiState {
  readonly fg: number | string | null;
  readonly bg: number | string | null;
  readonly bold: boolean;
  readonly dim: boolean;
  readonly italic: boolean;
  readonly underline: boolean;
}

type State = { -readonly [K in keyof AnsiState]: AnsiState[K] };

export const PLAIN: AnsiState = Object.freeze({
  fg: null,
  bg: null,
  bold: false,
  dim: false,
  italic: false,
  underline: false,
});

export function isPlain(s: AnsiState): boolean {
  return s === PLAIN || (s.fg === null && s.bg === null && !s.bold && !s.dim && !s.italic && !s.underline);
}

const PALETTE_16 = [0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5];

function color256(n: number): string {
  if (n < 16) {
    const base = n < 8 ? PALETTE_16[n]! : PALETTE_16[n - 8]! | 0x333333;
    return `#${base.toString(16).padStart(6, '0')}`;
  }
  if (n < 232) {
    const i = n - 16;
    const c = (v: number) => (v === 0 ? 0 : 55 + v * 40);
    return `rgb(${c(Math.floor(i / 36))},${c(Math.floor(i / 6) % 6)},${c(i % 6)})`;
  }
  const g = 8 + (n - 232) * 10;
  return `rgb(${g},${g},${g})`;
}

function apply(state: State, codes: number[]): void {
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i]!;
    if (c === 0)
      Object.assign(state, { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false });
    else if (c === 1) state.bold = true;
    else if (c === 2) state.dim = true;
    else if (c === 3) state.italic = true;
    else if (c === 4) state.underline = true;
    else if (c === 22) state.bold = state.dim = false;
    else if (c === 23) state.italic = false;
    else if (c === 24) state.underline = false;
    else if (c >= 30 && c <= 37) state.fg = c - 30;
    else if (c >= 90 && c <= 97) state.fg = c - 90 + 8;
    else if (c === 39) state.fg = null;
    else if (c >= 40 && c <= 47) state.bg = c - 40;
    else if (c >= 100 && c <= 107) state.bg = c - 100 + 8;
    else if (c === 49) state.bg = null;
    else if ((c === 38 || c === 48) && codes[i + 1] === 5 && codes[i + 2] !== undefined) {
      const v = color256(codes[i + 2]!);
      if (c === 38) state.fg = v;
      else state.bg = v;
      i += 2;
    } else if ((c === 38 || c === 48) && codes[i + 1] === 2 && codes[i + 4] !== undefined) {
      const v = `rgb(${codes[i + 2]},${codes[i + 3]},${codes[i + 4]})`;
      if (c === 38) state.fg = v;
      else state.bg = v;
      i += 4;
    }
  }
}

function segment(text: string, s: AnsiState): Segment {
  const cls: string[] = [];
  if (typeof s.fg === 'number') cls.push(`af${s.fg}`);
  if (typeof s.bg === 'number') cls.push(`ab${s.bg}`);
  if (s.bold) cls.push('a-bold');
  if (s.dim) cls.push('a-dim');
  if (s.italic) cls.push('a-italic');
  if (s.underline) cls.push('a-under');
  const seg: Segment = { text, cls: cls.join(' ') };
  if (typeof s.fg === 'string') seg.color = s.fg;
  if (typeof s.bg === 'string') seg.background = s.bg;
  return seg;
}

const ESCAPES = /\x1b\[([0-9;?]*)([A-Za-z])|\x1b[()][A-Za-z0-9]|\x1b[=>]/g;

/** Walks a line from `start`: its segments (when `emit`) and the state it leaves. */
function scan(line: string, start: AnsiState, emit: boolean): { segments: Segment[]; end: AnsiState } {
  const out: Segment[] = [];
  if (!line.includes('\x1b')) {
    if (emit) out.push(segment(line, start));
    return { segments: out, end: start };
  }
  const state: State = { ...start };
  let changed = false;
  let last = 0;
  for (const m of line.matchAll(ESCAPES)) {
    if (emit && m.index! > last) out.push(segment(line.slice(last, m.index), state));
    last = m.index! + m[0].length;
    if (m[2] === 'm') {
      apply(
        state,
        (m[1] || '0').split(';').map((x) => Number(x) || 0),
      );
      changed = true;
    }
  }
  if (emit && last < line.length) out.push(segment(line.slice(last), state));
  const end = !changed ? start : isPlain(state) ? PLAIN : Object.freeze(state);
  return { segments: out, end };
}

/** A line's coloured segments, from the state the line above left open (plain by default). */
export function parseAnsi(line: string, start: AnsiState = PLAIN): Segment[] {
  return scan(line, start, true).segments;
}

/** The state a line leaves open for the next one. */
export function ansiEnd(line: string, start: AnsiState = PLAIN): AnsiState {
  return scan(line, start, false).end;
}
