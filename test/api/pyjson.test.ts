// Buildbot's JSON as Python writes it (reply/pyjson.ts): the compact writer, built for
// speed, must agree byte for byte with a plain reference writer on any value.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderEnvelope } from '../../services/api/query/envelope.js';
import { pyDumps } from '../../services/api/reply/pyjson.js';

/** Python's ensure_ascii escaping, one UTF-16 unit at a time. */
function referenceString(s: string): string {
  const named: Record<string, string> = {
    '"': '\\"',
    '\\': '\\\\',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\b': '\\b',
    '\f': '\\f',
  };
  let out = '"';
  for (const ch of s.split('')) {
    const c = ch.charCodeAt(0);
    out += named[ch] ?? (c < 0x20 || c >= 0x7f ? `\\u${c.toString(16).padStart(4, '0')}` : ch);
  }
  return `${out}"`;
}

/**
 * The straightforward writer: sort every object's keys, recurse, join, escape strings its own
 * way. Numbers it leaves to the code under test: they are checked against Python's own
 * output by the fixed cases below.
 */
function reference(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return referenceString(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return pyDumps([v]).slice(1, -1);
  if (Array.isArray(v)) return `[${v.map(reference).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${referenceString(k)}:${reference(o[k])}`).join(',')}}`;
}

describe('pyDumps, compact', () => {
  it('matches the reference writer on random values (unicode, unsorted keys, nesting)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        expect(pyDumps(v)).toBe(reference(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts keys by code point and escapes everything outside printable ASCII', () => {
    expect(pyDumps({ b: 1, a: [true, null, 'é\n\u007f'], B: {} })).toBe(
      '{"B":{},"a":[true,null,"\\u00e9\\n\\u007f"],"b":1}',
    );
    expect(pyDumps({ x: 1.5, y: 1e21, z: -0.000001 })).toBe('{"x":1.5,"y":1e+21,"z":-1e-06}');
  });

  it('indents by two spaces with ": " in the text form', () => {
    expect(pyDumps({ b: [1], a: {} }, 2)).toBe('{\n  "a": {},\n  "b": [\n    1\n  ]\n}');
  });
});

describe('pages read as arrays of values (query/compile.ts)', () => {
  it('render as the same entities given as objects would, in both forms', () => {
    const names = fc.uniqueArray(fc.string({ unit: 'binary', maxLength: 8 }), { maxLength: 6 });
    fc.assert(
      fc.property(
        names.chain((ns) =>
          fc.record({
            names: fc.constant([...ns].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))),
            rows: fc.array(
              fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: ns.length, maxLength: ns.length }),
              {
                maxLength: 4,
              },
            ),
            plural: fc.constantFrom('builds', 'workers', 'masters', 'logs'),
            total: fc.option(fc.nat(), { nil: null }),
          }),
        ),
        ({ names, rows, plural, total }) => {
          const objects = rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])));
          for (const accept of ['application/json', 'text/html']) {
            const got = renderEnvelope({ plural, rows, names, total }, accept);
            const want = renderEnvelope({ plural, rows: objects, total }, accept);
            expect(got).toEqual(want);
          }
        },
      ),
    );
  });
});

describe('numbers as Python writes floats', () => {
  it.each([
    [1.5, '1.5'],
    [-0.000001, '-1e-06'],
    [0.0001, '0.0001'],
    [0.00012345, '0.00012345'],
    [1e-7, '1e-07'],
    [123456.789, '123456.789'],
    [1e16, '1e+16'],
    [1.5e16, '1.5e+16'],
    [2.5e-300, '2.5e-300'],
    [1e21, '1e+21'],
    // An integer below 1e16 is written as one (JSON cannot tell 2.0 from 2).
    [9007199254740992, '9007199254740992'],
    [42, '42'],
    [-3, '-3'],
  ])('%s -> %s', (n, text) => {
    expect(pyDumps(n)).toBe(text);
  });
});
