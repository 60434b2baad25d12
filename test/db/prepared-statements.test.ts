// A pool made with `prepare` (the masters' and the API's write pools): its statements with
// parameters are prepared once per connection and then only bound and executed; those without
// (DDL, SET, LISTEN, several statements in one text) never are; at most `maxTexts` texts are;
// a statement whose result's columns a migration changed gives the right answer; transactions
// and statement_timeout work as without names. Each pool here has one connection, so that
// pg_prepared_statements (a connection's own) shows what that pool prepared.
import { pgFormat } from '@databases/pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConnectionPool,
  createPool,
  many,
  type PoolOptions,
  type SQLQuery,
  sql,
} from '../../services/core/db/pool.js';
import { statementName } from '../../services/core/db/statement-name.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';

let db: TestDatabase;
const pools: ConnectionPool[] = [];
beforeAll(async () => {
  db = await createDatabase('empty');
  await db.pool.query(sql`CREATE TABLE t (id int PRIMARY KEY, a int NOT NULL)`);
  await db.pool.query(sql`INSERT INTO t VALUES (1, 10), (2, 20)`);
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.dispose()));
  await db?.drop();
});

function preparing(opts: PoolOptions = {}): ConnectionPool {
  const pool = createPool(db.url, { poolSize: 1, prepare: {}, ...opts });
  pools.push(pool);
  return pool;
}

interface Prepared {
  name: string;
  statement: string;
  runs: number;
}

/** What the pool's one connection holds prepared (this statement, without parameters, is not). */
function preparedOn(pool: ConnectionPool): Promise<Prepared[]> {
  return many<Prepared>(
    pool,
    sql`SELECT name, statement, generic_plans + custom_plans AS runs
          FROM pg_prepared_statements ORDER BY statement`,
  );
}

const textOf = (q: SQLQuery) => q.format(pgFormat).text;

describe('statements prepared once per connection', () => {
  it('parses a statement with parameters once and runs it under its name after', async () => {
    const pool = preparing();
    const byId = (id: number) => sql`SELECT a FROM t WHERE id = ${id}`;
    expect(await pool.query(byId(1))).toEqual([{ a: 10 }]);
    expect(await pool.query(byId(2))).toEqual([{ a: 20 }]);
    expect(await pool.query(byId(3))).toEqual([]);
    const text = textOf(byId(0));
    // One prepared statement, run three times: one Parse for three executions.
    expect(await preparedOn(pool)).toEqual([{ name: statementName(text), statement: text, runs: 3 }]);
  });

  it('never prepares a text without parameters: DDL, SET, LISTEN, several statements', async () => {
    const pool = preparing();
    await pool.query(sql`CREATE TEMP TABLE scratch (x int)`);
    await pool.query(sql`SET work_mem = '8MB'`);
    await pool.query(sql`LISTEN prepared_statements_test`);
    await pool.query(sql`INSERT INTO scratch VALUES (1); INSERT INTO scratch VALUES (2)`);
    await pool.query(sql`SELECT count(*)::int AS n FROM scratch`);
    expect(await pool.query(sql`SELECT count(*)::int AS n FROM scratch`)).toEqual([{ n: 2 }]);
    expect(await preparedOn(pool)).toEqual([]);
    // A text of several statements is split before the driver: only the one with a value is named.
    await pool.query(sql`INSERT INTO scratch VALUES (3); INSERT INTO scratch VALUES (${4})`);
    expect((await preparedOn(pool)).map((p) => p.statement)).toEqual(['INSERT INTO scratch VALUES ($1)']);
  });

  it('a text of a kind never to prepare cannot carry a parameter: PostgreSQL refuses each', async () => {
    // So naming only texts with parameters never names one of these. (Each refusal ends its
    // connection, as @databases/pg does after any error but a constraint's.)
    const pool = preparing();
    for (const q of [
      sql`SET work_mem = ${'8MB'}`,
      sql`LISTEN ${'channel'}`,
      sql`CREATE TEMP TABLE withdefault (x int DEFAULT ${1})`,
      sql`COPY (SELECT ${1}::int) TO STDOUT`,
      sql`DO ${'BEGIN END'}`,
    ]) {
      await expect(pool.query(q)).rejects.toMatchObject({ code: expect.stringMatching(/^(42601|08P01)$/) });
    }
  });

  it('prepares at most maxTexts texts and sends the others unnamed, with the same answers', async () => {
    const pool = preparing({ prepare: { maxTexts: 2 } });
    for (let round = 0; round < 2; round++) {
      expect(await pool.query(sql`SELECT a FROM t WHERE id = ${1}`)).toEqual([{ a: 10 }]);
      expect(await pool.query(sql`SELECT a + 1 AS b FROM t WHERE id = ${1}`)).toEqual([{ b: 11 }]);
      expect(await pool.query(sql`SELECT a + 2 AS c FROM t WHERE id = ${2}`)).toEqual([{ c: 22 }]);
    }
    const held = await preparedOn(pool);
    expect(held.map((p) => p.statement)).toEqual([
      'SELECT a + 1 AS b FROM t WHERE id = $1',
      'SELECT a FROM t WHERE id = $1',
    ]);
    expect(held.map((p) => p.runs)).toEqual([2, 2]);
  });
});

describe('a migration while the statements are prepared', () => {
  it('answers with the new columns after ADD COLUMN, run alone', async () => {
    await db.pool.query(sql`CREATE TABLE wide (id int PRIMARY KEY, a int)`);
    await db.pool.query(sql`INSERT INTO wide VALUES (1, 10)`);
    const pool = preparing();
    const all = sql`SELECT * FROM wide WHERE id = ${1}`;
    expect(await pool.query(all)).toEqual([{ id: 1, a: 10 }]);
    await db.pool.query(sql`ALTER TABLE wide ADD COLUMN b int NOT NULL DEFAULT 7`);
    expect(await pool.query(all)).toEqual([{ id: 1, a: 10, b: 7 }]);
    expect(await pool.query(all)).toEqual([{ id: 1, a: 10, b: 7 }]);
    // @databases/pg ends a connection after any error but a constraint's, so the one that met
    // the refusal is gone; its successor holds the text under its new name only.
    expect((await preparedOn(pool)).map((p) => p.name)).toEqual([`${statementName(textOf(all))}_1`]);
  });

  it("answers with a column's new type after ALTER COLUMN TYPE", async () => {
    await db.pool.query(sql`CREATE TABLE typed (id int PRIMARY KEY, n int)`);
    await db.pool.query(sql`INSERT INTO typed VALUES (1, 5)`);
    const pool = preparing();
    const n = sql`SELECT n FROM typed WHERE id = ${1}`;
    expect(await pool.query(n)).toEqual([{ n: 5 }]);
    await db.pool.query(sql`ALTER TABLE typed ALTER COLUMN n TYPE text`);
    expect(await pool.query(n)).toEqual([{ n: '5' }]);
  });

  it("renames the text for the pool: another connection's transaction does not meet the refusal", async () => {
    await db.pool.query(sql`CREATE TABLE shared (id int PRIMARY KEY, a int)`);
    await db.pool.query(sql`INSERT INTO shared VALUES (1, 10)`);
    const pool = preparing({ poolSize: 2 });
    const all = sql`SELECT * FROM shared WHERE id = ${1}`;
    // Two transactions at once, so that each of the pool's two connections runs the text.
    const onBoth = async () => {
      let started = 0;
      let bothIn: () => void = () => {};
      const barrier = new Promise<void>((resolve) => {
        bothIn = resolve;
      });
      return Promise.all(
        [0, 1].map(() =>
          pool.tx(async (tx) => {
            if (++started === 2) bothIn();
            await barrier;
            return tx.query(all);
          }),
        ),
      );
    };
    expect(await onBoth()).toEqual([[{ id: 1, a: 10 }], [{ id: 1, a: 10 }]]);
    await db.pool.query(sql`ALTER TABLE shared ADD COLUMN b int NOT NULL DEFAULT 7`);
    // One connection meets the refusal (and is ended); the other still holds the old statement.
    expect(await pool.query(all)).toEqual([{ id: 1, a: 10, b: 7 }]);
    // Both in transactions, where nothing is run again: the text's new name is prepared afresh.
    expect(await onBoth()).toEqual([[{ id: 1, a: 10, b: 7 }], [{ id: 1, a: 10, b: 7 }]]);
  });

  it('fails the transaction that meets it, and the next transaction answers right', async () => {
    await db.pool.query(sql`CREATE TABLE intx (id int PRIMARY KEY, a int)`);
    await db.pool.query(sql`INSERT INTO intx VALUES (1, 10)`);
    const pool = preparing();
    const all = sql`SELECT * FROM intx WHERE id = ${1}`;
    expect(await pool.tx((tx) => tx.query(all))).toEqual([{ id: 1, a: 10 }]);
    await db.pool.query(sql`ALTER TABLE intx ADD COLUMN b int NOT NULL DEFAULT 7`);
    // PostgreSQL aborts a transaction at its first error: nothing can be run again inside it.
    await expect(pool.tx((tx) => tx.query(all))).rejects.toMatchObject({ code: '0A000' });
    expect(await pool.tx((tx) => tx.query(all))).toEqual([{ id: 1, a: 10, b: 7 }]);
  });
});

describe('transactions and statement_timeout with prepared statements', () => {
  it('rolls back and commits as before; a prepared statement outlives a rollback', async () => {
    await db.pool.query(sql`CREATE TABLE writes (id int PRIMARY KEY)`);
    const pool = preparing();
    const add = (id: number) => sql`INSERT INTO writes VALUES (${id})`;
    await expect(
      pool.tx(async (tx) => {
        await tx.query(add(1));
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    await pool.tx(async (tx) => {
      await tx.query(add(2));
      await tx.query(add(3));
    });
    // A failed statement (a duplicate key) fails its transaction only.
    await expect(pool.tx((tx) => tx.query(add(2)))).rejects.toMatchObject({ code: '23505' });
    expect(await pool.query(sql`SELECT id FROM writes ORDER BY id`)).toEqual([{ id: 2 }, { id: 3 }]);
    const held = await preparedOn(pool);
    expect(held).toEqual([
      {
        name: statementName('INSERT INTO writes VALUES ($1)'),
        statement: 'INSERT INTO writes VALUES ($1)',
        runs: 4,
      },
    ]);
  });

  it('a statement that fails to parse is not left half-prepared', async () => {
    const pool = preparing();
    const bad = sql`SELECT nosuchcolumn FROM t WHERE id = ${1}`;
    await expect(pool.tx((tx) => tx.query(bad))).rejects.toMatchObject({ code: '42703' });
    await expect(pool.query(bad)).rejects.toMatchObject({ code: '42703' });
    expect(await pool.query(sql`SELECT a FROM t WHERE id = ${2}`)).toEqual([{ a: 20 }]);
  });

  it('statement_timeout cancels a prepared statement and the name keeps working', async () => {
    const pool = preparing({ statementTimeoutMs: 200 });
    const sleep = (s: number) => sql`SELECT pg_sleep(${s})::text AS slept`;
    await expect(pool.query(sleep(30))).rejects.toMatchObject({ code: '57014' });
    expect(await pool.query(sleep(0))).toEqual([{ slept: '' }]);
    await expect(pool.tx((tx) => tx.query(sleep(30)))).rejects.toMatchObject({ code: '57014' });
    expect(await pool.tx((tx) => tx.query(sleep(0)))).toEqual([{ slept: '' }]);
    // The cancelled statement's connection was ended (as after any error but a constraint's);
    // the one after it prepared the text again and ran it once.
    const text = textOf(sleep(0));
    expect(await preparedOn(pool)).toEqual([{ name: statementName(text), statement: text, runs: 1 }]);
  });
});
