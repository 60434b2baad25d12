// Streaming replication, as the API's read routing sees it: where the primary's write-ahead
// log ends, how far a replica has replayed it, and (for tests and operators) pausing a
// replica's replay. Positions are PostgreSQL's LSNs ("16/B374D848"), compared as numbers.
import { one, type Queryable, sql } from '../db/pool.js';

/** An LSN as a number: the high and low 32 bits of "X/Y". */
export function lsnValue(text: string): bigint {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!m) throw new Error(`not an LSN: ${JSON.stringify(text.slice(0, 40))}`);
  return (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`);
}

/** The LSN as PostgreSQL writes it. */
export function lsnText(value: bigint): string {
  return `${(value >> 32n).toString(16).toUpperCase()}/${(value & 0xffffffffn).toString(16).toUpperCase()}`;
}

/**
 * Where the primary's log ends now: past the commit record of every transaction that has
 * committed. The insert position, not the write position (pg_current_wal_lsn): with
 * synchronous_commit off a commit record may not be written out yet, and a replica that has
 * replayed up to this position has replayed every such commit.
 */
export async function walInsertLsn(db: Queryable): Promise<bigint> {
  const row = await one<{ lsn: string }>(db, sql`SELECT pg_current_wal_insert_lsn()::text AS lsn`);
  return recordEnd(lsnValue(row.lsn));
}

const WAL_PAGE = 8192n;
const SHORT_PAGE_HEADER = 24n;

/**
 * The insert position just past a page's header is where the log would go on, not where it
 * ends: the last record ended on the page boundary, and that boundary is as far as a replica
 * can ever replay until something else is written (every 15 s on an idle server). A record
 * cannot end right after a short page header, so this is the same position. (The long header
 * that starts a segment is not taken back: its size can also be a record's end elsewhere.)
 */
function recordEnd(lsn: bigint): bigint {
  return lsn % WAL_PAGE === SHORT_PAGE_HEADER ? lsn - SHORT_PAGE_HEADER : lsn;
}

/**
 * A position at or past the commit of every transaction that committed before this call,
 * that the primary has also flushed, so that its replicas are sure to get there. Read inside
 * a transaction that takes a transaction id and commits synchronously: its commit record
 * follows the position and is flushed with all before it. (With synchronous_commit off, a
 * commit's record waits for the WAL writer, and records after it that are not commits may
 * wait for the next checkpoint: a replica could then sit short of a bare insert position for
 * many seconds.) Costs one flush: for after a client's write, not for every read.
 */
export async function flushedWritePosition(db: Queryable): Promise<bigint> {
  return await db.tx(async (t) => {
    await t.query(sql`SET LOCAL synchronous_commit = on`);
    const row = await one<{ lsn: string }>(
      t,
      sql`SELECT pg_current_wal_insert_lsn()::text AS lsn, txid_current() AS xid`,
    );
    return lsnValue(row.lsn);
  });
}

export interface ReplayState {
  /** False: the server is a primary (a promoted replica, or a wrong URL). */
  inRecovery: boolean;
  /** How far it has replayed; null on a primary. */
  replayed: bigint | null;
  paused: boolean;
}

/** A replica's replay position, read on the replica. */
export async function replayState(db: Queryable): Promise<ReplayState> {
  const row = await one<{ in_recovery: boolean; replayed: string | null; paused: boolean }>(
    db,
    sql`SELECT pg_is_in_recovery() AS in_recovery, pg_last_wal_replay_lsn()::text AS replayed,
               CASE WHEN pg_is_in_recovery() THEN pg_get_wal_replay_pause_state() <> 'not paused'
                    ELSE false END AS paused`,
  );
  return {
    inRecovery: row.in_recovery,
    replayed: row.replayed === null ? null : lsnValue(row.replayed),
    paused: row.paused,
  };
}

/** Stop applying the log on a replica (it keeps receiving it). Needs a superuser (or a grant). */
export async function pauseReplay(db: Queryable): Promise<void> {
  await db.query(sql`SELECT pg_wal_replay_pause()`);
}

export async function resumeReplay(db: Queryable): Promise<void> {
  await db.query(sql`SELECT pg_wal_replay_resume()`);
}

/** The server's major version (15 for 15.x): a replica must run the same. */
export async function serverMajor(db: Queryable): Promise<number> {
  const row = await one<{ major: number }>(
    db,
    sql`SELECT current_setting('server_version_num')::int / 10000 AS major`,
  );
  return row.major;
}

/** A bare node-postgres client (the API's listening connection has no @databases pool). */
export interface TextQueryable {
  query(text: string): Promise<{ rows: unknown[] }>;
}

/** walInsertLsn on a bare client: the write notices' fence, when replicas need positions. */
export async function walInsertLsnOn(client: TextQueryable): Promise<bigint> {
  const res = await client.query('SELECT pg_current_wal_insert_lsn()::text AS lsn');
  return recordEnd(lsnValue((res.rows[0] as { lsn: string }).lsn));
}
