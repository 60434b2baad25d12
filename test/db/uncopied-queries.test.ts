// A transaction's connection sends the driver's statements as node-postgres Queries built
// from their text (core/db/uncopied-queries.ts): the same rows, the prepared names, the errors
// with their SQLSTATE, and the connection usable after one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectionPool, createPool, many, sql } from '../../services/core/db/pool.js';
import { statementName } from '../../services/core/db/statement-name.js';
import { clientOf } from '../../services/core/db/uncopied-queries.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';

let db: TestDatabase;
let pool: ConnectionPool;
beforeAll(async () => {
  db = await createDatabase('empty');
  await db.pool.query(sql`CREATE TABLE u (id int PRIMARY KEY, a text NOT NULL)`);
  // One connection, so that pg_prepared_statements (a connection's own) shows the pool's.
  pool = createPool(db.url, { poolSize: 1, prepare: {} });
});
afterAll(async () => {
  await pool?.dispose();
  await db?.drop();
});

const insert = (id: number, a: string) => sql`INSERT INTO u (id, a) VALUES (${id}, ${a}) RETURNING id, a`;

describe('uncopied queries', () => {
  it("answer a transaction's statements, prepared under their names", async () => {
    const seen = await pool.tx(async (t) => {
      // The connection's own query is the one that builds Queries.
      expect(Object.hasOwn(clientOf(t) ?? {}, 'query')).toBe(true);
      const rows = [...(await many(t, insert(1, 'x'))), ...(await many(t, insert(2, 'y')))];
      const prepared = await many<{ name: string }>(t, sql`SELECT name FROM pg_prepared_statements`);
      return { rows, names: prepared.map((p) => p.name) };
    });
    expect(seen.rows).toEqual([
      { id: 1, a: 'x' },
      { id: 2, a: 'y' },
    ]);
    const text = 'INSERT INTO u (id, a) VALUES ($1, $2) RETURNING id, a';
    expect(seen.names).toContain(statementName(text));
    // Without values: the simple protocol, as before.
    expect(await pool.tx((t) => many(t, sql`SELECT count(*)::int AS n FROM u`))).toEqual([{ n: 2 }]);
  });

  it("reject with the error's SQLSTATE and leave the connection usable", async () => {
    await expect(pool.tx((t) => many(t, insert(1, 'again')))).rejects.toMatchObject({ code: '23505' });
    await expect(pool.tx((t) => t.query(sql`SELEC ${1}`))).rejects.toMatchObject({ code: '42601' });
    expect(await pool.tx((t) => many(t, sql`SELECT a FROM u WHERE id = ${2}`))).toEqual([{ a: 'y' }]);
  });
});
