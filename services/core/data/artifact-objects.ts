// Finished artifacts in the object store (migration 0030, docs/object-store.md): what the
// move-artifact job reads and records (services/master/jobs/move-artifact.ts), and where
// readers find an artifact's bytes (services/core/artifacts/read.ts).
//
// The move is upload first, then one transaction (recordArtifactObject): under the artifact's
// row lock, the key is recorded and the large object unlinked. A reader reads the row and its
// bytes in one statement (artifactBytesAt), so it sees the large object or the key, never
// neither: a download that straddles the move reads its first ranges from PostgreSQL and the
// rest from the store, the same bytes (a complete artifact never changes).
import { maybeOne, type Queryable, type RowSource, sql } from '../db/pool.js';
import type { Tx } from './transaction.js';

export type ArtifactMoveState = 'gone' | 'open' | 'moved' | 'in-database';

/** Where an artifact stands for a move, and its length. */
export async function artifactMoveState(
  q: Queryable,
  id: number,
): Promise<{ state: ArtifactMoveState; length: number }> {
  const row = await maybeOne<{ complete: boolean; moved: boolean; length: number }>(
    q,
    sql`SELECT complete, object_key IS NOT NULL AS moved, length::float8 AS length
        FROM flotilla.artifacts WHERE id = ${id}`,
  );
  if (!row) return { state: 'gone', length: 0 };
  const state = row.moved ? 'moved' : row.complete ? 'in-database' : 'open';
  return { state, length: row.length };
}

/** A complete artifact's whole large object (undefined: gone, or moved meanwhile). */
export async function artifactLargeObject(q: Queryable, id: number): Promise<Buffer | undefined> {
  const row = await maybeOne<{ data: Buffer }>(
    q,
    sql`SELECT lo_get(object) AS data FROM flotilla.artifacts
        WHERE id = ${id} AND complete AND object_key IS NULL`,
  );
  return row?.data;
}

/**
 * Records a complete artifact's object and unlinks its large object, if it is still the
 * artifact of `length` bytes that was uploaded. `moved`; `already` when a run before did it;
 * `gone` (deleted or replaced meanwhile: the object is not wanted).
 */
export async function recordArtifactObject(
  tx: Tx,
  id: number,
  object: { key: string; length: number },
): Promise<'moved' | 'already' | 'gone'> {
  const row = await maybeOne<{ key: string | null; lo: number; complete: boolean; length: number }>(
    tx.q,
    sql`SELECT object_key AS key, object AS lo, complete, length::float8 AS length
        FROM flotilla.artifacts WHERE id = ${id} FOR UPDATE`,
  );
  if (!row?.complete || row.length !== object.length) return 'gone';
  if (row.key !== null) return 'already';
  await tx.q.query(
    sql`UPDATE flotilla.artifacts SET object_key = ${object.key}, object = NULL WHERE id = ${id}`,
  );
  await tx.q.query(sql`SELECT lo_unlink(${row.lo}::oid)`);
  return 'moved';
}

/** The key of a moved artifact's object; undefined for one not moved (or gone). */
export async function artifactObjectKeyOf(q: Queryable, id: number): Promise<string | undefined> {
  const row = await maybeOne<{ key: string | null }>(
    q,
    sql`SELECT object_key AS key FROM flotilla.artifacts WHERE id = ${id}`,
  );
  return row?.key ?? undefined;
}

/**
 * Up to `length` bytes of a complete artifact from `offset`, in one statement: the bytes when
 * they are in PostgreSQL, else the key of the object that holds them. undefined: no such
 * complete artifact, or `offset` at or past its end.
 */
export function artifactBytesAt(
  q: RowSource,
  id: number,
  offset: number,
  length: number,
): Promise<{ data: Buffer | null; key: string | null; total: number } | undefined> {
  return maybeOne(
    q,
    sql`SELECT CASE WHEN object_key IS NULL THEN lo_get(object, ${offset}, ${length}) END AS data,
               object_key AS key, length::float8 AS total
        FROM flotilla.artifacts WHERE id = ${id} AND complete AND ${offset}::bigint < length`,
  );
}
