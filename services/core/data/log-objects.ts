// Finished logs in the object store (migration 0029, docs/object-store.md): what the move-log
// job reads and records (services/master/jobs/move-log.ts), and the garbage retention clears.
//
// The move is upload first, then one transaction (recordLogObject): under the log's row lock
// (the lock appends, finish and compressLog take), the chunks are checked to be the ones that
// were uploaded, the object and its index are recorded, and the chunks deleted. So a reader
// that reads chunks and index in one statement (services/api/read/logs.ts) sees the chunks or
// the object, never neither and never both; a job run twice finds the log moved and records
// nothing; a master that dies between upload and commit leaves an object under the key its
// retry writes again (the key names the log and the hash of the object's bytes).
import { many, maybeOne, type Queryable, sql } from '../db/pool.js';
import type { IndexedChunk } from '../logs/log-object.js';
import type { LogChunkRow } from '../logs/types.js';
import type { Tx } from './transaction.js';

/** What a chunk was in PostgreSQL: the check that the uploaded chunks are still the log's. */
export interface UploadedChunk {
  first_line: number;
  last_line: number;
  compressed: number;
  length: number;
}

export type LogMoveState = 'gone' | 'open' | 'deleted' | 'moved' | 'in-database';

/** Where a log stands for a move. */
export async function logMoveState(q: Queryable, logid: number): Promise<LogMoveState> {
  const row = await maybeOne<{ complete: number; type: string; moved: boolean }>(
    q,
    sql`SELECT l.complete, l.type, EXISTS (SELECT 1 FROM flotilla.log_objects o WHERE o.logid = l.id) AS moved
        FROM logs l WHERE l.id = ${logid}`,
  );
  if (!row) return 'gone';
  if (row.moved) return 'moved';
  if (row.type === 'd') return 'deleted';
  return row.complete ? 'in-database' : 'open';
}

/**
 * What each chunk of a log holds in PostgreSQL, in line order, without its content: what a
 * move reads first (octet_length of a bytea reads its size, not its content), then checks the
 * chunks against as it reads them (logChunkContents) and as it records (recordLogObject).
 */
export function logChunkList(q: Queryable, logid: number): Promise<UploadedChunk[]> {
  return many<UploadedChunk>(
    q,
    sql`SELECT first_line, last_line, compressed, coalesce(octet_length(content), 0) AS length
        FROM logchunks WHERE logid = ${logid} ORDER BY first_line`,
  );
}

/** The chunks of a log that begin at these lines, in line order: a move reads a part's worth at a time. */
export function logChunkContents(
  q: Queryable,
  logid: number,
  firstLines: readonly number[],
): Promise<LogChunkRow[]> {
  return many<LogChunkRow>(
    q,
    sql`SELECT first_line, last_line, coalesce(content, ''::bytea) AS content, compressed
        FROM logchunks WHERE logid = ${logid} AND first_line = ANY(${firstLines}::int[]) ORDER BY first_line`,
  );
}

/** Whether two reads of a chunk saw the same chunk (compressLog rewrites chunks it merges). */
export const sameChunk = (a: UploadedChunk, b: UploadedChunk): boolean =>
  a.first_line === b.first_line &&
  a.last_line === b.last_line &&
  a.compressed === b.compressed &&
  Number(a.length) === Number(b.length);

/**
 * Records a log's object and index and deletes its chunks, if its chunks are still `uploaded`
 * (compressLog may have merged them since). `moved`; `already` when a run before did it;
 * `changed` (upload again); `gone` (deleted, or marked deleted, meanwhile: the object is not
 * wanted).
 */
export async function recordLogObject(
  tx: Tx,
  logid: number,
  object: { key: string; bytes: number; chunks: readonly IndexedChunk[] },
  uploaded: readonly UploadedChunk[],
): Promise<'moved' | 'already' | 'changed' | 'gone'> {
  const log = await maybeOne<{ type: string; complete: number }>(
    tx.q,
    sql`SELECT type, complete FROM logs WHERE id = ${logid} FOR NO KEY UPDATE`,
  );
  if (!log || log.type === 'd' || !log.complete) return 'gone';
  const done = await maybeOne(tx.q, sql`SELECT 1 AS ok FROM flotilla.log_objects WHERE logid = ${logid}`);
  if (done) return 'already';
  const now = await many<UploadedChunk>(
    tx.q,
    sql`SELECT first_line, last_line, compressed, coalesce(length(content), 0) AS length
        FROM logchunks WHERE logid = ${logid} ORDER BY first_line`,
  );
  const same = now.length === uploaded.length && now.every((c, i) => sameChunk(c, uploaded[i]!));
  if (!same) return 'changed';
  await tx.q.query(
    sql`INSERT INTO flotilla.log_objects (logid, key, bytes) VALUES (${logid}, ${object.key}, ${object.bytes})`,
  );
  if (object.chunks.length > 0) {
    const col = <K extends keyof IndexedChunk>(k: K) => object.chunks.map((c) => c[k]);
    await tx.q.query(sql`
      INSERT INTO flotilla.log_object_chunks (logid, first_line, last_line, compressed, byte_offset, byte_length)
      SELECT ${logid}, * FROM unnest(${col('first_line')}::int[], ${col('last_line')}::int[],
        ${col('compressed')}::smallint[], ${col('byte_offset')}::bigint[], ${col('byte_length')}::int[])`);
  }
  await tx.q.query(sql`DELETE FROM logchunks WHERE logid = ${logid}`);
  return 'moved';
}

/** The key of a moved log's object; undefined for a log not moved. */
export async function logObjectKeyOf(q: Queryable, logid: number): Promise<string | undefined> {
  const row = await maybeOne<{ key: string }>(
    q,
    sql`SELECT key FROM flotilla.log_objects WHERE logid = ${logid}`,
  );
  return row?.key;
}

/**
 * Deletes up to `limit` object records of logs marked deleted (type 'd'); their keys go to
 * the garbage (the trigger). How many went.
 */
export async function dropDeletedLogObjects(q: Queryable, limit: number): Promise<number> {
  const rows = await many(
    q,
    sql`DELETE FROM flotilla.log_objects WHERE logid IN (
          SELECT o.logid FROM flotilla.log_objects o JOIN logs l ON l.id = o.logid
          WHERE l.type = 'd' ORDER BY o.logid LIMIT ${limit} FOR UPDATE OF o SKIP LOCKED)
        RETURNING 1 AS ok`,
  );
  return rows.length;
}

/** Up to `limit` keys of objects to delete from the store, oldest first. */
export async function objectGarbage(q: Queryable, limit: number): Promise<string[]> {
  const rows = await many<{ key: string }>(
    q,
    sql`SELECT key FROM flotilla.object_garbage ORDER BY since, key LIMIT ${limit}`,
  );
  return rows.map((r) => r.key);
}

/** The store no longer has these objects: forget them. */
export async function forgetObjectGarbage(q: Queryable, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await q.query(sql`DELETE FROM flotilla.object_garbage WHERE key = ANY(${keys}::text[])`);
}
