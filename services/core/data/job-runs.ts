// The background jobs that have had their effect (migration 0017): how a job that BullMQ
// delivers more than once has its effect once.
//
// BullMQ runs a job at least once. Across a Redis failover it can run one twice: the old
// primary recorded the job's completion, the promoted replica had not received it yet, and a
// worker takes the job again. A processor calls recordJobRun in the transaction that makes
// its effect: the first delivery inserts the row and goes on; any later one finds the row
// (after waiting for the first to commit or roll back, on the primary key) and does nothing.
// The guarantee is PostgreSQL's, so it holds whatever Redis forgets.
import { many, type Queryable, sql } from '../db/pool.js';

export interface JobRunKey {
  queue: string;
  jobId: string;
}

/**
 * Claims the effect of a job for this transaction: true for the first delivery (go on),
 * false when a committed delivery of the same job had it already (do nothing).
 */
export async function recordJobRun(q: Queryable, key: JobRunKey): Promise<boolean> {
  const rows = await many(
    q,
    sql`INSERT INTO flotilla.job_runs (queue, job_id) VALUES (${key.queue}, ${key.jobId})
        ON CONFLICT (queue, job_id) DO NOTHING RETURNING 1 AS ok`,
  );
  return rows.length > 0;
}

/** Forgets the runs older than `seconds` (housekeeping); how many were forgotten. */
export async function forgetJobRuns(q: Queryable, seconds: number): Promise<number> {
  const rows = await many(
    q,
    sql`DELETE FROM flotilla.job_runs WHERE ran_at < now() - ${seconds} * interval '1 second'
        RETURNING 1 AS ok`,
  );
  return rows.length;
}
