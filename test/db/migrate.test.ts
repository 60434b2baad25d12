// Migrations are safe to run many times, from several processes at once, and on a database
// that a real Buildbot 3.7 or 4.3 created (which is adopted: only added to, never rewritten).
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, MigrationError, migrate, recordBuildbot4 } from '../../services/core/db/migrate.js';
import { createPool, sql } from '../../services/core/db/pool.js';
import { FIXTURE_SQL, SCHEMA_SQL, UPGRADE_TO_4_3_SQL } from '../helpers/buildbot-recorded.js';
import { type Catalog, readCatalog, withoutOurIndexes } from '../helpers/catalog.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { psqlCommand, psqlFile } from '../helpers/psql.js';

const dbs: TestDatabase[] = [];
async function fresh(template: 'empty' | 'migrated' | 'fixture' = 'empty') {
  const db = await createDatabase(template);
  dbs.push(db);
  return db;
}
afterEach(async () => {
  await Promise.all(dbs.splice(0).map((d) => d.drop()));
});

const all = loadMigrations().map((m) => m.id);
const BUILDBOT_OWN = ['0001_buildbot_3_7_schema', '0021_buildbot_4_3_schema'];

/** Every line of `before` is still in `after`: nothing was dropped or changed, only added. */
function onlyAdded(before: Catalog, after: Catalog) {
  for (const kind of Object.keys(before) as (keyof Catalog)[])
    expect(
      before[kind].filter((l) => !after[kind].includes(l)),
      kind,
    ).toEqual([]);
}

async function rowCounts(db: TestDatabase) {
  const [row] = await db.pool.query(sql`
    SELECT (SELECT count(*) FROM builds) AS builds, (SELECT count(*) FROM logchunks) AS chunks,
           (SELECT count(*) FROM changes) AS changes, (SELECT count(*) FROM buildrequests) AS requests`);
  return row;
}

describe('migrate', () => {
  it('applies every migration once, then nothing', async () => {
    const db = await fresh();
    const first = await migrate(db.pool);
    expect(first.applied).toEqual(all);
    expect(first.adopted).toBe(false);
    const second = await migrate(db.pool);
    expect(second.applied).toEqual([]);
  });

  it('is safe when several processes migrate at once', async () => {
    const db = await fresh();
    const pools = Array.from({ length: 5 }, () => createPool(db.url, { poolSize: 1 }));
    try {
      const results = await Promise.all(pools.map((p) => migrate(p)));
      const applied = results.flatMap((r) => r.applied).sort();
      expect(applied).toEqual([...all].sort());
      const rows = await db.pool.query(sql`SELECT id FROM flotilla.migrations ORDER BY id`);
      expect(rows.map((r) => r.id)).toEqual(all);
    } finally {
      await Promise.all(pools.map((p) => p.dispose()));
    }
  });

  it("adopts an existing Buildbot 3.7 database: adds only 4.3's schema and our objects, keeps every row", async () => {
    const db = await fresh();
    psqlFile(db.url, SCHEMA_SQL);
    psqlFile(db.url, FIXTURE_SQL);
    const before = await readCatalog(db.pool);
    const rowsBefore = await rowCounts(db);
    const res = await migrate(db.pool);
    expect(res.adopted).toBe(true);
    expect(res.applied).toEqual(all.filter((id) => id !== '0001_buildbot_3_7_schema'));
    const after = await readCatalog(db.pool);
    onlyAdded(before, after);
    expect(after.tables.filter((t) => !before.tables.includes(t)).sort()).toEqual([
      'codebase_branches',
      'codebase_commits',
      'codebases',
      'projects',
    ]);
    expect(after.indexes.length).toBeGreaterThan(before.indexes.length);
    expect(await rowCounts(db)).toEqual(rowsBefore);
    expect(rowsBefore.builds).toBe(102);
    // A Buildbot 3.7 master sharing the database still finds its own revision.
    expect(await db.pool.query(sql`SELECT version_num FROM alembic_version`)).toEqual([
      { version_num: '059' },
    ]);
  });

  it('adopts a Buildbot 4.3 database: runs neither 0001 nor 0021, adds only our objects', async () => {
    const db = await fresh();
    psqlFile(db.url, SCHEMA_SQL);
    psqlFile(db.url, FIXTURE_SQL);
    psqlFile(db.url, UPGRADE_TO_4_3_SQL);
    const before = await readCatalog(db.pool);
    const rowsBefore = await rowCounts(db);
    const logs: string[] = [];
    const res = await migrate(db.pool, (msg) => logs.push(msg));
    expect(res.adopted).toBe(true);
    expect(logs).toContain('adopted an existing Buildbot 4.3 database; only Flotilla migrations will run');
    expect(res.applied).toEqual(all.filter((id) => !BUILDBOT_OWN.includes(id)));
    const after = await readCatalog(db.pool);
    // The one change to a Buildbot object: 0022 gives builds.locks_duration_s a default.
    const ours = 'builds.locks_duration_s #11 integer NOT NULL DEFAULT 0';
    expect(after.columns).toContain(ours);
    const back = {
      ...after,
      columns: after.columns.map((l) => (l === ours ? l.replace(' DEFAULT 0', '') : l)),
    };
    expect(withoutOurIndexes(back)).toEqual(before);
    expect(await rowCounts(db)).toEqual(rowsBefore);
    expect((await migrate(db.pool)).applied).toEqual([]);
  });

  it('--to-buildbot-4 records revision 067 on a 3.7 database it moved forward, and adopts it after', async () => {
    const db = await fresh('migrated');
    expect(await recordBuildbot4(db.pool)).toBe('059');
    expect(await db.pool.query(sql`SELECT version_num FROM alembic_version`)).toEqual([
      { version_num: '067' },
    ]);
    expect(await migrate(db.pool)).toEqual({ applied: [], adopted: false });
  });

  it('--to-buildbot-4 refuses a database whose migrations have not run', async () => {
    const db = await fresh();
    psqlFile(db.url, SCHEMA_SQL);
    psqlCommand(db.url, "INSERT INTO alembic_version VALUES ('059')");
    await expect(recordBuildbot4(db.pool)).rejects.toMatchObject({ code: 'MIGRATION_PENDING' });
    expect(await db.pool.query(sql`SELECT version_num FROM alembic_version`)).toEqual([
      { version_num: '059' },
    ]);
  });

  it('refuses a Buildbot database at another revision', async () => {
    const db = await fresh();
    psqlFile(db.url, SCHEMA_SQL);
    psqlCommand(db.url, "INSERT INTO alembic_version VALUES ('058')");
    await expect(migrate(db.pool)).rejects.toThrow(/revision 058.*needs revision 059/);
  });

  it('refuses a database that is not Buildbot', async () => {
    const db = await fresh();
    psqlCommand(db.url, 'CREATE TABLE public.something_else (id int)');
    await expect(migrate(db.pool)).rejects.toMatchObject({ code: 'MIGRATION_FOREIGN_SCHEMA' });
  });

  it('refuses an applied migration whose file changed', async () => {
    const db = await fresh('migrated');
    const edited = loadMigrations().map((m, i) => (i === 1 ? { ...m, checksum: 'edited' } : m));
    const err = await migrate(db.pool, () => {}, edited).catch((e) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect(err.code).toBe('MIGRATION_CHANGED');
  });

  it('rolls back a failing migration completely', async () => {
    const db = await fresh('migrated');
    const bad = [
      ...loadMigrations(),
      {
        id: '9999_bad',
        text: 'CREATE TABLE flotilla.half (id int); SELECT 1/0;',
        checksum: 'x',
        concurrent: false,
      },
    ];
    await expect(migrate(db.pool, () => {}, bad)).rejects.toMatchObject({ code: 'MIGRATION_FAILED' });
    const left = await db.pool.query(sql`SELECT to_regclass('flotilla.half') AS t`);
    expect(left[0].t).toBeNull();
    expect(await db.pool.query(sql`SELECT id FROM flotilla.migrations WHERE id = '9999_bad'`)).toEqual([]);
  });
});

describe('the fixture', () => {
  it('loads into a freshly migrated database', async () => {
    const db = await fresh('fixture');
    const [row] = await db.pool.query(sql`
      SELECT (SELECT count(*) FROM builders) AS builders, (SELECT count(*) FROM workers) AS workers,
             (SELECT count(*) FROM changes) AS changes, (SELECT count(*) FROM buildsets) AS buildsets,
             (SELECT count(*) FROM buildrequests) AS buildrequests, (SELECT count(*) FROM builds) AS builds,
             (SELECT count(*) FROM steps) AS steps, (SELECT count(*) FROM logs) AS logs`);
    expect(row).toEqual({
      builders: 5,
      workers: 3,
      changes: 51,
      buildsets: 79,
      buildrequests: 104,
      builds: 102,
      steps: 605,
      logs: 506,
    });
  });
});
