// Each suite gets its own database, copied from a template that global-setup prepared once:
// empty, freshly migrated, or migrated with the oracle's fixture loaded.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type ConnectionPool, createPool, sql } from '../../services/core/db/pool.js';
import { testEnv, withDatabase } from './env.js';

export const TEMPLATES = {
  empty: 'template0',
  migrated: 'flotilla_tpl_migrated',
  fixture: 'flotilla_tpl_fixture',
} as const;

export interface TestDatabase {
  name: string;
  url: string;
  pool: ConnectionPool;
  drop(): Promise<void>;
}

let admin: ConnectionPool | undefined;
export function adminPool(): ConnectionPool {
  admin ??= createPool(testEnv().databaseUrl, { poolSize: 2 });
  return admin;
}

// FILE_COPY copies the template's files; the default (WAL_LOG, PostgreSQL 15) reads and
// WAL-logs it page by page. A copy of the migrated template, 20 of each alternating on a
// private cluster (2026-11-28, load 13-18): 15 ms of the backend's CPU with FILE_COPY (and 2
// ms of the checkpointer's for the checkpoint it asks for), 31-55 ms with WAL_LOG; 71 ms
// against 113-275 ms of wall. The suite makes some 170 of them.
export async function createDatabase(template: keyof typeof TEMPLATES = 'migrated'): Promise<TestDatabase> {
  const name = `t_${template}_${randomBytes(5).toString('hex')}`;
  await adminPool().query(
    sql`CREATE DATABASE ${sql.ident(name)} TEMPLATE ${sql.ident(TEMPLATES[template])} STRATEGY FILE_COPY`,
  );
  const url = withDatabase(testEnv().databaseUrl, name);
  const pool = createPool(url, { poolSize: 5 });
  return {
    name,
    url,
    pool,
    drop: async () => {
      await pool.dispose();
      await dropDatabase(name);
    },
  };
}

/**
 * A database of its own with one plain connection to it, for a test that must hold a session
 * (PREPARE, session settings, EXPLAIN of one statement): drop() ends the connection first.
 */
export async function createDatabaseWithClient(
  template: keyof typeof TEMPLATES = 'migrated',
): Promise<TestDatabase & { client: pg.Client }> {
  const db = await createDatabase(template);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  return {
    ...db,
    client,
    drop: async () => {
      await client.end();
      await db.drop();
    },
  };
}

/**
 * DROP DATABASE ... WITH (FORCE) as our non-superuser role fails with 42501 while an
 * autovacuum worker (a process of no role) is in the database, which suites that write many
 * rows meet now and then; the worker is gone within moments, so try again a while.
 */
async function dropDatabase(name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await adminPool().query(sql`DROP DATABASE IF EXISTS ${sql.ident(name)} WITH (FORCE)`);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '42501' || attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
