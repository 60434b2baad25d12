// Output into bounded lines (services/master/builds/line-splitter.ts): where lines end,
// whatever the pieces; what is kept of a line too long to store and the marker that says so;
// characters never split by a cut; and a cut that never leaves part of a secret.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AS_IS,
  fitLine,
  LineSplitter,
  logText,
  type SplitLine,
  storedLine,
} from '../../../services/master/builds/line-splitter.js';
import { Redactor } from '../../../services/master/builds/redact.js';

/** Every line of `pieces` through one splitter, the unfinished last one included. */
function split(pieces: string[], keep?: number): SplitLine[] {
  const s = new LineSplitter(keep);
  const lines = pieces.flatMap((p) => s.push(p));
  const rest = s.flush();
  return rest ? [...lines, rest] : lines;
}

/** The same text cut into pieces at the given points. */
function cutAt(text: string, points: number[]): string[] {
  const at = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  return [0, ...at].map((from, i) => text.slice(from, at[i] ?? text.length));
}

/** Lines of a whole text: \r\n, \r and \n each end one. */
function reference(text: string): string[] {
  const lines = text.replace(/\r\n/g, '\n').replace(/\r/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

const utf8 = (s: string) => Buffer.byteLength(s);
const MARKER = / … \[line cut: (\d+) bytes long, the first (\d+) kept\]$/;

describe('LineSplitter: where lines end', () => {
  it('ends lines at \\n, \\r\\n and a lone \\r, in any pieces', () => {
    expect(split(['a\nb\r\nc\rd'])).toEqual(['a', 'b', 'c', 'd'].map((text) => ({ text, dropped: 0 })));
    // \r\n across two pieces is one line end; \r\r is two.
    expect(split(['a\r', '\nb\r', '\rc']).map((l) => l.text)).toEqual(['a', 'b', '', 'c']);
    // A \r that ends the output ends its line (the store takes no \r).
    expect(split(['a\r'])).toEqual([{ text: 'a', dropped: 0 }]);
    expect(split(['', 'a', '', '\r', '', '\n', 'b'])).toEqual([
      { text: 'a', dropped: 0 },
      { text: 'b', dropped: 0 },
    ]);
    expect(split(['\n\n'])).toEqual([
      { text: '', dropped: 0 },
      { text: '', dropped: 0 },
    ]);
  });

  it('finds the same lines as the whole text split at once, however it comes (property)', () => {
    const text = fc
      .array(fc.constantFrom('a', 'bc', 'é', '😀', '\n', '\r', '\r\n', ' '), { maxLength: 60 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 8 }), (t, points) => {
        const lines = split(cutAt(t, points));
        expect(lines.map((l) => l.text)).toEqual(reference(t));
        expect(lines.every((l) => l.dropped === 0)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('LineSplitter: a line longer than it keeps', () => {
  it('keeps the head and counts the rest in bytes, the next line whole', () => {
    expect(split(['0123456789abc\nnext\n'], 10)).toEqual([
      { text: '0123456789', dropped: 3 },
      { text: 'next', dropped: 0 },
    ]);
    // The rest counted in UTF-8 bytes: é is 2, ✓ 3.
    expect(split(['0123456789é✓', 'x'], 10)).toEqual([{ text: '0123456789', dropped: 6 }]);
  });

  it('keeps at most its bound of a line that never ends, and counts every byte of it', () => {
    const s = new LineSplitter(1000);
    const piece = 'y'.repeat(32 * 1024);
    for (let i = 0; i < 300; i++) expect(s.push(piece)).toEqual([]);
    expect(s.flush()).toEqual({ text: 'y'.repeat(1000), dropped: 300 * piece.length - 1000 });
    expect(s.flush()).toBeNull();
  });

  it('kept head and dropped bytes add up to the line, in any pieces (property)', () => {
    const text = fc
      .array(fc.constantFrom('a', 'bcd', 'é', '✓', '\n', '\r\n', 'x'.repeat(30)), { maxLength: 40 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(
        text,
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.integer({ min: 1, max: 40 }),
        (t, points, keep) => {
          const lines = split(cutAt(t, points), keep);
          const whole = reference(t);
          expect(lines).toHaveLength(whole.length);
          lines.forEach((l, i) => {
            expect(l.text).toBe(whole[i]!.slice(0, keep));
            expect(utf8(l.text) + l.dropped).toBe(utf8(whole[i]!));
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps a character whose halves come in two pieces whole', () => {
    const [a, b] = ['😀'.charAt(0), '😀'.charAt(1)];
    expect(split([`x${a}`, `${b}y\n`])).toEqual([{ text: 'x😀y', dropped: 0 }]);
  });
});

describe('fitLine: what the store gets of a line', () => {
  it('leaves a line that fits as it is', () => {
    expect(fitLine('short', 100)).toBe('short');
    expect(fitLine('é'.repeat(50), 100)).toBe('é'.repeat(50));
  });

  it('cuts a longer line, within the limit, with a marker giving both lengths', () => {
    const line = 'x'.repeat(3_000_000);
    const stored = fitLine(line, 65_535);
    expect(utf8(stored)).toBeLessThanOrEqual(65_535);
    const m = MARKER.exec(stored)!;
    expect(Number(m[1])).toBe(3_000_000);
    expect(stored).toBe('x'.repeat(Number(m[2])) + m[0]);
    // The marker takes little of the line.
    expect(Number(m[2])).toBeGreaterThan(65_400);
  });

  it('marks a line that was cut before, even when what is left fits', () => {
    expect(fitLine('head', 65_535, 10_000_000)).toMatch(
      /^head … \[line cut: 10000000 bytes long, the first 4 kept\]$/,
    );
  });

  it('never splits a character at the cut', () => {
    for (const ch of ['é', '✓', '😀']) {
      for (let lead = 0; lead < 4; lead++) {
        const line = 'a'.repeat(lead) + ch.repeat(200);
        for (const max of [150, 151, 152, 153]) {
          const stored = fitLine(line, max);
          expect(utf8(stored), `${ch} ${lead} ${max}`).toBeLessThanOrEqual(max);
          const head = stored.replace(MARKER, '');
          expect(line.startsWith(head)).toBe(true);
          expect(Buffer.from(head).toString()).toBe(head);
          expect(Number(MARKER.exec(stored)![2])).toBe(utf8(head));
        }
      }
    }
    // The first half of a pair whose second half was dropped is not kept.
    const cut = storedLine({ text: `abc${'😀'.charAt(0)}`, dropped: 3 }, AS_IS, 1000);
    expect(cut.replace(MARKER, '')).toBe('abc');
  });
});

describe('logText: a message as a finished log', () => {
  it('keeps a message of short lines as it is, with UNIX newlines and a final one', () => {
    expect(logText('')).toBe('\n');
    expect(logText('one')).toBe('one\n');
    expect(logText('one\r\ntwo\rthree\n\n')).toBe('one\ntwo\nthree\n\n');
  });

  it('cuts a line past what the store keeps, with the marker, and keeps the next', () => {
    const out = logText(`${'z'.repeat(3_000_000)}\nnext`).split('\n');
    expect(out).toHaveLength(3);
    expect(utf8(out[0]!)).toBeLessThanOrEqual(65_536);
    expect(MARKER.exec(out[0]!)![1]).toBe('3000000');
    expect(out.slice(1)).toEqual(['next', '']);
  });
});

describe('storedLine: secrets and the cut', () => {
  it('redacts a secret that came in two pieces', () => {
    const r = new Redactor();
    r.use('hunter2-secret', 'pw');
    const [line] = split(['log: hunter2-', 'secret ok\n']);
    expect(storedLine(line!, r, 1000)).toBe('log: <pw> ok');
  });

  it('moves a cut that would split a secret to before it', () => {
    const r = new Redactor();
    r.use('SECRETVALUE', 'pw');
    // The splitter keeps 10 units: 'abcdeSECRE'; the rest of the secret is dropped.
    const [line] = split(['abcdeSECRETVALUE and more\n'], 10);
    const stored = storedLine(line!, r, 1000);
    expect(stored).toMatch(/^abcde … \[line cut: 25 bytes long, the first 5 kept\]$/);
    // A whole secret before the cut is redacted and kept.
    const [whole] = split(['SECRETVALUE-abcdefghijk\n'], 15);
    expect(storedLine(whole!, r, 1000)).toMatch(/^<pw>-abc … \[line cut/);
  });

  it('keeps no part of any secret, wherever the cuts fall (property)', () => {
    // Secrets of capitals only, each its own letters; the rest of the text has none, so a
    // capital in what is stored is a piece of a secret.
    const secrets = ['ABCD', 'EFGHIJKLMNOP', 'QR', 'STUVWXYZ'];
    const r = new Redactor();
    for (const [i, s] of secrets.entries()) r.use(s, `s${i}`);
    const text = fc
      .array(fc.oneof(fc.constantFrom(...secrets), fc.constantFrom('a', 'bc', 'é', '😀', ' ', '\n')), {
        maxLength: 50,
      })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(
        text,
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 90, max: 120 }),
        (t, points, keep, max) => {
          const whole = reference(t);
          split(cutAt(t, points), keep).forEach((line, i) => {
            const stored = storedLine(line, r, max);
            expect(stored).not.toMatch(/[A-Z]/);
            expect(utf8(stored)).toBeLessThanOrEqual(max);
            const cleaned = r.clean(whole[i]!);
            if (line.dropped === 0 && utf8(cleaned) <= max) expect(stored).toBe(cleaned);
            else expect(cleaned.startsWith(stored.replace(MARKER, ''))).toBe(true);
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
