// The replica helper itself: a real streaming replica of the test cluster that follows the
// primary's writes, can be paused, and is gone once stopped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayState } from '../../../services/core/data/replication.js';
import { createPool, sql } from '../../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../../helpers/databases.js';
import { type Replica, startReplica } from '../../helpers/pg-replica.js';

let db: TestDatabase;
let replica: Replica;

beforeAll(async () => {
  db = await createDatabase('migrated');
  replica = await startReplica();
}, 180_000);

afterAll(async () => {
  await replica?.stop();
  await db?.drop();
});

describe('a streaming replica of the test cluster', () => {
  it('follows the primary, holds back while paused, and catches up when resumed', async () => {
    const onReplica = createPool(replica.url(db.name), { poolSize: 1 });
    try {
      expect((await replayState(onReplica)).inRecovery).toBe(true);
      await db.pool.query(sql`CREATE TABLE replica_probe (n int)`);
      await db.pool.query(sql`INSERT INTO replica_probe VALUES (1)`);
      await replica.caughtUp();
      expect(await onReplica.query(sql`SELECT n FROM replica_probe`)).toEqual([{ n: 1 }]);

      await replica.pause();
      await db.pool.query(sql`INSERT INTO replica_probe VALUES (2)`);
      // Paused: the second row is received but not applied, however long one looks.
      expect(await onReplica.query(sql`SELECT n FROM replica_probe ORDER BY n`)).toEqual([{ n: 1 }]);
      await expect(onReplica.query(sql`INSERT INTO replica_probe VALUES (3)`)).rejects.toMatchObject({
        code: '25006',
      });

      await replica.resume();
      await replica.caughtUp();
      expect(await onReplica.query(sql`SELECT n FROM replica_probe ORDER BY n`)).toEqual([
        { n: 1 },
        { n: 2 },
      ]);
    } finally {
      await onReplica.dispose();
    }
  });
});
