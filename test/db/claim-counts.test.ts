// A batch of claims, and its release, counted by reading the batch's own requests (migration
// 0047): a claim pass claims all it can start in one statement, and 0008's trigger answered a
// batch of hundreds beside a long queue with sequential scans of buildrequests and of the
// unclaimed set, a plan each connection then kept (load/results/fleet.md, 2026-11-30). The
// totals the trigger keeps are test/db/counts.test.ts's; here, what it reads.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabaseWithClient } from '../helpers/databases.js';
import { pendingRequestsSql } from '../helpers/pending-requests.js';

const PENDING = 3000;
const BATCH = 300;
let db: Awaited<ReturnType<typeof createDatabaseWithClient>>;
let client: pg.Client;
beforeAll(async () => {
  db = await createDatabaseWithClient();
  client = db.client;
  await client.query(`
    ${pendingRequestsSql(PENDING, ['b1', 'b2'])}
    ANALYZE buildrequests;
    ANALYZE flotilla.unclaimed_buildrequests;`);
});
afterAll(async () => {
  await db.drop();
});

/** Sequential scans of the tables the trigger reads, in this transaction so far. */
async function scans(): Promise<Record<string, number>> {
  const { rows } = await client.query(`
    SELECT schemaname || '.' || relname AS t, seq_scan::int AS n FROM pg_stat_xact_user_tables
    WHERE relname IN ('buildrequests', 'unclaimed_buildrequests', 'unclaimed_complete_buildrequests')`);
  return Object.fromEntries(rows.map((r) => [r.t, r.n]));
}

describe("a batch of claims' counts", () => {
  it('reads the batch’s requests by key, claimed and released, on a connection whose first claim is the batch', async () => {
    await client.query('BEGIN');
    try {
      const ids = await client.query<{ id: number }>(
        `SELECT id FROM buildrequests ORDER BY id DESC LIMIT ${BATCH}`,
      );
      const brids = ids.rows.map((r) => r.id);
      const before = await scans();
      await client.query(
        'INSERT INTO buildrequest_claims (brid, masterid, claimed_at) SELECT b, (SELECT id FROM masters), 0 FROM unnest($1::int[]) b',
        [brids],
      );
      await client.query('DELETE FROM buildrequest_claims WHERE brid = ANY ($1::int[])', [
        brids.slice(0, 100),
      ]);
      expect(await scans()).toEqual(before);
      // And the sets say what happened: 100 released back to pending, 200 still claimed.
      const { rows } = await client.query(
        'SELECT count(*)::int AS n FROM flotilla.unclaimed_buildrequests WHERE brid = ANY ($1::int[])',
        [brids],
      );
      expect(rows[0].n).toBe(100);
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
