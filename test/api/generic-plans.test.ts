// Statements that keep one generic plan (query/compile.ts, CompiledRows.genericPlan): only
// unfiltered pages of root collections in key order, whose plan cannot depend on their
// values; they run on the read pool's connections in force_generic_plan mode, the others as
// PostgreSQL chooses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadPool } from '../../services/api/db-routing/read-pool.js';
import { sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { compiled } from './lib/compiled.js';

describe('which pages keep a generic plan', () => {
  it.each([
    ['/builds?order=-buildid&limit=50', true],
    ['/builds?limit=50&offset=1000', true],
    ['/changes?order=-changeid&limit=50', true],
    ['/changes?limit=50', true],
    ['/buildsets?order=-bsid&limit=50&field=bsid', true],
    ['/builds?order=-buildid&order=number&limit=50', false],
    ['/builds?order=-number&limit=50', false],
    ['/builds?complete=true&order=-buildid&limit=50', false],
    ['/builds?builderid=1&limit=50', false],
    ['/builders/1/builds?order=-buildid&limit=50', false],
    ['/workers/1/builds?limit=50', false],
    ['/builds/1', false],
  ])('%s: %s', (url, generic) => {
    expect(compiled(url).genericPlan).toBe(generic);
  });
});

describe('the read pool', () => {
  let db: TestDatabase;
  let pool: ReadPool;
  beforeAll(async () => {
    db = await createDatabase('fixture');
    pool = new ReadPool(db.url, 2, 1);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('runs a statement that keeps a generic plan on connections that keep one, and others as PostgreSQL chooses', async () => {
    const mode = sql`SELECT current_setting('plan_cache_mode') AS m`;
    expect(await pool.rows(mode, { genericPlan: true })).toEqual([{ m: 'force_generic_plan' }]);
    expect(await pool.rows(mode)).toEqual([{ m: 'auto' }]);
  });

  it('answers the same rows either way', async () => {
    const { query } = compiled('/builds?order=-buildid&limit=5&offset=2');
    const plain = await pool.rows(query);
    expect(await pool.rows(query, { genericPlan: true })).toEqual(plain);
    // The page by column (compile.ts): its row count first, then one array per field.
    const [count, ...columns] = (plain[0] as { rows: [number, ...unknown[][]] }).rows;
    expect(count).toBe(5);
    for (const c of columns) expect(c).toHaveLength(5);
  });
});
