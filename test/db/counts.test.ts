// The totals the database keeps (migration 0004) must equal count(*) for every scope, and the
// unclaimed sets (pending and complete, migration 0008) the requests without a claim, after
// any mix of writes: inserts, updates of the counted columns, claims and unclaims, completing
// and cancelling unclaimed requests, deletes that cascade to claims, bulk statements, and
// rollbacks.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactCounts } from '../../services/core/data/counts.js';
import { sql } from '../../services/core/db/pool.js';
import { keptTotals, trueTotals, unclaimedSets } from '../helpers/counts.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createDatabase('fixture');
});
afterAll(async () => {
  await db?.drop();
});

const kept = () => keptTotals(db.pool);
const truth = () => trueTotals(db.pool);

/** Both unclaimed sets (pending, complete) hold exactly the requests without a claim. */
async function unclaimedSetIsExact(): Promise<void> {
  const { kept, truth } = await unclaimedSets(db.pool);
  expect(kept).toEqual(truth);
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
  // A cancel from the API: a pending request completes without ever being claimed.
  sql`UPDATE buildrequests SET complete = 1, results = 6, complete_at = 3
      WHERE id IN (SELECT id FROM buildrequests r WHERE coalesce(complete, 0) = 0
                     AND NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id)
                   ORDER BY random() LIMIT 2)`,
  // Un-completing requests, complete NULL (Buildbot's column allows it and means pending) included.
  sql`UPDATE buildrequests SET complete = CASE WHEN random() < 0.5 THEN NULL ELSE 0 END
      WHERE id IN (SELECT id FROM buildrequests WHERE complete <> 0 ORDER BY random() LIMIT 3)`,
  sql`UPDATE buildrequests SET priority = priority + 1 WHERE id IN (SELECT id FROM buildrequests ORDER BY random() LIMIT 3)`,
  // A bulk insert of pending and complete requests together.
  sql`INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at)
      SELECT (SELECT max(id) FROM buildsets), 1 + i % 3, 0, i % 2, CASE WHEN i % 2 = 1 THEN 6 ELSE -1 END, 1
      FROM generate_series(1, 4) i`,
  // A new id (Buildbot never does this): only for a request nothing refers to.
  sql`UPDATE buildrequests SET id = id + 1000000, complete = 1 - coalesce(complete, 0)
      WHERE id IN (SELECT r.id FROM buildrequests r
                   WHERE NOT EXISTS (SELECT 1 FROM buildrequest_claims c WHERE c.brid = r.id)
                     AND NOT EXISTS (SELECT 1 FROM builds b WHERE b.buildrequestid = r.id)
                   ORDER BY random() LIMIT 1)`,
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
            // The masters' compaction (counts.ts) and migration 0004's function, by turns.
            if (s.compact && s.w % 2) await compactCounts(db.pool);
            else if (s.compact) await db.pool.query(sql`SELECT flotilla.compact_counts()`);
          }
          expect(await kept()).toEqual(await truth());
          await unclaimedSetIsExact();
        },
      ),
      { numRuns: 40 },
    );
  });

  it('are compacted by folding the scopes with several deltas only, leaving a folded one as it is', async () => {
    await compactCounts(db.pool);
    const rowOf = async (scope: string) =>
      db.pool.query(
        sql`SELECT xmin::text AS x, n::int AS n FROM flotilla.count_deltas WHERE tbl = 'builds' AND scope = ${scope}`,
      );
    const folded = await rowOf('complete=true');
    expect(folded).toHaveLength(1);
    // Another scope gathers deltas, then is folded into one row with their sum.
    await db.pool.query(
      sql`INSERT INTO flotilla.count_deltas (tbl, scope, n) VALUES ('builds', 'x-test', 2), ('builds', 'x-test', 3)`,
    );
    expect(await compactCounts(db.pool)).toBe(true);
    expect((await rowOf('x-test')).map((r) => r.n)).toEqual([5]);
    // Rewriting every scope's row each time was 9,035 rows, 227 ms a compaction on the fleet.
    expect(await rowOf('complete=true')).toEqual(folded);
    await db.pool.query(sql`DELETE FROM flotilla.count_deltas WHERE scope = 'x-test'`);
  });

  it("count a request's update by its own row: nothing for a priority, no set touched but the one it joins", async () => {
    // Migration 0043: an update whose builder and completeness stay writes no delta and reads
    // no claim; a completion touches only the pending set it leaves and the complete set it
    // joins (a statement on a set, even of no row, is a write version of that set).
    // Its own pending, unclaimed request: the random writes before it may have left none.
    const [bs] = await db.pool.query(
      sql`INSERT INTO buildsets (reason, submitted_at, complete, results) VALUES ('t', 1, 0, -1) RETURNING id`,
    );
    const [r] = await db.pool.query(
      sql`INSERT INTO buildrequests (buildsetid, builderid, priority, complete, results, submitted_at)
          VALUES (${bs.id}, 1, 0, 0, -1, 1) RETURNING id`,
    );
    // The deltas a write's own transaction appended.
    const deltasOf = async (write: ReturnType<typeof sql>) =>
      db.pool.tx(async (tx) => {
        await tx.query(write);
        return tx.query(
          sql`SELECT tbl, scope FROM flotilla.count_deltas WHERE xmin::text = (txid_current() % 4294967296)::text
              ORDER BY tbl, scope`,
        );
      });
    const priority = await deltasOf(sql`UPDATE buildrequests SET priority = priority + 1 WHERE id = ${r.id}`);
    expect(priority).toEqual([{ tbl: 'buildrequests', scope: '~w' }]);
    const completion = await deltasOf(
      sql`UPDATE buildrequests SET complete = 1, results = 0, complete_at = 2 WHERE id = ${r.id}`,
    );
    const tables = new Set(completion.filter((d) => d.scope === '~w').map((d) => d.tbl));
    expect(tables).toEqual(
      new Set([
        'buildrequests',
        'flotilla.unclaimed_buildrequests',
        'flotilla.unclaimed_complete_buildrequests',
      ]),
    );
    expect(completion.filter((d) => d.scope !== '~w').length).toBeGreaterThan(0);
    expect(await kept()).toEqual(await truth());
    await unclaimedSetIsExact();
  });

  it('notice a total that drifted (the comparison can fail)', async () => {
    await db.pool.query(sql`INSERT INTO flotilla.count_deltas (tbl, scope, n) VALUES ('builds', '', 1)`);
    expect(await kept()).not.toEqual(await truth());
    await db.pool.query(sql`INSERT INTO flotilla.count_deltas (tbl, scope, n) VALUES ('builds', '', -1)`);
  });
});
