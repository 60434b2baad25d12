// The typed row helpers: each returns what its name promises or says which statement broke it.
import { afterAll, describe, expect, it } from 'vitest';
import { createPool, many, maybeOne, one, RowCountError, sql } from '../../services/core/db/pool.js';
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
