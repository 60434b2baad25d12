// Finding many strings at once in a text, in time linear in the text (an Aho-Corasick
// automaton): what a build's output is searched for is written by whoever wrote the build,
// and a text made to nearly match a long needle at every position would make a search of
// each needle in turn (or a backtracking regular expression of them all) take the text's
// length times the needle's. Redaction needs the parts of the text that some needle covers,
// not which needles matched: every match ending at a position is a suffix of the longest
// one ending there, so the longest match ending at each position is enough to know the
// union of them all, and that is one number per state of the automaton.
//
// Measured (`node --import tsx load/bench/redact.ts`, CPU time on the shared 2-core machine):
// 3,000,000 lines of 35 characters cleaned in 0.9 s with five secrets in use, one of them a
// 27-line key (47 ms with none: the matcher is not built until a secret is used); 10,000,000
// characters of near misses of a 3,001-character secret in 138 ms, against 44 ms for as
// much ordinary text: linear, a constant apart.

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

export class CoverMatcher {
  private readonly next: Map<number, number>[] = [new Map()];
  private readonly rootDense = new Int32Array(DENSE).fill(-1);
  private fail: Int32Array;
  /** Length of the longest needle ending at each state (0: none). */
  private outLen: Int32Array;
  private outNeedle: Int32Array;
  /** How many characters of some needle each state has read. */
  private depth: Int32Array;

  constructor(needles: readonly string[]) {
    const own: [number, number][] = [];
    needles.forEach((n, i) => {
      if (!n) return;
      let s = 0;
      for (let k = 0; k < n.length; k++) {
        const c = n.charCodeAt(k);
        let t = this.next[s]!.get(c);
        if (t === undefined) {
          t = this.next.length;
          this.next.push(new Map());
          this.next[s]!.set(c, t);
        }
        s = t;
      }
      own.push([s, i]);
    });
    const size = this.next.length;
    this.fail = new Int32Array(size);
    this.outLen = new Int32Array(size);
    this.outNeedle = new Int32Array(size).fill(-1);
    const depth = new Int32Array(size);
    this.depth = depth;
    const ownNeedle = new Int32Array(size).fill(-1);
    for (const [s, i] of own) if (ownNeedle[s] === -1) ownNeedle[s] = i;
    for (const [c, t] of this.next[0]!) if (c < DENSE) this.rootDense[c] = t;
    // Breadth first: a state's failure (its longest proper suffix that is a prefix of some
    // needle) is shallower, so already known.
    const queue: number[] = [0];
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      for (const [c, t] of this.next[s]!) {
        depth[t] = depth[s]! + 1;
        if (s !== 0) {
          let f = this.fail[s]!;
          while (f !== 0 && !this.next[f]!.has(c)) f = this.fail[f]!;
          this.fail[t] = this.next[f]!.get(c) ?? 0;
        }
        const f = this.fail[t]!;
        if (ownNeedle[t] !== -1) {
          this.outLen[t] = depth[t]!;
          this.outNeedle[t] = ownNeedle[t]!;
        } else {
          this.outLen[t] = this.outLen[f]!;
          this.outNeedle[t] = this.outNeedle[f]!;
        }
        queue.push(t);
      }
    }
  }

  private step(s: number, c: number): number {
    let state = s;
    for (;;) {
      if (state === 0) return c < DENSE ? Math.max(this.rootDense[c]!, 0) : (this.next[0]!.get(c) ?? 0);
      const t = this.next[state]!.get(c);
      if (t !== undefined) return t;
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
