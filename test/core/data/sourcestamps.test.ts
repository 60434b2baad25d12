// findOrCreateSourceStamp under concurrency: transactions creating the same stamp at the same
// moment all get the one row (the loser's insert waits for the winner, then must find it).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findOrCreateSourceStamp } from '../../../services/core/data/sourcestamps.js';
import { transact } from '../../../services/core/data/transaction.js';
import { sql } from '../../../services/core/db/pool.js';
import { barrier, type Harness, openHarness, uniq } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => {
  await h?.close();
});

it('gives concurrent creators of one stamp the same id', async () => {
  for (let round = 0; round < 10; round++) {
    const stamp = { branch: 'main', revision: uniq('rev'), repository: 'r', project: 'p', codebase: '' };
    const together = barrier(6);
    const ids = await Promise.all(
      Array.from({ length: 6 }, () =>
        transact({ ...h.ctx, db: h.wide }, async (tx) => {
          await tx.q.query(sql`SELECT 1`);
          await together();
          return findOrCreateSourceStamp(tx, stamp);
        }),
      ),
    );
    expect(new Set(ids).size).toBe(1);
    const rows = await h.db.pool.query(sql`SELECT id FROM sourcestamps WHERE revision = ${stamp.revision}`);
    expect(rows).toEqual([{ id: ids[0] }]);
  }
});
