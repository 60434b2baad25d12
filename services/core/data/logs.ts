// Logs: addLog, appendLog, finishLog, compressLog. The chunk layout is services/core/logs'
// (Buildbot 3.7's split and merge); this file adds the rows, the locks and the events.
//
// Buildbot facts (buildbot/db/logs.py, buildbot/data/logs.py, buildbot/util/lineboundaries.py):
// - the slug is forceIdentifier(50, name); on a clash with another log's slug in the step,
//   incrementIdentifier until free (`foo bar` and `foo_bar` get `foo_bar`, `foo_bar_2`). The
//   contract adds that a second log with the same *name* is a key error: DUPLICATE_LOG;
// - types are s (stdio), t (text), h (html); a new log is incomplete with 0 lines;
// - appended text ends with \n; the process layer has already turned \r\n, a lone \r and
//   cursor moves into \n, so text carrying \r is refused (BAD_LOG_TEXT);
// - appended chunks are compressed with the master's logCompressionMethod (default gz),
//   kept only if smaller; num_lines = last line + 1; Buildbot 3.7 reads codes 0-3 only, so
//   gz is the default here too and zstd (4) is for clusters without a 3.7 reader;
// - events carry the log entity (not the text) under logs/<id> and steps/<stepid>/logs/<slug>:
//   `new`, `append`, `finished`; compressLog produces none.
// - compressLog merges consecutive rows into groups of at most 64 KiB of stored bytes and
//   1,000 lines and swaps each group's rows for the merged row in one transaction, so a
//   reader sees the old rows or the new, never neither. We repeat the pass until it finds
//   nothing to merge (a merged row is smaller than its parts, so a second pass of Buildbot's
//   could merge again); thus a second compressLog changes nothing.
// Rows of one log are serialized on the log's row lock: appends, finish and compression.
import { many, maybeOne, one, type SQLQuery, sql } from '../db/pool.js';
import { log as logEntity } from '../entities/log.js';
import { ConflictError, InputError, invalid, noSuch } from '../errors.js';
import { logKeys } from '../events/keys.js';
import { forceIdentifier, incrementIdentifier } from '../identifiers.js';
import { appendChunks, mergeChunks, planCompressLog } from '../logs/chunking.js';
import { type CompressionCode, type CompressionMethod, compressionCode } from '../logs/codecs.js';
import type { LogChunkRow, LogType } from '../logs/types.js';
import { writtenEntity } from './entities.js';
import type { Tx } from './transaction.js';

const SLUG_LENGTH = 50;

/** Which codec stores chunks: a Buildbot method name (`gz`, `zstd`...) or a compression code. */
export type LogCodec = CompressionMethod | CompressionCode;

export interface LogCodecOption {
  /** Default `gz`, which every Buildbot reads. */
  codec?: LogCodec;
}

function codeOf(codec: LogCodec | undefined): CompressionCode {
  if (codec === undefined) return 1;
  return typeof codec === 'number' ? codec : compressionCode(codec);
}

type LogEntity = { logid: number; stepid: number; slug: string };

/** A write of one log (RETURNING *) and its event, the log as written; undefined when no row was. */
async function written(
  tx: Tx,
  write: SQLQuery,
  event: string,
  also?: SQLQuery,
): Promise<LogEntity | undefined> {
  const l = await writtenEntity<LogEntity>(tx.q, logEntity, write, also);
  if (l) tx.out.addAll(logKeys(l), event, l);
  return l;
}

async function lockLog(tx: Tx, logid: number): Promise<{ num_lines: number; complete: number }> {
  const log = await maybeOne<{ num_lines: number; complete: number }>(
    tx.q,
    sql`SELECT num_lines, complete FROM logs WHERE id = ${logid} FOR NO KEY UPDATE`,
  );
  if (!log) throw noSuch(`log ${logid}`);
  return log;
}

export async function addLog(tx: Tx, stepid: number, name: string, type: LogType): Promise<number> {
  if (type !== 's' && type !== 't' && type !== 'h')
    throw invalid(`log type must be one of s, t, h, not ${JSON.stringify(type)}`);
  // The step's lock and the name's check in one statement, the row and its entity in another
  // (writtenEntity): four statements were two (load/results/fleet.md, 2026-11-29 00:40).
  const step = await maybeOne<{ dup: boolean }>(
    tx.q,
    sql`SELECT EXISTS (SELECT 1 FROM logs WHERE stepid = ${stepid} AND name = ${name}) AS dup
        FROM steps WHERE id = ${stepid} FOR NO KEY UPDATE`,
  );
  if (!step) throw noSuch(`step ${stepid}`);
  if (step.dup)
    throw new ConflictError(
      'DUPLICATE_LOG',
      `step ${stepid} has a log named ${JSON.stringify(name)} already`,
    );
  let slug = forceIdentifier(SLUG_LENGTH, name);
  for (;;) {
    const l = await written(
      tx,
      sql`INSERT INTO logs (name, slug, stepid, complete, num_lines, type)
          VALUES (${name}, ${slug}, ${stepid}, 0, 0, ${type})
          ON CONFLICT (stepid, slug) DO NOTHING RETURNING *`,
      'new',
    );
    if (l) return l.logid;
    slug = incrementIdentifier(SLUG_LENGTH, slug);
  }
}

/**
 * Append newline-terminated UNIX text. Returns the first and last line numbers written.
 * NOT_FOUND, BAD_LOG_TEXT, or LOG_FINISHED for a log that is complete.
 */
export async function appendLog(
  tx: Tx,
  logid: number,
  text: string,
  options: LogCodecOption = {},
): Promise<{ first_line: number; last_line: number }> {
  if (!text.endsWith('\n')) throw new InputError('BAD_LOG_TEXT', 'log text must end with a newline');
  if (text.includes('\r')) throw new InputError('BAD_LOG_TEXT', 'log text must use UNIX newlines (no \\r)');
  const log = await lockLog(tx, logid);
  if (log.complete) throw new ConflictError('LOG_FINISHED', `log ${logid} is finished`);
  const { rows, numLines } = appendChunks(text, log.num_lines, codeOf(options.codec));
  // The chunks, the count and the entity in one statement after the lock: four were two.
  const update = sql`UPDATE logs SET num_lines = ${numLines} WHERE id = ${logid} RETURNING *`;
  await written(tx, update, 'append', rows.length ? chunksInsert(logid, rows) : undefined);
  return { first_line: log.num_lines, last_line: numLines - 1 };
}

function chunksInsert(logid: number, rows: readonly LogChunkRow[]): SQLQuery {
  const values = rows.map(
    (r) =>
      sql`(${logid}, ${r.first_line}, ${r.last_line}, ${Buffer.from(r.content.buffer, r.content.byteOffset, r.content.byteLength)}, ${r.compressed})`,
  );
  return sql`INSERT INTO logchunks (logid, first_line, last_line, content, compressed) VALUES ${sql.join(values, sql`, `)}`;
}

async function insertChunks(tx: Tx, logid: number, rows: readonly LogChunkRow[]): Promise<void> {
  if (rows.length > 0) await tx.q.query(chunksInsert(logid, rows));
}

/** Mark a log complete; false (and no event) if it was already. */
export async function finishLog(tx: Tx, logid: number): Promise<boolean> {
  // One statement where there were three (lock, update, entity read): the UPDATE takes the
  // row's lock itself and sees `complete` as the appends that held it left it.
  const done = await written(
    tx,
    sql`UPDATE logs SET complete = 1 WHERE id = ${logid} AND complete = 0 RETURNING *`,
    'finished',
  );
  if (done) return true;
  await lockLog(tx, logid); // NOT_FOUND for no such log; else it was finished already
  return false;
}

/**
 * Merge a finished log's chunks up to Buildbot's limits and store them with `codec`
 * (default gz). Returns the bytes saved. LOG_NOT_FINISHED for a log still being written.
 */
export async function compressLog(tx: Tx, logid: number, options: LogCodecOption = {}): Promise<number> {
  const code = codeOf(options.codec);
  const log = await lockLog(tx, logid);
  if (!log.complete) throw new ConflictError('LOG_NOT_FINISHED', `log ${logid} is not finished`);
  const size = async () => {
    const r = await one<{ n: number }>(
      tx.q,
      sql`SELECT coalesce(sum(length(content)), 0)::bigint AS n FROM logchunks WHERE logid = ${logid}`,
    );
    return r.n;
  };
  const before = await size();
  for (;;) {
    const extents = await many<{ first_line: number; last_line: number; length: number }>(
      tx.q,
      sql`SELECT first_line, last_line, coalesce(length(content), 0) AS length
          FROM logchunks WHERE logid = ${logid} ORDER BY first_line`,
    );
    const plan = planCompressLog(extents);
    if (plan.length === 0) break;
    for (const range of plan) {
      const within = sql`logid = ${logid} AND first_line >= ${range.first_line} AND last_line <= ${range.last_line}`;
      const rows = await many<LogChunkRow>(
        tx.q,
        sql`SELECT first_line, last_line, coalesce(content, ''::bytea) AS content, compressed
            FROM logchunks WHERE ${within} ORDER BY first_line`,
      );
      const merged = mergeChunks(rows, code);
      await tx.q.query(sql`DELETE FROM logchunks WHERE ${within}`);
      await insertChunks(tx, logid, [merged]);
    }
  }
  return before - (await size());
}
