// The totals the database keeps (migration 0004) must equal count(*) for every scope, after
// any mix of writes: inserts, updates of the counted columns, claims and unclaims, deletes
// that cascade to claims, bulk statements, and rollbacks.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createDatabase('fixture');
});
afterAll(async () => {
  await db?.drop();
});

async function kept(): Promise<Map<string, number>> {
  const rows = await db.pool.query(sql`
    SELECT tbl || '|' || scope AS k, sum(n)::int AS n FROM flotilla.count_deltas
    WHERE scope <> '~w' GROUP BY 1 HAVING sum(n) <> 0`);
  return new Map(rows.map((r) => [r.k as string, r.n as number]));
}

/** The same totals, counted from scratch. */
async function truth(): Promise<Map<string, number>> {
  const rows = await db.pool.query(sql`
    SELECT 'builds|' || s AS k, count(*)::int AS n FROM builds,
      unnest(flotilla.build_scopes(builderid, workerid, complete_at IS NOT NULL)) s GROUP BY 1
    UNION ALL
    SELECT 'buildrequests|' || s, count(*)::int FROM buildrequests r,
      unnest(flotilla.buildrequest_scopes(r.builderid, coalesce(r.complete, 0) <> 0,
        EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id))) s GROUP BY 1
    UNION ALL
    SELECT 'buildsets|' || s, count(*)::int FROM buildsets, unnest(flotilla.buildset_scopes(complete <> 0)) s GROUP BY 1
    UNION ALL SELECT 'changes|', count(*)::int FROM changes HAVING count(*) > 0
    UNION ALL SELECT 'sourcestamps|', count(*)::int FROM sourcestamps HAVING count(*) > 0`);
  return new Map(rows.map((r) => [r.k as string, r.n as number]));
}

async function unclaimedSetIsExact(): Promise<void> {
  const [row] = await db.pool.query(sql`
    SELECT (SELECT array_agg(brid ORDER BY brid) FROM flotilla.unclaimed_buildrequests) AS kept,
           (SELECT array_agg(r.id ORDER BY r.id) FROM buildrequests r
             WHERE NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id)) AS truth`);
  expect(row.kept).toEqual(row.truth);
}

// Writes as a Buildbot master (or anyone) would make them, straight in SQL.
const writes = [
  sql`INSERT INTO buildsets (reason, submitted_at, complete, results) VALUES ('t', 1, 0, -1)`,
  sql`INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at)
      SELECT max(id), 1 + (random() * 4)::int, 0, 0, -1, 1 FROM buildsets`,
  sql`INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at)
      SELECT id, 2, 0, 0, -1, 1 FROM buildsets ORDER BY id DESC LIMIT 3`,
  sql`INSERT INTO buildrequest_claims (brid, masterid, claimed_at)
      SELECT id, 1, 1 FROM buildrequests r WHERE NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id)
      ORDER BY random() LIMIT 2`,
  sql`DELETE FROM buildrequest_claims WHERE brid IN (SELECT brid FROM buildrequest_claims ORDER BY random() LIMIT 2)`,
  sql`UPDATE buildrequests SET complete = 1, results = 0, complete_at = 2
      WHERE id IN (SELECT id FROM buildrequests WHERE complete = 0 ORDER BY random() LIMIT 2)`,
  sql`UPDATE buildrequests SET complete = 0 WHERE id IN (SELECT id FROM buildrequests ORDER BY random() LIMIT 1)`,
  sql`UPDATE buildrequests SET builderid = 3 WHERE id IN (SELECT id FROM buildrequests ORDER BY random() LIMIT 2)`,
  // Deleting a request cascades to its claims before the request's own trigger runs.
  sql`DELETE FROM buildrequests WHERE id IN (
        SELECT r.id FROM buildrequests r LEFT JOIN builds b ON b.buildrequestid = r.id
        WHERE b.id IS NULL ORDER BY random() LIMIT 1)`,
  sql`INSERT INTO builds (number, builderid, buildrequestid, workerid, masterid, started_at, state_string)
      SELECT coalesce((SELECT max(number) FROM builds WHERE builderid = r.builderid), 0) + 1, r.builderid, r.id,
             2 + (random())::int, 1, 1, 'starting'
      FROM buildrequests r ORDER BY random() LIMIT 1`,
  sql`UPDATE builds SET complete_at = 5, results = 0 WHERE id IN (SELECT id FROM builds WHERE complete_at IS NULL LIMIT 1)`,
  sql`UPDATE builds SET complete_at = NULL WHERE id IN (SELECT id FROM builds ORDER BY random() LIMIT 1)`,
  sql`UPDATE builds SET state_string = 'x' WHERE id IN (SELECT id FROM builds ORDER BY random() LIMIT 5)`,
  // Deleting a worker sets builds.workerid to NULL (ON DELETE SET NULL).
  sql`UPDATE builds SET workerid = NULL WHERE id IN (SELECT id FROM builds WHERE workerid IS NOT NULL ORDER BY random() LIMIT 1)`,
  sql`DELETE FROM builds WHERE id IN (SELECT id FROM builds ORDER BY random() LIMIT 1)`,
  sql`UPDATE buildsets SET complete = 1 - complete WHERE id IN (SELECT id FROM buildsets ORDER BY random() LIMIT 2)`,
  sql`DELETE FROM buildsets WHERE id IN (SELECT max(id) FROM buildsets)`,
  sql`INSERT INTO sourcestamps (ss_hash, repository, codebase, project, created_at)
      SELECT md5(random()::text), '', '', '', 1 FROM generate_series(1, 3)`,
];

describe('trigger-kept totals', () => {
  it('start equal to count(*) (the backfill)', async () => {
    expect(await kept()).toEqual(await truth());
    await unclaimedSetIsExact();
  });

  it('stay equal through random sequences of writes, rollbacks and compactions', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ w: fc.nat(writes.length - 1), rollback: fc.boolean(), compact: fc.boolean() }), {
          minLength: 1,
          maxLength: 8,
        }),
        async (steps) => {
          for (const s of steps) {
            try {
              await db.pool.tx(async (tx) => {
                await tx.query(writes[s.w]!);
                if (s.rollback) throw new Error('rollback');
              });
            } catch (err) {
              if ((err as Error).message !== 'rollback') throw err;
            }
            if (s.compact) await db.pool.query(sql`SELECT flotilla.compact_counts()`);
          }
          expect(await kept()).toEqual(await truth());
          await unclaimedSetIsExact();
        },
      ),
      { numRuns: 40 },
    );
  });

  it('notice a total that drifted (the comparison can fail)', async () => {
    await db.pool.query(sql`INSERT INTO flotilla.count_deltas (tbl, scope, n) VALUES ('builds', '', 1)`);
    expect(await kept()).not.toEqual(await truth());
    await db.pool.query(sql`INSERT INTO flotilla.count_deltas (tbl, scope, n) VALUES ('builds', '', -1)`);
  });
});
