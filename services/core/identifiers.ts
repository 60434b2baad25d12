// The rules for the names and ids that appear in URLs, configuration and the database, in
// one place. Buildbot itself has two kinds of identifier:
// - a URL identifier (buildbot/util/pathmatch.py, buildbot/data/types.py Identifier): ASCII
//   letters, digits, `_`, `-` and `.`, not starting with a digit or `.`; the names in paths
//   (`builders/i:buildername`), identifier fields of filters, and names in the configuration;
// - a name identifier (buildbot/util/identifiers.py): a letter, `_`, `-` or any character
//   from U+00A0 up, then also digits, no `.`; worker names and log slugs. forceIdentifier
//   makes one from any string (log slugs), incrementIdentifier makes the next on a clash
//   (`slug` -> `slug_2` -> `slug_3`). Lengths count code points, as Python's str and
//   PostgreSQL's varchar do, not UTF-16 units. Python's `$` also matches before a final
//   newline; we copy that where Buildbot relies on it.
// Every id, number and timestamp column is a 32-bit integer: a larger number names nothing.

/** The largest value of PostgreSQL's `integer`, the type of every id column. */
export const INT32_MAX = 2 ** 31 - 1;

/** An integer that an `integer` column can hold (a priority, a timestamp). */
export const isInt32 = (n: unknown): n is number => Number.isInteger(n) && Math.abs(n as number) <= INT32_MAX;

/** An integer that can be an id: 0 up to INT32_MAX. */
export const isId = (n: unknown): n is number =>
  Number.isInteger(n) && (n as number) >= 0 && (n as number) <= INT32_MAX;

const ID_DIGITS = /^\d{1,10}$/;

/**
 * The id a path segment names: plain digits only (unlike Python's int(), no sign, spaces or
 * underscores: /builds/+1 and /builds/1_0 name no build), within 32 bits; else null.
 */
export function idOfSegment(segment: string): number | null {
  if (!ID_DIGITS.test(segment)) return null;
  const n = Number(segment);
  return n <= INT32_MAX ? n : null;
}

export const URL_IDENTIFIER = /^[a-zA-Z_-][.a-zA-Z0-9_-]*$/;

/** A URL identifier (see above) of at most `maxLength` characters. */
export function isUrlIdentifier(s: string, maxLength = Number.POSITIVE_INFINITY): boolean {
  return URL_IDENTIFIER.test(s) && s.length <= maxLength;
}

/** Length in code points (what Python's len() and PostgreSQL's varchar(n) count). */
export const codePoints = (s: string): number => Array.from(s).length;

/** The first `n` code points of `s` (Python's s[:n]). */
export const headCodePoints = (s: string, n: number): string =>
  Array.from(s).slice(0, Math.max(0, n)).join('');

const IDENT = /^[a-zA-Z\u00a0-\u{10ffff}_-][a-zA-Z0-9\u00a0-\u{10ffff}_-]*\n?$/u;

export function isIdentifier(maxLength: number, s: string): boolean {
  return IDENT.test(s) && s.length > 0 && codePoints(s) <= maxLength;
}

/** A valid identifier of at most `maxLength` code points made from `s` (a log's slug from its name). */
export function forceIdentifier(maxLength: number, s: string): string {
  if (isIdentifier(maxLength, s)) return s;
  return headCodePoints(s, maxLength)
    .replace(/^[^a-zA-Z_-]/u, '_')
    .replace(/[^a-zA-Z0-9_-]/gu, '_');
}

/** The next identifier after a clash: a trailing `_N` becomes `_N+1`, otherwise `_2` is added. */
export function incrementIdentifier(maxLength: number, ident: string): string {
  let base = ident;
  let num = 1;
  const m = /_([0-9]+)(?=\n?$)/.exec(ident);
  if (m) {
    base = ident.slice(0, m.index);
    num = Number.parseInt(m[1]!, 10);
  }
  const suffix = `_${num + 1}`;
  if (suffix.length > maxLength) throw new RangeError('cannot generate a larger identifier');
  return headCodePoints(base, maxLength - suffix.length) + suffix;
}
