// Buildbot's name hashes, so that both find each other's rows: hashColumns
// (buildbot/db/base.py) is the sha1 hex of the values' UTF-8 joined by NUL, None written as
// the byte 0xf5, other values as str(); a name_hash (masters, builders, tags, schedulers,
// changesources) is hashColumns(name), the sha1 of the UTF-8 name alone. The rules of
// identifiers themselves are in ../identifiers.ts.
import { createHash } from 'node:crypto';
import { many, maybeOne, one, sql } from '../db/pool.js';
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

/**
 * findNamedId for many names in a few statements, whatever their number: name -> id. The
 * names that exist are read at once (a master's restart creates nothing); the missing ones are
 * inserted in one statement, in the order given (ids in configuration order, as one by one),
 * and read again.
 */
export async function findNamedIds(
  tx: Tx,
  table: NamedTable,
  names: readonly string[],
): Promise<Map<string, number>> {
  const unique = [...new Set(names)];
  const hashes = unique.map(nameHash);
  const t = sql.ident(table);
  const read = async () =>
    new Map(
      (
        await many<{ id: number; name_hash: string }>(
          tx.q,
          sql`SELECT id, name_hash FROM ${t} WHERE name_hash = ANY(${hashes}::text[])`,
        )
      ).map((r) => [r.name_hash, r.id]),
    );
  let byHash = await read();
  const missing = unique.filter((_, i) => !byHash.has(hashes[i]!));
  if (missing.length > 0) {
    await tx.q.query(sql`
      INSERT INTO ${t} (name, name_hash)
      SELECT n, h FROM unnest(${missing}::text[], ${missing.map(nameHash)}::text[]) WITH ORDINALITY AS x(n, h, o)
      ORDER BY o
      ON CONFLICT (name_hash) DO NOTHING`);
    byHash = await read();
  }
  return new Map(unique.map((name, i) => [name, byHash.get(hashes[i]!)!]));
}
