// The fleet's pending queue, written straight into the database as PENDING forces (or
// Buildbot's own addBuildset) leave it: one build set of one request each, on the `fleet-`
// builders in turn, all on one source stamp; complete 0, results -1. Flotilla's runner
// (run.ts) and Buildbot's (buildbot.ts) write the same queue with it.
import { type Queryable, sql } from '../../services/core/db/pool.js';

export async function writePending(db: Queryable, sourcestampId: number, pending: number): Promise<void> {
  await db.query(sql`
    WITH b AS (SELECT array_agg(id ORDER BY name) AS ids FROM builders WHERE name LIKE 'fleet-%'),
    bs AS (
      INSERT INTO buildsets (reason, submitted_at, complete, results)
      SELECT 'fleet pending ' || g, extract(epoch FROM now())::int, 0, -1 FROM generate_series(1, ${pending}) g
      RETURNING id),
    ss AS (INSERT INTO buildset_sourcestamps (buildsetid, sourcestampid) SELECT id, ${sourcestampId} FROM bs)
    INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at, waited_for)
    SELECT bs.id, b.ids[1 + bs.id % array_length(b.ids, 1)], 0, 0, -1, extract(epoch FROM now())::int, 0
    FROM bs, b`);
  await db.query(sql`ANALYZE buildrequests`);
  await db.query(sql`ANALYZE buildsets`);
}

/** Requests neither complete nor claimed. */
export async function unclaimed(db: Queryable): Promise<number> {
  const [row] = await db.query(sql`SELECT count(*) AS n FROM buildrequests br
    WHERE complete = 0 AND NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = br.id)`);
  return Number(row.n);
}

/** The requests neither complete nor claimed, ended CANCELLED: the rest of a queue a phase is done with. */
export async function cancelUnclaimed(db: Queryable): Promise<void> {
  await db.query(sql`
    UPDATE buildrequests br SET complete = 1, results = 6, complete_at = extract(epoch FROM now())::int
    WHERE complete = 0 AND NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = br.id)`);
}
