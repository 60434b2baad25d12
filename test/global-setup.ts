// Once per `vitest run`: the template databases every suite copies.
import { migrate } from '../services/core/db/migrate.js';
import { createPool, sql } from '../services/core/db/pool.js';
import { testEnv, withDatabase } from './helpers/env.js';
import { ORACLE, psqlCommand, psqlFile } from './helpers/psql.js';

export default async function setup(): Promise<void> {
  const { databaseUrl } = testEnv();
  const admin = createPool(databaseUrl, { poolSize: 1 });
  try {
    for (const name of ['flotilla_tpl_migrated', 'flotilla_tpl_fixture']) {
      await admin.query(sql`DROP DATABASE IF EXISTS ${sql.ident(name)} WITH (FORCE)`);
      await admin.query(sql`CREATE DATABASE ${sql.ident(name)} TEMPLATE template0`);
      const pool = createPool(withDatabase(databaseUrl, name), { poolSize: 1 });
      try {
        await migrate(pool);
      } finally {
        await pool.dispose();
      }
    }
    const fixtureUrl = withDatabase(databaseUrl, 'flotilla_tpl_fixture');
    // The fixture carries its own alembic_version row.
    psqlCommand(fixtureUrl, 'DELETE FROM public.alembic_version');
    psqlFile(fixtureUrl, `${ORACLE}/fixture.sql`);
  } finally {
    await admin.dispose();
  }
}
