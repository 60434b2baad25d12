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
