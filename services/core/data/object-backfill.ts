// What the object-store backfill (services/master/jobs/object-backfill.ts) walks: logs and
// artifacts still in PostgreSQL that a move would take, in id order from a cursor, a batch at a
// time. Logs and artifacts that finished before a store was configured, and moves that failed
// for good (a job failed as stalled twice), are found the same way: by where the bytes are.
//
// Logs are found through logchunks, not logs: a moved log has no chunks left, so after a year
// of moves the logs table is almost all moved logs, and a walk over it would read them all each
// time. A loose index scan (one probe of logchunks_firstline per log: the smallest logid past
// the last) costs per log still holding chunks, whatever the size of either table.
// Measured (2026-11-28, PostgreSQL 15, `psql -X -q -f load/bench/object-store/backfill-explain.sql`)
// on 1,000,000 logs of which one in a thousand is not moved (5 chunks each), spread over the
// ids: a batch of 100 is 100 Index Only Scan probes of logchunks_firstline and 100 of
// logs_pkey, 0.9-4.8 ms from the middle of the ids (two runs, on a shared 2-core machine);
// the same batch walked over logs anti-joined to log_objects read some 200,000 rows of each,
// 401-691 ms.
// Artifacts: a partial index of those complete and not moved (migration 0039) holds exactly
// the ones to move: a batch of 100 from the middle of 1,000,000 is 0.17 ms with it, 25.6-26.5 ms
// (100,000 rows read and filtered out) without.
import { many, type Queryable, sql } from '../db/pool.js';

/** One batch of the walk: the ids to move, and where the next batch starts (null: the end). */
export interface BackfillBatch {
  ids: number[];
  next: number | null;
}

/**
 * Up to `limit` logs past `after` that hold chunks, of which those finished and not marked
 * deleted are to move (an open log moves when it finishes; one marked deleted is retention's).
 */
export async function logsToBackfill(q: Queryable, after: number, limit: number): Promise<BackfillBatch> {
  const rows = await many<{ logid: number; movable: boolean }>(
    q,
    sql`WITH RECURSIVE held(logid) AS (
          SELECT (SELECT min(logid) FROM logchunks WHERE logid > ${after})
          UNION ALL
          SELECT (SELECT min(c.logid) FROM logchunks c WHERE c.logid > held.logid)
          FROM held WHERE held.logid IS NOT NULL
        ), batch AS (SELECT logid FROM held WHERE logid IS NOT NULL LIMIT ${limit})
        SELECT b.logid, (l.complete <> 0 AND l.type <> 'd') AS movable
        FROM batch b JOIN logs l ON l.id = b.logid ORDER BY b.logid`,
  );
  return batchOf(
    rows.map((r) => ({ id: r.logid, movable: r.movable })),
    limit,
  );
}

/** Up to `limit` complete artifacts past `after`, still in PostgreSQL (any size moves, in parts). */
export async function artifactsToBackfill(
  q: Queryable,
  after: number,
  limit: number,
): Promise<BackfillBatch> {
  const rows = await many<{ id: number; movable: boolean }>(
    q,
    sql`SELECT id, true AS movable FROM flotilla.artifacts
        WHERE complete AND object_key IS NULL AND id > ${after}
        ORDER BY id LIMIT ${limit}`,
  );
  return batchOf(rows, limit);
}

function batchOf(rows: readonly { id: number; movable: boolean }[], limit: number): BackfillBatch {
  const last = rows[rows.length - 1];
  return {
    ids: rows.filter((r) => r.movable).map((r) => r.id),
    next: rows.length < limit || !last ? null : last.id,
  };
}
