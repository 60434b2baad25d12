// The promise of migration 0001: our migrations create exactly the schema a real Buildbot 3.7
// master creates (test/fixtures/buildbot-3.7/schema.sql), so that Buildbot accepts the database as its
// own. Only our additive, flotilla_-prefixed indexes may differ.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../services/core/db/pool.js';
import { SCHEMA_SQL } from '../helpers/buildbot-recorded.js';
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
  ours = await createDatabase('migrated');
  expected = await readCatalog(buildbot.pool);
  actual = await readCatalog(ours.pool);
});
afterAll(async () => {
  await buildbot?.drop();
  await ours?.drop();
});

describe("the migrated schema is Buildbot 3.7's", () => {
  it('has the 39 tables', () => {
    expect(expected.tables).toHaveLength(39);
    expect(actual.tables).toEqual(expected.tables);
  });
  for (const kind of ['columns', 'constraints', 'sequences'] as const) {
    it(`has the same ${kind}`, () => {
      expect(expected[kind].length).toBeGreaterThan(10);
      expect(actual[kind]).toEqual(expected[kind]);
    });
  }
  it('has the same indexes, plus only our own flotilla_ indexes', () => {
    expect(withoutOurIndexes(actual).indexes).toEqual(expected.indexes);
    const ourIndexes = actual.indexes.filter((l) => !expected.indexes.includes(l));
    expect(ourIndexes.length).toBeGreaterThan(0);
    for (const l of ourIndexes) expect(l).toMatch(/^CREATE (UNIQUE )?INDEX flotilla_/);
  });
  it("records Buildbot's alembic revision", async () => {
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
