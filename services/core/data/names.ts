// Buildbot's name hashes, so that both find each other's rows: hashColumns
// (buildbot/db/base.py) is the sha1 hex of the values' UTF-8 joined by NUL, None written as
// the byte 0xf5, other values as str(); a name_hash (masters, builders, tags, schedulers,
// changesources) is hashColumns(name), the sha1 of the UTF-8 name alone. The rules of
// identifiers themselves are in ../identifiers.ts.
import { createHash } from 'node:crypto';
import { maybeOne, one, sql } from '../db/pool.js';
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
  const byHash = sql`SELECT id FROM ${t} WHERE name_hash = ${hash}`;
  const found = await maybeOne<{ id: number }>(tx.q, byHash);
  if (found) return found.id;
  if (!autoCreate) return null;
  const row = await maybeOne<{ id: number }>(
    tx.q,
    sql`INSERT INTO ${t} (name, name_hash) VALUES (${name}, ${hash}) ON CONFLICT (name_hash) DO NOTHING RETURNING id`,
  );
  // Lost the race to another creator: theirs is committed and visible to a new statement.
  return (row ?? (await one<{ id: number }>(tx.q, byHash))).id;
}
