// Statements' formatted texts kept by shape (core/db/kept-texts.ts): a kept text is the one
// @databases/pg would have formatted, whatever the query is made of, and the pool runs it.
import { pgFormat } from '@databases/pg';
import { hasSemicolonBeforeEnd } from '@databases/split-sql-query';
import { afterAll, describe, expect, it } from 'vitest';
import { KeptTexts } from '../../services/core/db/kept-texts.js';
import { createPool, many, type SQLQuery, sql } from '../../services/core/db/pool.js';
import { testEnv } from '../helpers/env.js';

const db = createPool(testEnv().databaseUrl, { poolSize: 1 });
afterAll(() => db.dispose());

const plain = (a: number, b: string) => sql`
    SELECT ${a}::int AS a,
           ${b}::text AS b`;
const withFragment = (a: number, desc: boolean) =>
  sql`SELECT g FROM generate_series(1, ${a}::int) g ORDER BY g ${desc ? sql`DESC` : sql`ASC`}`;
const withList = (ids: number[]) =>
  sql`SELECT g FROM generate_series(1, 9) g WHERE g IN (${sql.join(
    ids.map((i) => sql`${i}::int`),
    ', ',
  )})`;
const several = (a: number) => sql`SELECT ${a}::int AS a; SELECT ${a + 1}::int AS b`;
const named = (a: number) => sql`SELECT ${a}::int AS ${sql.ident('x')}`;

/** What @databases/pg formats for a query that no KeptTexts has seen. */
const fresh = (make: () => SQLQuery) => {
  const q = make();
  return { ...q.format(pgFormat), several: hasSemicolonBeforeEnd(q) };
};

describe('kept texts', () => {
  it('hand each later query of a shape the text and split that formatting gives', () => {
    const kept = new KeptTexts();
    const cases: (() => SQLQuery)[] = [
      () => plain(1, 'x'),
      () => plain(2, 'y'),
      () => withFragment(3, true),
      () => withFragment(3, false),
      () => withList([1, 2]),
      () => withList([3]),
      () => withList([4, 5, 6]),
      () => several(7),
      () => named(8),
    ];
    for (let round = 0; round < 3; round++) {
      for (const make of cases) {
        const q = make();
        kept.keep(q);
        expect({ ...q.format(pgFormat), several: hasSemicolonBeforeEnd(q) }).toEqual(fresh(make));
      }
    }
    // A later query of a seen shape is handed its text before the driver asks for it.
    const memo = (q: SQLQuery) => (q as unknown as { _cache: Map<unknown, unknown> })._cache;
    const later = plain(9, 'z');
    expect(memo(later).has(pgFormat)).toBe(false);
    kept.keep(later);
    expect(memo(later).get(pgFormat)).toEqual({
      text: 'SELECT $1::int AS a,\n       $2::text AS b',
      values: [9, 'z'],
    });
  });

  it('formats as before past its bound', () => {
    const kept = new KeptTexts(4);
    for (let n = 1; n < 6; n++) {
      const q = withList(Array.from({ length: n }, (_, i) => i + 1));
      kept.keep(q);
      kept.keep(q);
      const again = { ...q.format(pgFormat), several: hasSemicolonBeforeEnd(q) };
      expect(again).toEqual(fresh(() => withList(Array.from({ length: n }, (_, i) => i + 1))));
    }
    expect(kept.size).toBe(4);
  });

  it('run through the pool and its transactions with each run its own values', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await many(db, plain(i, `v${i}`))).toEqual([{ a: i, b: `v${i}` }]);
      expect(await many(db, withList([i + 1, i + 2]))).toEqual([{ g: i + 1 }, { g: i + 2 }]);
      // Several statements in one text still run as several (the last one answers).
      expect(await db.query(several(i))).toEqual([{ b: i + 1 }]);
    }
    const rows = await db.tx(async (t) => {
      const out: unknown[] = [];
      for (let i = 0; i < 3; i++) out.push(...(await many(t, withFragment(2, i % 2 === 0))));
      out.push(...(await t.query(several(5))));
      return out;
    });
    expect(rows).toEqual([{ g: 2 }, { g: 1 }, { g: 1 }, { g: 2 }, { g: 2 }, { g: 1 }, { b: 6 }]);
  });
});
