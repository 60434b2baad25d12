// The promise of migrations 0001 and 0021: our migrations create exactly the schema a real
// Buildbot 3.7 master creates (test/fixtures/buildbot-3.7/schema.sql) with what Buildbot 4.3's
// migrations add to it (test/fixtures/buildbot-4.3/upgrade-059-to-067.sql), so that either
// Buildbot accepts the database as its own. Only our additive, flotilla_-prefixed indexes may
// differ, the default of builds.locks_duration_s (0022: Buildbot 3.7 and Flotilla insert
// builds without it), and the alembic revision (059 until `--to-buildbot-4`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { SCHEMA_SQL, UPGRADE_TO_4_3_SQL } from '../helpers/buildbot-recorded.js';
import { type Catalog, readCatalog, withoutOurIndexes } from '../helpers/catalog.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { psqlFile } from '../helpers/psql.js';

let buildbot: TestDatabase;
let ours: TestDatabase;
let expected: Catalog;
let actual: Catalog;

beforeAll(async () => {
  buildbot = await createDatabase('empty');
  psqlFile(buildbot.url, SCHEMA_SQL);
  psqlFile(buildbot.url, UPGRADE_TO_4_3_SQL);
  ours = await createDatabase('migrated');
  expected = await readCatalog(buildbot.pool);
  actual = await readCatalog(ours.pool);
});
afterAll(async () => {
  await buildbot?.drop();
  await ours?.drop();
});

/** Our one column difference: Buildbot 4.3 leaves the column without a default. */
const OUR_DEFAULT = 'builds.locks_duration_s #11 integer NOT NULL DEFAULT 0';
const withBuildbotDefaults = (c: Catalog): Catalog => ({
  ...c,
  columns: c.columns.map((l) => (l === OUR_DEFAULT ? l.replace(' DEFAULT 0', '') : l)),
});

describe("the migrated schema is Buildbot 3.7's with 4.3's additions", () => {
  it('has the 39 tables and the 4 of Buildbot 4.3', () => {
    expect(expected.tables).toHaveLength(43);
    expect(actual.tables).toEqual(expected.tables);
  });
  for (const kind of ['columns', 'constraints', 'sequences'] as const) {
    it(`has the same ${kind}`, () => {
      expect(expected[kind].length).toBeGreaterThan(10);
      expect(withBuildbotDefaults(actual)[kind]).toEqual(expected[kind]);
    });
  }
  it('has the same indexes, plus only our own flotilla_ indexes', () => {
    expect(withoutOurIndexes(actual).indexes).toEqual(expected.indexes);
    const ourIndexes = actual.indexes.filter((l) => !expected.indexes.includes(l));
    expect(ourIndexes.length).toBeGreaterThan(0);
    for (const l of ourIndexes) expect(l).toMatch(/^CREATE (UNIQUE )?INDEX flotilla_/);
  });
  it('differs in the default of builds.locks_duration_s alone', () => {
    expect(actual.columns.filter((l) => !expected.columns.includes(l))).toEqual([OUR_DEFAULT]);
  });
  it("records Buildbot 3.7's alembic revision, so that a 3.7 master still starts on it", async () => {
    expect(await ours.pool.query(sql`SELECT version_num FROM alembic_version`)).toEqual([
      { version_num: '059' },
    ]);
  });
  it('notices a difference (the comparison can fail)', async () => {
    await ours.pool.query(sql`ALTER TABLE public.builds ALTER COLUMN state_string DROP NOT NULL`);
    const changed = await readCatalog(ours.pool);
    expect(changed.columns).not.toEqual(expected.columns);
    await ours.pool.query(sql`ALTER TABLE public.builds ALTER COLUMN state_string SET NOT NULL`);
  });
});

// The retention job deletes builds, steps, logs, requests, build sets and changes
// (docs/retention.md). PostgreSQL checks each deleted row's referencing rows: a scan of the
// whole referencing table unless the column leads an index. buildsets.rebuilt_buildid came
// with Buildbot 4.3's schema (0021) without one, and 100 builds took 7 s to delete beside
// 100,000 build sets (migration 0038).
describe('the foreign keys the retention job sets off', () => {
  it('each lead an index of their table', async () => {
    const rows = await ours.pool.query(sql`
      SELECT c.conrelid::regclass::text || '.' || a.attname AS fk
      FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
      WHERE c.contype = 'f'
        AND c.confrelid = ANY (ARRAY['builds', 'steps', 'logs', 'buildrequests', 'buildsets', 'changes',
                                     'flotilla.artifacts']::regclass[])
        AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1])
      ORDER BY 1`);
    expect(rows.map((r) => r.fk)).toEqual([]);
  });
});
