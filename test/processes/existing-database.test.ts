// Pointed at a database a real Buildbot 3.7 created and filled, `npm run migrate` adopts it
// (adding only our objects) and the API serves its data as it is.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { testEnv } from '../helpers/env.js';
import { freePort, type Running, startService, waitFor } from '../helpers/processes.js';
import { ORACLE, psqlFile } from '../helpers/psql.js';

let db: TestDatabase;
let api: Running | undefined;
beforeAll(async () => {
  db = await createDatabase('empty');
  psqlFile(db.url, `${ORACLE}/schema.sql`);
  psqlFile(db.url, `${ORACLE}/fixture.sql`);
});
afterAll(async () => {
  await api?.stop('SIGKILL');
  await db?.drop();
});

it('adopts the database and serves it', async () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'services/core/db/migrate-cli.ts'], {
    env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'info' },
    encoding: 'utf8',
  });
  expect(out).toMatch(/adopted an existing Buildbot 3.7 database/);
  const [{ n }] = await db.pool.query(sql`SELECT count(*)::int AS n FROM builds`);
  expect(n).toBe(102);

  const port = await freePort();
  api = startService('api', {
    DATABASE_URL: db.url,
    REDIS_URL: testEnv().redisUrl,
    PORT: String(port),
    LOG_LEVEL: 'warn',
  });
  const url = `http://127.0.0.1:${port}/api/v2/builds?limit=1&order=-buildid`;
  await waitFor('api', async () => (await fetch(url)).ok, 20_000, api);
  const body = (await (await fetch(url, { headers: { accept: 'application/json' } })).json()) as {
    meta: { total: number };
    builds: { buildid: number }[];
  };
  expect(body.meta.total).toBe(102);
  expect(body.builds[0]?.buildid).toBe(102);
  expect(await api.stop()).toBe(0);
});
