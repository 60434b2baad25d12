// The statements the API's reads of a log's lines and downloads run
// (services/api/read/logs.ts): a log's chunks or, once moved to the object store, its index,
// whether it is moved, and the names its inline download starts with.
import { many, type RowSource, type SQLQuery, sql } from '../db/pool.js';

/**
 * The setting a download through a binary COPY takes the log's id from (rawLogChunks): COPY
 * has no bind parameters, and no value is ever written into SQL text.
 */
export const RAW_LOG_SETTING = 'flotilla.raw_log';

/**
 * A log's chunks (content) in line order, the lines given by `lines`; a moved log's rows are its
 * index instead: no content, the key and the place in the object. Columns: first_line,
 * last_line, compressed, content, key, byte_offset, byte_length (in that order: the COPY's
 * rows are read by position).
 */
export const logChunksOrIndex = (logid: SQLQuery, lines: SQLQuery = sql`true`): SQLQuery => sql`
  SELECT first_line, last_line, compressed, content, NULL::text AS key, NULL::int8 AS byte_offset,
         NULL::int4 AS byte_length
  FROM logchunks WHERE logid = ${logid} AND ${lines}
  UNION ALL
  SELECT c.first_line, c.last_line, c.compressed, NULL::bytea, o.key, c.byte_offset, c.byte_length
  FROM flotilla.log_object_chunks c JOIN flotilla.log_objects o ON o.logid = c.logid
  WHERE c.logid = ${logid} AND ${lines}
  ORDER BY first_line`;

/** Every chunk (or index row) of the log named by RAW_LOG_SETTING: one text, prepared once. */
export const rawLogChunks: SQLQuery = logChunksOrIndex(sql`current_setting('flotilla.raw_log')::int`);

/** Whether a log was moved to the object store. */
export async function logIsMoved(db: RowSource, logid: number): Promise<boolean> {
  return (await many(db, sql`SELECT 1 AS ok FROM flotilla.log_objects WHERE logid = ${logid}`)).length > 0;
}

export interface LogBuildNames {
  builder: string | null;
  number: number | null;
  worker: string | null;
}

/** The builder, build number and worker of a log's build; null when the log does not exist. */
export async function logBuildNames(db: RowSource, logid: number): Promise<LogBuildNames | null> {
  const rows = await many<LogBuildNames>(
    db,
    sql`
      SELECT bl.name AS builder, b.number, w.name AS worker
      FROM logs l JOIN steps s ON s.id = l.stepid JOIN builds b ON b.id = s.buildid
      LEFT JOIN builders bl ON bl.id = b.builderid LEFT JOIN workers w ON w.id = b.workerid
      WHERE l.id = ${logid}`,
  );
  return rows[0] ?? null;
}
