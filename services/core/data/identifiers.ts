// Buildbot's names and hashes, so that both find each other's rows:
// - hashColumns (buildbot/db/base.py): sha1 hex of the values' UTF-8 joined by NUL, None
//   written as the byte 0xf5, other values as str(); a name_hash (masters, builders, tags,
//   schedulers, changesources) is hashColumns(name), the sha1 of the UTF-8 name alone.
// - identifiers (buildbot/util/identifiers.py): an identifier is a letter, `_`, `-` or any
//   character from U+00A0 up, then also digits; forceIdentifier makes one from any string
//   (log slugs), incrementIdentifier makes the next on a clash (`slug` -> `slug_2` -> `slug_3`).
//   Lengths count code points, as Python's str and PostgreSQL's varchar do, not UTF-16 units.
//   Python's `$` also matches before a final newline; we copy that where Buildbot relies on it.
import { createHash } from 'node:crypto';
import { sql } from '../db/pool.js';
import type { Tx } from './transaction.js';

export function hashColumns(values: readonly (string | number | null | undefined)[]): string {
  const parts = values.map((v) =>
    v === null || v === undefined ? Buffer.from([0xf5]) : Buffer.from(String(v), 'utf8'),
  );
  const joined: Buffer[] = [];
  parts.forEach((p, i) => {
    if (i > 0) joined.push(Buffer.from([0]));
    joined.push(p);
  });
  return createHash('sha1').update(Buffer.concat(joined)).digest('hex');
}

/** The name_hash column of masters, builders, tags, schedulers and changesources. */
export const nameHash = (name: string): string => hashColumns([name]);

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

/** Tables whose rows are found by name_hash and hold nothing but (id, name, name_hash). */
export type NamedTable = 'builders' | 'tags' | 'schedulers' | 'changesources';

/**
 * Buildbot's findSomethingId by name_hash: the row's id, created if missing (unless
 * `autoCreate` is false: null then). Safe against a concurrent creation of the same name.
 */
export async function findNamedId(
  tx: Tx,
  table: NamedTable,
  name: string,
  autoCreate = true,
): Promise<number | null> {
  const hash = nameHash(name);
  const t = sql.ident(table);
  const find = async () =>
    (await tx.q.query(sql`SELECT id FROM ${t} WHERE name_hash = ${hash}`))[0]?.id as number | undefined;
  const found = await find();
  if (found !== undefined) return found;
  if (!autoCreate) return null;
  const [row] = await tx.q.query(
    sql`INSERT INTO ${t} (name, name_hash) VALUES (${name}, ${hash}) ON CONFLICT (name_hash) DO NOTHING RETURNING id`,
  );
  return row ? (row.id as number) : (await find())!;
}
