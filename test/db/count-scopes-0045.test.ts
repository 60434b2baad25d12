// Migration 0045 made the count triggers' scope functions (0004's flotilla.build_scopes,
// buildrequest_scopes and buildset_scopes) inlinable by casting to text where 0004 joined a
// number or a boolean with `||`. The totals are keyed by these arrays' texts, so they must
// not change by a character; and the point of the change is that the planner now puts them
// into the calling statement instead of calling a function per row.
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabaseWithClient } from '../helpers/databases.js';

/** 0004's three functions, from the migration's own text, renamed into a schema of their own. */
function functions0004(): string {
  const text = readFileSync(
    new URL('../../services/core/db/migrations/0004_flotilla_counts.sql', import.meta.url),
    'utf8',
  );
  const start = text.indexOf('CREATE FUNCTION flotilla.build_scopes(');
  const last = text.indexOf('CREATE FUNCTION flotilla.buildset_scopes(');
  const end = text.indexOf('$$;', text.indexOf('AS $$', last) + 5);
  if (start < 0 || last < 0 || end < 0) throw new Error('0004 no longer holds the three scope functions');
  return `CREATE SCHEMA old0004; ${text.slice(start, end + 3).replaceAll('FUNCTION flotilla.', 'FUNCTION old0004.')}`;
}

let db: Awaited<ReturnType<typeof createDatabaseWithClient>>;
let client: pg.Client;
beforeAll(async () => {
  db = await createDatabaseWithClient();
  client = db.client;
  await client.query(functions0004());
});
afterAll(async () => {
  await db.drop();
});

const CALLS: [string, string][] = [
  ['build_scopes', 'b, w, c'],
  ['buildrequest_scopes', 'b, c, d'],
  ['buildset_scopes', 'c'],
];
// Builder and worker ids from NULL and 0 through five digits and a negative one, both booleans and NULL.
const INPUTS = `(VALUES (NULL::int), (0), (1), (7), (42), (99999), (-3)) bs(b),
  (VALUES (NULL::int), (1), (1000)) ws(w), (VALUES (true), (false), (NULL::boolean)) cs(c),
  (VALUES (true), (false)) ds(d)`;

describe('migration 0045: the scope functions', () => {
  it.each(CALLS)('%s gives the same texts as 0004 for every input', async (fn, args) => {
    const { rows } = await client.query<{ n: string; differ: string }>(
      `SELECT count(*) AS n, count(*) FILTER (WHERE flotilla.${fn}(${args}) IS DISTINCT FROM old0004.${fn}(${args})) AS differ
       FROM ${INPUTS}`,
    );
    expect(Number(rows[0]?.n)).toBe(7 * 3 * 3 * 2);
    expect(Number(rows[0]?.differ)).toBe(0);
  });

  it.each(CALLS)(
    '%s is inlined into the statement that calls it, where 0004 was called',
    async (fn, args) => {
      const plan = async (schema: string) => {
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (VERBOSE) SELECT unnest(${schema}.${fn}(${args})) FROM ${INPUTS}`,
        );
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      };
      expect(await plan('old0004')).toContain(`old0004.${fn}(`);
      expect(await plan('flotilla')).not.toContain(`${fn}(`);
    },
  );
});
