// Finding many strings at once in a text, in time linear in the text (an Aho-Corasick
// automaton): what a build's output is searched for is written by whoever wrote the build,
// and a text made to nearly match a long needle at every position would make a search of
// each needle in turn (or a backtracking regular expression of them all) take the text's
// length times the needle's. Redaction needs the parts of the text that some needle covers,
// not which needles matched: every match ending at a position is a suffix of the longest
// one ending there, so the longest match ending at each position is enough to know the
// union of them all, and that is one number per state of the automaton.
//
// Measured (`node --expose-gc --import tsx load/bench/redact.ts`, CPU time on the shared
// 2-core machine): 3,000,000 lines of 35 characters cleaned in 0.96 s with five secrets in
// use, one of them a 27-line key (62 ms with none: the matcher is not built until a secret
// is used); 10,000,000 characters of near misses of a 3,001-character secret in 135 ms,
// against 54 ms for as much ordinary text: linear, a constant apart.

export interface Covered {
  start: number;
  /** One past its last character. */
  end: number;
  /** The needle of its longest match, the first of equals (its index in the list the matcher was built from). */
  needle: number;
}

// Characters below this take an array slot at the root (most text is ASCII, and most of it
// starts no needle); the others a map entry.
const DENSE = 128;

// Most states of a long needle have one way on: it is kept in two numbers, and only states
// with several in a map. With a map for every state, a build's redactor held 4.1 MB for a
// 3,311-character key; this way, 0.5 MB (the last line of load/bench/redact.ts; the first
// figure with commit f908e52's cover-matches.ts in place of this one).
const NONE = -1;

export class CoverMatcher {
  private readonly rootDense = new Int32Array(DENSE).fill(NONE);
  private readonly oneChar: Int32Array;
  private readonly oneNext: Int32Array;
  private readonly several = new Map<number, Map<number, number>>();
  private readonly fail: Int32Array;
  /** Length of the longest needle ending at each state (0: none). */
  private readonly outLen: Int32Array;
  private readonly outNeedle: Int32Array;
  /** How many characters of some needle each state has read. */
  private readonly depth: Int32Array;

  constructor(needles: readonly string[]) {
    // Built with a map per state, kept compact once built.
    const next: Map<number, number>[] = [new Map()];
    const own: [number, number][] = [];
    needles.forEach((n, i) => {
      if (!n) return;
      let s = 0;
      for (let k = 0; k < n.length; k++) {
        const c = n.charCodeAt(k);
        let t = next[s]!.get(c);
        if (t === undefined) {
          t = next.length;
          next.push(new Map());
          next[s]!.set(c, t);
        }
        s = t;
      }
      own.push([s, i]);
    });
    const size = next.length;
    this.fail = new Int32Array(size);
    this.outLen = new Int32Array(size);
    this.outNeedle = new Int32Array(size).fill(NONE);
    this.depth = new Int32Array(size);
    const ownNeedle = new Int32Array(size).fill(NONE);
    for (const [s, i] of own) if (ownNeedle[s] === NONE) ownNeedle[s] = i;
    // Breadth first: a state's failure (its longest proper suffix that is a prefix of some
    // needle) is shallower, so already known.
    const queue: number[] = [0];
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      for (const [c, t] of next[s]!) {
        this.depth[t] = this.depth[s]! + 1;
        if (s !== 0) {
          let f = this.fail[s]!;
          while (f !== 0 && !next[f]!.has(c)) f = this.fail[f]!;
          this.fail[t] = next[f]!.get(c) ?? 0;
        }
        const f = this.fail[t]!;
        const mine = ownNeedle[t] !== NONE;
        this.outLen[t] = mine ? this.depth[t]! : this.outLen[f]!;
        this.outNeedle[t] = mine ? ownNeedle[t]! : this.outNeedle[f]!;
        queue.push(t);
      }
    }
    this.oneChar = new Int32Array(size).fill(NONE);
    this.oneNext = new Int32Array(size);
    next.forEach((m, s) => {
      if (m.size === 1) {
        const [c, t] = m.entries().next().value!;
        this.oneChar[s] = c;
        this.oneNext[s] = t;
      } else if (m.size > 1) this.several.set(s, m);
    });
    for (const [c, t] of next[0]!) if (c < DENSE) this.rootDense[c] = t;
  }

  /** Where state `s` goes on character `c`, if it has a way on. */
  private goto(s: number, c: number): number {
    if (s === 0 && c < DENSE) return this.rootDense[c]!;
    if (this.oneChar[s] === c) return this.oneNext[s]!;
    return this.several.get(s)?.get(c) ?? NONE;
  }

  private step(s: number, c: number): number {
    let state = s;
    for (;;) {
      const t = this.goto(state, c);
      if (t !== NONE) return t;
      if (state === 0) return 0;
      state = this.fail[state]!;
    }
  }

  /**
   * The parts of `text` that matches cover, in order, overlapping matches merged into one
   * part (matches that only touch stay apart); and how many characters at its end begin a
   * needle that the text ends too soon to show whole (the longest such, 0 if none).
   */
  scan(text: string): { parts: Covered[]; open: number } {
    const parts: Covered[] = [];
    let s = 0;
    for (let i = 0; i < text.length; i++) {
      s = this.step(s, text.charCodeAt(i));
      const len = this.outLen[s]!;
      if (len === 0) continue;
      const part: Covered = { start: i + 1 - len, end: i + 1, needle: this.outNeedle[s]! };
      let longest = len;
      // A match may reach back over parts found before it: they become one (each part is
      // merged once, so this stays linear).
      while (parts.length && parts[parts.length - 1]!.end > part.start) {
        const prev = parts.pop()!;
        if (prev.end - prev.start >= longest) {
          longest = prev.end - prev.start;
          part.needle = prev.needle;
        }
        part.start = Math.min(part.start, prev.start);
      }
      parts.push(part);
    }
    return { parts, open: this.depth[s]! };
  }
}
