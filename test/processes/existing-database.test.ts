// Pointed at a database a real Buildbot 3.7 created and filled, `npm run migrate` adopts it
// (adding only our objects) and the API serves its data as it is. Before that, the API
// refuses it (naming what to run) instead of answering every read with a 500, unless told
// to migrate at start; and /readyz names a migration the database lost under it.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { apiProcess } from '../helpers/api.js';
import { FIXTURE_SQL, SCHEMA_SQL, UPGRADE_TO_4_3_SQL } from '../helpers/buildbot-recorded.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import type { Running } from '../helpers/processes.js';
import { psqlFile } from '../helpers/psql.js';
import { serviceCommand } from '../helpers/service-build.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let api: Running | undefined;
async function buildbotDatabase(): Promise<TestDatabase> {
  const d = await createDatabase('empty');
  psqlFile(d.url, SCHEMA_SQL);
  psqlFile(d.url, FIXTURE_SQL);
  return d;
}
beforeAll(async () => {
  db = await buildbotDatabase();
});
afterAll(async () => {
  await api?.stop('SIGKILL');
  await db?.drop();
});

/** An API on `url`, not waited for: whether it gets ready is what these tests ask. */
async function startApi(
  url: string,
  env: Record<string, string> = {},
): Promise<{ proc: Running; base: string; probe: string }> {
  const api = await apiProcess({ databaseUrl: url, env, ready: false });
  return { proc: api.proc, base: api.origin, probe: `http://127.0.0.1:${api.probePort}` };
}

it('refuses the database before it is migrated, naming npm run migrate', async () => {
  const { proc } = await startApi(db.url);
  expect(await proc.exited).toBe(2);
  expect(proc.output()).toMatch(/the database lacks \d+ of Flotilla's migrations.*run `npm run migrate`/);
  const [{ n }] = await db.pool.query(
    sql`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'flotilla'`,
  );
  expect(n).toBe(0);
});

it('migrates at start when told to (MIGRATE_ON_START), and /readyz names a migration lost later', async () => {
  const other = await buildbotDatabase();
  const { proc, base, probe } = await startApi(other.url, { MIGRATE_ON_START: 'true' });
  try {
    await waitFor('api', async () => (await fetch(`${base}/readyz`)).ok, { proc });
    const res = await fetch(`${base}/api/v2/builds?limit=1`, { headers: { accept: 'application/json' } });
    expect(((await res.json()) as { meta: { total: number } }).meta.total).toBe(102);
    await other.pool.query(sql`DELETE FROM flotilla.migrations WHERE id = '0010_flotilla_write_notices'`);
    // The checks' details are on the probe port (the public /readyz says only ready or not).
    const ready = await fetch(`${probe}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: { schema: string } }).checks.schema).toMatch(
      /^the database lacks 1 of Flotilla's migrations \(0010_flotilla_write_notices\): run `npm run migrate`/,
    );
  } finally {
    await proc.stop('SIGKILL');
    await other.drop();
  }
});

const migrateCli = (url: string, ...args: string[]) =>
  execFileSync(process.execPath, [...serviceCommand('services/core/db/migrate-cli.ts'), ...args], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'info' },
    encoding: 'utf8',
  });

it('adopts a database Buildbot 4.3 upgraded and serves it, projects included', async () => {
  const four = await buildbotDatabase();
  psqlFile(four.url, UPGRADE_TO_4_3_SQL);
  let proc: Running | undefined;
  try {
    expect(migrateCli(four.url)).toMatch(/adopted an existing Buildbot 4\.3 database/);
    const [{ done }] = await four.pool.query(
      sql`SELECT array_agg(id ORDER BY id) FILTER (WHERE adopted) AS done FROM flotilla.migrations`,
    );
    expect(done).toEqual(['0001_buildbot_3_7_schema', '0021_buildbot_4_3_schema']);
    await four.pool.query(sql`INSERT INTO projects (name, name_hash, slug) VALUES ('p', 'h', 'p')`);
    const started = await startApi(four.url);
    proc = started.proc;
    const get = async (path: string) =>
      (await (
        await fetch(`${started.base}/api/v2/${path}`, { headers: { accept: 'application/json' } })
      ).json()) as {
        meta: { total: number };
      } & Record<string, { name?: string }[]>;
    await waitFor('api', async () => (await fetch(`${started.base}/api/v2/projects`)).ok, { proc });
    expect((await get('projects')).projects!.map((p) => p.name)).toEqual(['p']);
    expect((await get('builds?limit=1')).meta.total).toBe(102);
    // The revision stays 4.3's.
    expect(await four.pool.query(sql`SELECT version_num FROM alembic_version`)).toEqual([
      { version_num: '067' },
    ]);
  } finally {
    await proc?.stop('SIGKILL');
    await four.drop();
  }
});

it('--to-buildbot-4 moves a 3.7 database forward: revision 067, adopted as such after', async () => {
  const other = await buildbotDatabase();
  try {
    expect(migrateCli(other.url, '--to-buildbot-4')).toMatch(/alembic_version now names Buildbot 4\.3/);
    expect(await other.pool.query(sql`SELECT version_num FROM alembic_version`)).toEqual([
      { version_num: '067' },
    ]);
    expect(migrateCli(other.url)).toMatch(/database is up to date/);
    expect(() => migrateCli(other.url, '--to-buildbot-5')).toThrow();
  } finally {
    await other.drop();
  }
});

it('adopts the database and serves it', async () => {
  const out = migrateCli(db.url);
  expect(out).toMatch(/adopted an existing Buildbot 3.7 database/);
  const [{ n }] = await db.pool.query(sql`SELECT count(*)::int AS n FROM builds`);
  expect(n).toBe(102);

  const started = await startApi(db.url);
  api = started.proc;
  const url = `${started.base}/api/v2/builds?limit=1&order=-buildid`;
  await waitFor('api', async () => (await fetch(url)).ok, { proc: api });
  const body = (await (await fetch(url, { headers: { accept: 'application/json' } })).json()) as {
    meta: { total: number };
    builds: { buildid: number }[];
  };
  expect(body.meta.total).toBe(102);
  expect(body.builds[0]?.buildid).toBe(102);
  expect(await api.stop()).toBe(0);
});
