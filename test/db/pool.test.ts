// The typed row helpers: each returns what its name promises or says which statement broke it.
// And a pool's connections opened ahead of its statements (a master's start).
import { afterAll, describe, expect, it } from 'vitest';
import {
  createPool,
  many,
  maybeOne,
  one,
  openConnections,
  RowCountError,
  sql,
} from '../../services/core/db/pool.js';
import { testEnv } from '../helpers/env.js';

const db = createPool(testEnv().databaseUrl, { poolSize: 1 });
afterAll(() => db.dispose());

const rows = (n: number) => sql`SELECT g AS n FROM generate_series(1, ${n}::int) g`;

describe('typed rows', () => {
  it('many returns every row', async () => {
    expect(await many<{ n: number }>(db, rows(3))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(await many<{ n: number }>(db, rows(0))).toEqual([]);
  });

  it('one returns the row, and refuses none or several', async () => {
    expect(await one<{ n: number }>(db, rows(1))).toEqual({ n: 1 });
    await expect(one(db, rows(0))).rejects.toThrow(RowCountError);
    const err = await one(db, rows(2)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RowCountError);
    expect(err).toMatchObject({ expected: 'one', got: 2 });
    // The statement's text, never its values.
    expect((err as Error).message).toContain('generate_series(1, $1::int)');
  });

  it('maybeOne returns the row or undefined, and refuses several', async () => {
    expect(await maybeOne<{ n: number }>(db, rows(1))).toEqual({ n: 1 });
    expect(await maybeOne(db, rows(0))).toBeUndefined();
    await expect(maybeOne(db, rows(5))).rejects.toMatchObject({ expected: 'at most one', got: 5 });
  });
});

describe('opening connections ahead', () => {
  it("opens as many of the pool's connections as asked, side by side", async () => {
    const application = `open-ahead-${process.pid}`;
    const pool = createPool(testEnv().databaseUrl, { poolSize: 4, applicationName: application });
    const open = async () =>
      (
        await one<{ n: number }>(
          db,
          sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${application}`,
        )
      ).n;
    try {
      expect(await open()).toBe(0);
      await openConnections(pool, 3);
      expect(await open()).toBe(3);
      // Up to the pool's size, and never more.
      await openConnections(pool, 6);
      expect(await open()).toBe(4);
    } finally {
      await pool.dispose();
    }
  });
});
