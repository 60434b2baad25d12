// The query engine against a plain in-memory model of Buildbot's semantics. For each
// collection, every row is read once with no parameters; then random requests (filters with
// every operator and values drawn from the data and its edges, 1-3 order terms, offset,
// limit, field selection) must answer exactly the rows, in exactly the order, and the
// meta.total that the model computes in JavaScript:
// - eq/in: equal to one of the values; a list field never equals a value;
// - ne/notin: equal to none; NULL kept (Python: None != x) except for the fields the
//   registry marks sqlNullSemantics (Buildbot filters those in SQL, where NULL drops);
// - lt/le/gt/ge: compared (strings by code point), NULL never matches;
// - contains: substring for strings, membership for lists, any of the values;
// - order: as asked, NULL lowest, ties by the key ascending; default: key ascending
//   (/changes newest first); offset and limit after ordering; total before them.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '../../services/api/registry/model.js';
import { type Queryable, sql } from '../../services/core/db/pool.js';
import type { Field } from '../../services/core/entities/field.js';
import { type FieldType, isScalar } from '../../services/core/entities/types.js';
import { addExtraRows, EXTRA } from './lib/extra-rows.js';
import { ApiUnderTest, collection, oracleRegistry } from './lib/harness.js';

type Row = Record<string, unknown>;
type Op = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge' | 'contains' | 'in' | 'notin';
type Value = number | bigint | string | boolean;

interface Filter {
  field: Field;
  op: Op;
  values: Value[];
  /** `field=v` rather than `field__eq=v`. */
  plain: boolean;
}
interface Order {
  field: Field;
  desc: boolean;
}
interface Request {
  filters: Filter[];
  order: Order[] | null;
  offset: number | null;
  limit: number | null;
  fields: string[] | null;
}

// ------------------------------------------------------------------ the model

const baseType = (f: Field): FieldType => (f.type.kind === 'list' ? f.type.of : f.type);
const isNumeric = (t: FieldType) => t.kind === 'integer' || t.kind === 'datetime';

function cmpCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** Python's ordering of two values of one field, None lowest. */
function cmp(a: unknown, b: unknown): number {
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : -1;
  if (b === null || b === undefined) return 1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = cmp(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  if (typeof a === 'string' && typeof b === 'string') return cmpCodePoints(a, b);
  if (typeof a === 'boolean' || typeof b === 'boolean') return Number(a) - Number(b);
  const x = BigInt(a as number | bigint);
  const y = BigInt(b as number | bigint);
  return x < y ? -1 : x > y ? 1 : 0;
}
const same = (a: unknown, b: unknown) => cmp(a, b) === 0;

function matches(f: Filter, v: unknown): boolean {
  const vs = f.values;
  if (f.field.type.kind === 'list') {
    const list = v as unknown[];
    switch (f.op) {
      case 'contains':
        return vs.some((x) => list.some((e) => same(e, x)));
      case 'eq':
      case 'in':
        return false;
      default:
        return true; // ne, notin: a list is never equal to a value
    }
  }
  if (v === null) return (f.op === 'ne' || f.op === 'notin') && !f.field.sqlNullSemantics;
  switch (f.op) {
    case 'eq':
    case 'in':
      return vs.some((x) => same(v, x));
    case 'ne':
    case 'notin':
      return !vs.some((x) => same(v, x));
    case 'lt':
      return cmp(v, vs[0]) < 0;
    case 'le':
      return cmp(v, vs[0]) <= 0;
    case 'gt':
      return cmp(v, vs[0]) > 0;
    case 'ge':
      return cmp(v, vs[0]) >= 0;
    case 'contains':
      return vs.some((x) => (v as string).includes(x as string));
  }
}

function model(resource: Resource, data: Row[], r: Request): { rows: Row[]; total: number } {
  const key = resource.fields.find((f) => f.name === resource.key)!;
  const kept = data.filter((row) => r.filters.every((f) => matches(f, row[f.field.name])));
  const terms: Order[] =
    r.order ??
    (resource.defaultOrder ?? [resource.key]).map((n) => ({
      field: resource.fields.find((f) => f.name === n.replace(/^-/, ''))!,
      desc: n.startsWith('-'),
    }));
  const all = terms.some((t) => t.field === key) ? terms : [...terms, { field: key, desc: false }];
  const ordered = [...kept].sort((a, b) => {
    for (const t of all) {
      const c = cmp(a[t.field.name], b[t.field.name]);
      if (c !== 0) return t.desc ? -c : c;
    }
    return 0;
  });
  const start = r.offset ?? 0;
  const page = ordered.slice(start, r.limit === null ? undefined : start + r.limit);
  const rows = r.fields ? page.map((row) => Object.fromEntries(r.fields!.map((n) => [n, row[n]]))) : page;
  return { rows, total: kept.length };
}

// ------------------------------------------------------------------ requests

const BOOLEAN_SPELLINGS: Record<string, string[]> = {
  true: ['true', 'on', 'yes', '1', 'TRUE', 'On', 'Yes'],
  false: ['false', 'off', 'no', '0', 'FALSE', 'Off', 'nO'],
};
const IDENT = /^[a-zA-Z_-][a-zA-Z0-9._-]*$/;

function queryString(r: Request, spell: (f: Field, v: Value, i: number) => string): string {
  const q = new URLSearchParams();
  for (const f of r.filters) {
    const name = f.plain ? f.field.name : `${f.field.name}__${f.op}`;
    for (const [i, v] of f.values.entries()) q.append(name, spell(f.field, v, i));
  }
  for (const o of r.order ?? []) q.append('order', `${o.desc ? '-' : ''}${o.field.name}`);
  for (const n of r.fields ?? []) q.append('field', n);
  if (r.offset !== null) q.append('offset', String(r.offset));
  if (r.limit !== null) q.append('limit', String(r.limit));
  return q.toString();
}

/** Values worth filtering with: those in the data, pieces of them, and the edges around them. */
function valuePool(f: Field, data: Row[]): Value[] {
  const t = baseType(f);
  const seen = data.flatMap((row) => {
    const v = row[f.name];
    return Array.isArray(v) ? v : v === null || v === undefined ? [] : [v];
  }) as Value[];
  if (t.kind === 'boolean') return [true, false];
  if (isNumeric(t)) {
    const nums = seen.map(Number);
    const lo = nums.length ? Math.min(...nums) : 0;
    const hi = nums.length ? Math.max(...nums) : 0;
    return [...new Set<Value>(nums)].concat([
      lo - 1,
      hi + 1,
      0,
      -1,
      2 ** 31,
      -(2 ** 40),
      99999999999999999999n,
      -(2n ** 70n),
    ]);
  }
  const strs = [...new Set(seen.map(String))];
  const pieces = strs.flatMap((s) => {
    const cps = Array.from(s);
    return [cps.slice(0, 3).join(''), cps.slice(-4).join(''), cps.slice(1, 6).join('')];
  });
  const pool = [...new Set([...strs, ...pieces, '', 'zzz', 'é', '%', '_', 'a b', 'A'])];
  if (t.kind === 'identifier') {
    const len = (t as { len: number }).len;
    return pool.filter((s) => IDENT.test(s) && s.length <= len);
  }
  return pool;
}

function opsFor(f: Field): Op[] {
  if (f.type.kind === 'list') return ['eq', 'ne', 'in', 'notin', 'contains'];
  const text = f.type.kind === 'string' || f.type.kind === 'identifier';
  return ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'in', 'notin', ...(text ? (['contains'] as Op[]) : [])];
}
const PLURAL: Op[] = ['eq', 'ne', 'contains', 'in', 'notin'];

/**
 * Requests that hit a bug reported to the lead and not fixed yet; the property skips them so
 * that the suite stays green. Remove a clause when its bug is fixed.
 */
function requestArb(resource: Resource, data: Row[]): fc.Arbitrary<Request> {
  const filterable = resource.fields.filter(
    (f) => isScalar(f.type) || (f.type.kind === 'list' && isScalar(f.type.of)),
  );
  const pools = new Map(filterable.map((f) => [f.name, valuePool(f, data)]));
  const filterArb: fc.Arbitrary<Filter> = fc.constantFrom(...filterable).chain((field) =>
    fc.constantFrom(...opsFor(field)).chain((op) =>
      fc
        .record({
          values: fc.array(fc.constantFrom(...pools.get(field.name)!), {
            minLength: 1,
            maxLength: PLURAL.includes(op) ? 3 : 1,
          }),
          plain: op === 'eq' ? fc.boolean() : fc.constant(false),
        })
        .map(({ values, plain }) => ({ field, op, values, plain })),
    ),
  );
  const n = data.length;
  return fc
    .record({
      filters: fc.uniqueArray(filterArb, {
        maxLength: 3,
        selector: (f) => (f.plain ? f.field.name : `${f.field.name}__${f.op}`),
      }),
      order: fc.option(
        fc.array(fc.record({ field: fc.constantFrom(...filterable), desc: fc.boolean() }), {
          minLength: 1,
          maxLength: 3,
        }),
        { nil: null },
      ),
      offset: fc.option(fc.integer({ min: 0, max: n + 2 }), { nil: null, freq: 2 }),
      limit: fc.option(fc.integer({ min: 0, max: n + 2 }), { nil: null, freq: 2 }),
      fields: fc.option(fc.subarray(resource.fields.map((f) => f.name)), { nil: null, freq: 3 }),
    })
    .map((r) => {
      if (!r.fields) return r;
      // Ordering or filtering on a field that is not selected is a 400 (errors.test.ts).
      const need = [...r.filters.map((f) => f.field.name), ...(r.order ?? []).map((o) => o.field.name)];
      const fields = [...new Set([...r.fields, ...need])];
      return { ...r, fields: fields.length ? fields : null };
    });
}

// ------------------------------------------------------------------ the data

/** More rows than the fixture has where it is thin: NULLs, ties, unicode, paused workers. */
async function addModelRows(db: Queryable): Promise<void> {
  await addExtraRows(db);
  const [{ t }] = await db.query(sql`SELECT max(started_at) AS t FROM builds`);
  await db.tx(async (tx) => {
    await tx.query(sql`
      INSERT INTO builds (id, number, builderid, buildrequestid, workerid, masterid, started_at,
                          complete_at, state_string, results)
      SELECT 1001 + i, 1 + i, 2, 101, CASE WHEN i % 3 = 0 THEN NULL ELSE 1 + i % 3 END, 1, ${t} - i * 7,
             CASE WHEN i % 2 = 0 THEN NULL ELSE ${t} + i END,
             (ARRAY['building', 'Building', 'été ✓', 'build successful', ''])[1 + i % 5],
             CASE WHEN i % 4 = 0 THEN NULL ELSE i % 7 END
      FROM generate_series(1, 12) i`);
    await tx.query(sql`
      INSERT INTO steps (id, number, name, buildid, started_at, complete_at, state_string, results, urls_json, hidden)
      SELECT 5003 + i, 2 + i, (ARRAY['lint', 'unit tests', 'Compile', 'é-step', 'x.y'])[1 + i % 5] || '_' || i,
             ${EXTRA.runningBuildid},
             CASE WHEN i % 3 = 0 THEN NULL ELSE ${t} + i % 4 END,
             CASE WHEN i % 2 = 0 THEN NULL ELSE ${t} + 10 + i % 3 END,
             (ARRAY['pending', 'running', 'done ✓', ''])[1 + i % 4],
             CASE WHEN i % 5 = 0 THEN NULL ELSE i % 3 END, '[]', i % 2
      FROM generate_series(1, 20) i`);
    await tx.query(sql`
      INSERT INTO workers (id, name, info, paused, graceful)
      SELECT 1001 + i, 'w-' || i || (ARRAY['', '.a', '_B', 'é'])[1 + i % 4], '{}', i % 2, i % 3 / 2
      FROM generate_series(1, 6) i`);
  });
}

// ------------------------------------------------------------------ the property

// MODEL_RUNS_SCALE=10 runs ten times as many requests (a longer hunt, not for CI).
const SCALE = Number(process.env.MODEL_RUNS_SCALE ?? 1);
const COLLECTIONS: { path: string; pattern: string; runs: number }[] = [
  { path: '/builds', pattern: 'builds', runs: 90 },
  { path: '/buildrequests', pattern: 'buildrequests', runs: 70 },
  { path: '/changes', pattern: 'changes', runs: 90 },
  { path: `/builds/${EXTRA.runningBuildid}/steps`, pattern: 'builds/n:buildid/steps', runs: 90 },
  { path: '/workers', pattern: 'workers', runs: 60 },
  { path: '/builders', pattern: 'builders', runs: 60 },
];

let api: ApiUnderTest;
beforeAll(async () => {
  api = await ApiUnderTest.start('fixture');
  await addModelRows(api.db.pool);
});
afterAll(async () => {
  await api?.close();
});

describe('the API answers what the model computes', () => {
  const registry = oracleRegistry();
  for (const c of COLLECTIONS) {
    it(
      `${c.path}: ${c.runs} random requests`,
      async () => {
        const endpoint = registry.endpoints.find((e) => e.pattern === c.pattern)!;
        const resource = endpoint.resource;
        const { rows: data, total } = collection(await api.get(c.path), resource.plural);
        expect(total).toBe(data.length);
        expect(data.length).toBeGreaterThan(5);
        await fc.assert(
          fc.asyncProperty(requestArb(resource, data), fc.nat(), async (r, seed) => {
            const spell = (f: Field, v: Value, i: number) => {
              if (typeof v === 'boolean') {
                const s = BOOLEAN_SPELLINGS[String(v)]!;
                return s[(seed + i) % s.length]!;
              }
              if (isNumeric(baseType(f)) && (seed + i) % 3 === 1 && BigInt(v) >= 0n) return `+${v}`;
              return String(v);
            };
            const qs = queryString(r, spell);
            const a = await api.get(`${c.path}?${qs}`);
            expect(a.status, `${c.path}?${qs}: ${a.text.slice(0, 300)}`).toBe(200);
            const got = collection(a, resource.plural);
            const want = model(resource, data, r);
            expect({ q: qs, total: got.total, rows: got.rows }).toEqual({
              q: qs,
              total: want.total,
              rows: want.rows,
            });
          }),
          { numRuns: Math.round(c.runs * SCALE) },
        );
      },
      60_000 * SCALE,
    );
  }

  it('the model itself: NULLs, ties and lists behave as specified', () => {
    const build = registry.endpoints.find((e) => e.pattern === 'builds')!.resource;
    const f = (n: string) => build.fields.find((x) => x.name === n)!;
    const data: Row[] = [
      { buildid: 1, results: null, state_string: 'b', number: 2 },
      { buildid: 2, results: 0, state_string: 'a', number: 2 },
      { buildid: 3, results: 2, state_string: 'B', number: 1 },
    ];
    const req = (x: Partial<Request>): Request => ({
      filters: [],
      order: null,
      offset: null,
      limit: null,
      fields: null,
      ...x,
    });
    const ids = (r: Request) => model(build, data, r).rows.map((row) => row.buildid);
    // builds.results is filtered in SQL by Buildbot: ne drops NULL.
    expect(ids(req({ filters: [{ field: f('results'), op: 'ne', values: [0], plain: false }] }))).toEqual([
      3,
    ]);
    expect(ids(req({ order: [{ field: f('results'), desc: false }] }))).toEqual([1, 2, 3]);
    expect(ids(req({ order: [{ field: f('results'), desc: true }] }))).toEqual([3, 2, 1]);
    expect(ids(req({ order: [{ field: f('number'), desc: true }] }))).toEqual([1, 2, 3]);
    expect(ids(req({ order: [{ field: f('state_string'), desc: false }] }))).toEqual([3, 2, 1]);
    expect(model(build, data, req({ offset: 1, limit: 1 }))).toEqual({ rows: [data[1]], total: 3 });
  });
});
