// Once per `vitest run`: the template databases every suite copies, and the services'
// JavaScript for the processes tests start (test/helpers/service-build.ts).
import { rmSync } from 'node:fs';
import { migrate } from '../services/core/db/migrate.js';
import { createPool, sql } from '../services/core/db/pool.js';
import { FIXTURE_SQL } from './helpers/buildbot-recorded.js';
import { testEnv, withDatabase } from './helpers/env.js';
import { psqlCommand, psqlFile } from './helpers/psql.js';
import { buildServices, SERVICES_BUILD_ENV } from './helpers/service-build.js';

export default async function setup(): Promise<() => void> {
  // A full `npm test` runs two vitest processes at once (deploy/local/test.sh) and prepares
  // the run once before them (test/prepare-run.ts): both find the build set and skip this.
  if (process.env[SERVICES_BUILD_ENV]) return () => {};
  // Set before vitest starts its test processes, which inherit it.
  const built = await buildServices();
  process.env[SERVICES_BUILD_ENV] = built;
  const teardown = () => rmSync(built, { recursive: true, force: true });
  try {
    await templates();
  } catch (err) {
    teardown();
    throw err;
  }
  return teardown;
}

async function templates(): Promise<void> {
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
    psqlFile(fixtureUrl, FIXTURE_SQL);
  } finally {
    await admin.dispose();
  }
}
