// Every table whose totals the database keeps for meta.total (a resource's `counted` in the
// registry, migration 0004) has the statement triggers that keep them, on every write that
// can add, remove or move a row between its scopes; and every endpoint that answers a total
// from those kept totals reads a counted table by counted dimensions, under scope keys the
// database writes (a scope spelled one way in TypeScript and another in SQL would answer 0,
// not fail). A new counted resource (services/api/registry/README.md) adds its line to
// TRIGGERS and its triggers to a migration, and this test checks the two against pg_trigger.
// That the kept totals equal count(*) after any mix of writes is test/db/counts.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRegistry } from '../../services/api/registry/index.js';
import type { PathArgs } from '../../services/api/registry/model.js';
import { type Queryable, sql } from '../../services/core/db/pool.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';

type Event = 'INSERT' | 'UPDATE' | 'DELETE';
interface Counting {
  /** The table the trigger is on. */
  on: string;
  events: readonly Event[];
  /** Its function, in schema flotilla. */
  fn: string;
}

const ALL: readonly Event[] = ['INSERT', 'UPDATE', 'DELETE'];
// Tables without dimensions: an update moves no row between scopes, so it has no trigger.
const ADD_REMOVE: readonly Event[] = ['INSERT', 'DELETE'];

/** By counted table: the triggers that keep its totals (migrations 0004, 0008 and 0043). */
const TRIGGERS: Readonly<Record<string, readonly Counting[]>> = {
  builds: [{ on: 'builds', events: ALL, fn: 'count_builds' }],
  buildrequests: [
    { on: 'buildrequests', events: ADD_REMOVE, fn: 'count_buildrequests' },
    // Updates by a function of their own since migration 0043 (a row counted by its own).
    { on: 'buildrequests', events: ['UPDATE'], fn: 'count_buildrequest_updates' },
    // `claimed`: a claim made or let go moves its request between scopes.
    { on: 'buildrequest_claims', events: ADD_REMOVE, fn: 'count_claims' },
  ],
  buildsets: [{ on: 'buildsets', events: ALL, fn: 'count_buildsets' }],
  changes: [{ on: 'changes', events: ADD_REMOVE, fn: 'count_rows' }],
  sourcestamps: [{ on: 'sourcestamps', events: ADD_REMOVE, fn: 'count_rows' }],
};

const registry = buildRegistry([]);
const counted = new Map(
  registry.endpoints.flatMap((e) =>
    e.resource.counted ? [[e.resource.counted.table, e.resource.counted]] : [],
  ),
);

/** Any path argument: 1 (what a countScope reads of it does not matter here, only its keys). */
const anyArgs = new Proxy({}, { get: () => 1 }) as PathArgs;

/**
 * The counting triggers the database has, as `table EVENT function` lines, with what is wrong
 * with each (a row trigger, a disabled one, one without its transition table, a function that
 * does not write the totals of its counted table). Counting triggers are those whose function
 * appends totals to flotilla.count_deltas, not the write versions ('~w', migration 0007).
 */
async function countingTriggers(db: Queryable): Promise<{ lines: string[]; faults: string[] }> {
  const rows = await db.query(sql`
    SELECT c.relname AS tbl, p.proname AS fn, p.prosrc AS src, t.tgname AS name, t.tgtype AS type,
           t.tgenabled AS enabled, t.tgoldtable AS old_rows, t.tgnewtable AS new_rows
    FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace cn ON cn.oid = c.relnamespace AND cn.nspname = 'public'
    JOIN pg_proc p ON p.oid = t.tgfoid
    JOIN pg_namespace pn ON pn.oid = p.pronamespace AND pn.nspname = 'flotilla'
    WHERE NOT t.tgisinternal AND p.prosrc LIKE '%count_deltas%' AND p.prosrc NOT LIKE '%''~w''%'`);
  const lines: string[] = [];
  const faults: string[] = [];
  // pg_trigger.tgtype's bits (PostgreSQL's include/catalog/pg_trigger.h).
  const bits: Record<Event, number> = { INSERT: 4, DELETE: 8, UPDATE: 16 };
  for (const r of rows) {
    const where = `${r.name} on ${r.tbl}`;
    if (r.type & 1) faults.push(`${where}: a row trigger (the totals are kept per statement)`);
    if (r.enabled === 'D') faults.push(`${where}: disabled`);
    for (const event of ALL) {
      if (!(r.type & bits[event])) continue;
      lines.push(`${r.tbl} ${event} ${r.fn}`);
      if (event !== 'INSERT' && r.old_rows === null) faults.push(`${where}: no OLD TABLE for ${event}`);
      if (event !== 'DELETE' && r.new_rows === null) faults.push(`${where}: no NEW TABLE for ${event}`);
    }
  }
  return { lines: lines.sort(), faults };
}

const expectedLines = (): string[] =>
  Object.values(TRIGGERS)
    .flatMap((list) => list.flatMap((t) => t.events.map((e) => `${t.on} ${e} ${t.fn}`)))
    .sort();

describe('counted tables', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createDatabase('migrated');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('lists every table the registry counts, and an update trigger where a row has dimensions', () => {
    expect([...counted.keys()].sort()).toEqual(Object.keys(TRIGGERS).sort());
    for (const [table, c] of counted) {
      const own = TRIGGERS[table]!.filter((t) => t.on === table).flatMap((t) => t.events);
      expect(own, table).toEqual(expect.arrayContaining([...(c.dims.length ? ALL : ADD_REMOVE)]));
    }
  });

  it('answers meta.total from kept totals only for counted tables, by counted dimensions', () => {
    const totals = registry.endpoints.filter((e) => e.countScope);
    expect(totals.length).toBeGreaterThan(0);
    for (const e of totals) {
      const counted = e.resource.counted;
      expect(counted, `${e.pattern} has countScope, but ${e.resource.plural} is not counted`).toBeDefined();
      expect(counted!.dims, e.pattern).toEqual(expect.arrayContaining(Object.keys(e.countScope!(anyArgs))));
    }
  });

  it('has the triggers that keep each counted table, per statement, enabled, with their transition tables', async () => {
    const { lines, faults } = await countingTriggers(db.pool);
    expect(faults).toEqual([]);
    expect(lines).toEqual(expectedLines());
    // Each function writes the totals of the table it counts: by name, or as TG_TABLE_NAME on the table itself.
    const src = await db.pool.query(sql`
      SELECT proname AS fn, prosrc AS src FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'flotilla'`);
    const body = new Map(src.map((r) => [r.fn as string, r.src as string]));
    for (const [table, list] of Object.entries(TRIGGERS))
      for (const t of list) {
        const s = body.get(t.fn) ?? '';
        expect(
          s.includes(`'${table}'`) || (t.on === table && s.includes('TG_TABLE_NAME')),
          `${t.fn} counts ${table}`,
        ).toBe(true);
      }
  });

  it('keeps the scopes the registry reads, named as it names them', async () => {
    // The oracle's recorded database, which has rows in every scope of every counted table.
    const fixture = await createDatabase('fixture');
    try {
      const rows = await fixture.pool.query(sql`
        SELECT DISTINCT tbl, scope FROM flotilla.count_deltas WHERE scope NOT LIKE '~%'`);
      for (const c of counted.values()) {
        // A scope key lists `dim=value` in the order of `dims`, joined by '&' (query/compile.ts).
        const kept = new Set(
          rows
            .filter((r) => r.tbl === c.table)
            .map((r) =>
              r.scope === ''
                ? ''
                : (r.scope as string)
                    .split('&')
                    .map((p) => p.split('=')[0])
                    .join('&'),
            ),
        );
        const read = new Set(c.scopes.map((s) => c.dims.filter((d) => s.includes(d)).join('&')));
        expect([...kept].sort(), c.table).toEqual([...read].sort());
      }
    } finally {
      await fixture.drop();
    }
  });

  it('finds a counted table that lacks a trigger', async () => {
    // The check above, on a database that lost one: it must say which.
    const broken = await createDatabase('migrated');
    try {
      await broken.pool.query(sql`DROP TRIGGER flotilla_count_del ON public.changes`);
      await broken.pool.query(sql`ALTER TABLE public.buildsets DISABLE TRIGGER flotilla_count_upd`);
      const { lines, faults } = await countingTriggers(broken.pool);
      expect(expectedLines().filter((l) => !lines.includes(l))).toEqual(['changes DELETE count_rows']);
      expect(faults).toEqual(['flotilla_count_upd on buildsets: disabled']);
    } finally {
      await broken.drop();
    }
  });
});
