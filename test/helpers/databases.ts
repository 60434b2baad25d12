// Each suite gets its own database, copied from a template that global-setup prepared once:
// empty, freshly migrated, or migrated with the oracle's fixture loaded.
import { randomBytes } from 'node:crypto';
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

export async function createDatabase(template: keyof typeof TEMPLATES = 'migrated'): Promise<TestDatabase> {
  const name = `t_${template}_${randomBytes(5).toString('hex')}`;
  await adminPool().query(sql`CREATE DATABASE ${sql.ident(name)} TEMPLATE ${sql.ident(TEMPLATES[template])}`);
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
