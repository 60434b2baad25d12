// The requests the differential run asks both servers: every readable path form of the
// registry, bound to rows that exist and to rows that do not, and for each collection the
// query parameters of contract section 1.2 over every field, with values taken from the rows
// Buildbot itself returned. The first path form of each resource gets every variant; the
// other forms of the same resource get a smaller set (their scoping is what they add).
import type { Endpoint } from '../../../services/api/registry/model.js';
import type { Field } from '../../../services/core/entities/field.js';
import { isScalar } from '../../../services/core/entities/types.js';
import { type Bindings, bind, leafOf } from './bindings.js';

export interface Request {
  /** Relative to /api/v2, with its query string. */
  path: string;
  endpoint: string;
  /** Ask without Accept: application/json (Buildbot then answers indented text/plain). */
  plain?: boolean;
}

type Row = Record<string, unknown>;

const q = (params: [string, string][]) =>
  params.length ? `?${params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}` : '';

function str(v: unknown): string {
  return typeof v === 'boolean' ? (v ? 'true' : 'false') : String(v);
}

/** Distinct scalar values of a field in the rows (up to n, spread). */
function samples(rows: readonly Row[], name: string, n: number): unknown[] {
  const seen = new Set<string>();
  const out: unknown[] = [];
  for (const r of rows) {
    const v = r[name];
    if (v === undefined || (typeof v === 'object' && v !== null)) continue;
    const k = JSON.stringify(v);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(v);
  }
  if (out.length <= n) return out;
  return Array.from({ length: n }, (_, i) => out[Math.round((i * (out.length - 1)) / (n - 1))]);
}

function listSamples(rows: readonly Row[], name: string): string[] {
  const out = new Set<string>();
  for (const r of rows)
    for (const v of (r[name] as unknown[] | null) ?? []) if (typeof v !== 'object') out.add(str(v));
  return [...out].slice(0, 2);
}

/** Every query variant for a collection whose unfiltered rows are `rows`. */
function fullVariants(fields: readonly Field[], rows: readonly Row[], key: string): [string, string][][] {
  const out: [string, string][][] = [[]];
  const scalars = fields.filter((f) => isScalar(f.type));
  for (const f of fields) {
    out.push([['field', f.name]]);
    const kind = f.type.kind;
    if (isScalar(f.type)) {
      out.push([['order', f.name]], [['order', `-${f.name}`]]);
      out.push([
        ['order', `-${f.name}`],
        ['limit', '3'],
        ['offset', '1'],
      ]);
      const vals = samples(rows, f.name, 3);
      for (const v of vals) {
        const s = v === null ? 'None' : str(v);
        out.push([[f.name, s]], [[`${f.name}__ne`, s]]);
        if (kind === 'integer' || kind === 'datetime' || kind === 'string' || kind === 'identifier') {
          for (const op of ['lt', 'le', 'gt', 'ge']) out.push([[`${f.name}__${op}`, s]]);
        }
        if (kind === 'string' || kind === 'identifier') {
          const sub = s.length > 3 ? s.slice(1, Math.min(s.length - 1, 6)) : s;
          out.push([[`${f.name}__contains`, sub]], [[`${f.name}__contains`, sub.toUpperCase()]]);
        }
      }
      if (vals.length >= 2) {
        const [a, b] = vals.map((v) => (v === null ? 'None' : str(v)));
        out.push([
          [`${f.name}__in`, a!],
          [`${f.name}__in`, b!],
        ]);
        out.push([
          [`${f.name}__notin`, a!],
          [`${f.name}__notin`, b!],
        ]);
        out.push([
          [f.name, a!],
          [f.name, b!],
        ]);
        out.push([
          [`${f.name}__ne`, a!],
          [`${f.name}__ne`, b!],
        ]);
      }
      if (kind === 'boolean') {
        for (const s of ['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', 'TRUE', 'False', 'maybe']) {
          out.push([[f.name, s]]);
        }
      }
      if (kind === 'integer' || kind === 'datetime') {
        out.push([[f.name, 'abc']], [[`${f.name}__lt`, 'x']], [[f.name, ' 1 ']], [[f.name, '-1']]);
        out.push([[`${f.name}__contains`, '1']]);
      }
    } else if (kind === 'list') {
      for (const v of listSamples(rows, f.name)) {
        out.push([[`${f.name}__contains`, v]], [[f.name, v]]);
      }
      out.push([[`${f.name}__contains`, 'nosuch']], [['order', f.name]]);
    } else {
      out.push([[f.name, 'x']], [['order', f.name]], [[`${f.name}__contains`, 'x']]);
    }
    out.push([[`${f.name}__foo`, '1']]);
  }
  // Field selection with filtering and ordering, in the contract's order of application.
  const [a, b] = scalars;
  if (a && b) {
    out.push([
      ['field', a.name],
      ['field', b.name],
    ]);
    out.push([
      ['field', a.name],
      ['order', `-${b.name}`],
    ]);
    const v = samples(rows, b.name, 1)[0];
    if (v !== undefined) {
      out.push([
        ['field', a.name],
        [b.name, str(v)],
      ]);
    }
    out.push([
      ['order', `-${b.name}`],
      ['order', a.name],
      ['limit', '4'],
    ]);
  }
  for (const page of [
    [['limit', '0']],
    [['limit', '1']],
    [
      ['limit', '2'],
      ['offset', '1'],
    ],
    [['offset', '2']],
    [['offset', '1000']],
    [
      ['limit', '2'],
      ['limit', '3'],
    ],
    [['limit', 'x']],
    [['offset', '-1']],
    [['limit', '-1']],
    [['limit', '']],
    [
      ['order', key],
      ['limit', '2'],
      ['offset', '2'],
    ],
  ] as [string, string][][]) {
    out.push(page);
  }
  out.push([['nosuch', '1']], [['field', 'nosuch']], [['order', 'nosuch']], [['order', '-nosuch']]);
  out.push([['nosuch__eq', '1']], [['order', '']], [['field', '']]);
  return out;
}

/** A smaller set for the other path forms of a resource. */
function shortVariants(fields: readonly Field[], rows: readonly Row[], key: string): [string, string][][] {
  const out: [string, string][][] = [
    [],
    [['limit', '1']],
    [
      ['order', `-${key}`],
      ['limit', '2'],
      ['offset', '1'],
    ],
  ];
  const scalars = fields.filter((f) => isScalar(f.type));
  for (const f of scalars.slice(0, 6)) {
    const v = samples(rows, f.name, 1)[0];
    if (v !== undefined) out.push([[f.name, v === null ? 'None' : str(v)]]);
    out.push([['order', `-${f.name}`]]);
  }
  out.push([['field', key]]);
  return out;
}

const ENTITY_VARIANTS: [string, string][][] = [
  [],
  [['foo', '1']],
  [
    ['limit', '1'],
    ['order', '-nosuch'],
  ],
  [['field', 'nosuch']],
];

export async function generate(
  endpoints: readonly Endpoint[],
  bindings: Bindings,
  fetchRows: (path: string) => Promise<Row[]>,
): Promise<Request[]> {
  const out: Request[] = [];
  const seenResource = new Set<string>();
  for (const e of endpoints) {
    if (e.noGet) continue;
    const leaf = e.pattern === '' || e.pattern === 'application.spec' ? '' : leafOf(e.pattern);
    const tuples = e.pattern.includes(':')
      ? [...(bindings.byLeaf.get(leaf) ?? []).slice(0, 3), ...(bindings.byLeaf.get('missing') ?? [])]
      : [{}];
    let first = true;
    for (const t of tuples) {
      const path = bind(e.pattern, t);
      if (path === null) continue;
      const add = (params: [string, string][], plain = false) =>
        out.push({ path: `${path}${q(params)}`, endpoint: e.pattern, plain });
      if (e.kind === 'raw-log' || e.kind === 'build-data-value') {
        add([]);
        add([['limit', '2']]);
        continue;
      }
      if (e.kind === 'logchunk') {
        for (const v of [
          [],
          [
            ['offset', '1'],
            ['limit', '2'],
          ],
          [
            ['offset', '0'],
            ['limit', '1'],
          ],
          [['offset', '5']],
          [['limit', '3']],
          [['offset', '100000']],
          [['limit', '0']],
          [['offset', '-1']],
          [['offset', 'x']],
          [['field', 'content']],
          [
            ['field', 'firstline'],
            ['limit', '1'],
          ],
          [['order', '-firstline']],
          [['content__contains', 'a']],
        ] as [string, string][][]) {
          add(v);
        }
        continue;
      }
      if (e.kind === 'properties') {
        add([]);
        add([['foo', '1']]);
        continue;
      }
      if (!e.collection) {
        for (const v of ENTITY_VARIANTS) add(v);
        if (e.resource.name === 'build') {
          add([['property', '*']]);
          add([
            ['property', 'buildername'],
            ['property', 'nosuch'],
          ]);
        }
        if (first) add([], true);
        first = false;
        continue;
      }
      const isMissing = Object.values(t).some((v) => v === 999999 || v === 'nosuch');
      if (isMissing) {
        add([]);
        add([['limit', '1']]);
        continue;
      }
      const rows = await fetchRows(path);
      const full = !seenResource.has(e.resource.name) && first;
      seenResource.add(e.resource.name);
      const variants = full
        ? fullVariants(e.resource.fields, rows, e.resource.key)
        : shortVariants(e.resource.fields, rows, e.resource.key);
      for (const v of variants) add(v);
      if (e.resource.name === 'build') {
        add([
          ['property', '*'],
          ['order', '-buildid'],
          ['limit', '2'],
        ]);
        add([
          ['property', 'owner'],
          ['field', 'buildid'],
          ['field', 'properties'],
        ]);
        add([['property', '']]);
      }
      if (first) add([], true);
      first = false;
    }
  }
  return out;
}

/** Query strings and paths at the edges of Buildbot's parsing, on a few representative paths. */
export const EDGE_REQUESTS: Request[] = [
  'builds?field=buildid&field=buildid&order=buildid&limit=3',
  'builds?order=buildid&order=buildid&limit=3',
  'builds?order=-number&order=buildid&order=-buildid&limit=4',
  'builds?buildid=1&buildid=1',
  'builds?property=*&field=buildid&order=buildid&limit=2',
  'builds?property=*&field=properties&field=buildid&order=buildid&limit=2',
  'builds?property=*&property=owner&order=buildid&limit=2',
  'builds?property=owner&property=nosuch&order=-buildid&limit=2',
  'builds/2?property=owner&property=*',
  'builds/2?property=nosuch',
  'builds/2?property=',
  'builds/2?field=buildid&property=*',
  'builds/2?field=properties&property=owner',
  'changes?field=changeid&field=sourcestamp&order=changeid&limit=2',
  'changes?field=files&field=changeid&order=-changeid&limit=2',
  'builders?name=%E2%9C%93',
  'builders?name=run%00tests',
  'builders?description__contains=%25',
  'builders?description__contains=_',
  'builds?limit=1e2',
  'builds?offset=&order=buildid&limit=2',
  'builds?limit=0x10',
  'builds?limit=%2B5&order=buildid',
  'builds?limit=5_0&order=buildid',
  'builds?offset=%205&order=buildid&limit=2',
  'builds?order=%20buildid&limit=2',
  'builds?order=--buildid&limit=2',
  'builds?order=-&limit=2',
  'builds?number=%201&order=buildid',
  'builds?number=1_0&order=buildid',
  'builds?number=%2B1&order=buildid',
  'builds?results=None&order=buildid&limit=3',
  'builds?results__ne=None&order=buildid&limit=3',
  'builds?complete_at=None&order=buildid',
  'builds?complete=TRUE&order=buildid&limit=2',
  'builds?complete=Yes&order=buildid&limit=2',
  'builds?complete=&order=buildid&limit=2',
  'builders/run%74ests',
  'builders/runtests%2F',
  'builders/runtests/builds?order=number&limit=2',
  'builders/1.5',
  'builds/2?field=',
  'builds/2?field=buildid&field=nosuch',
  'builds/02',
  'builds/2%20',
  'logs/5/contents?offset=2&limit=2&offset=0',
  'logs/5/contents?limit=1&limit=3',
  'logs/5/raw?offset=2',
  'workers/worker1?field=name',
  'workers/2?order=name',
  'masters?active=false',
  'masters?active=yes&field=name',
  'sourcestamps?patch=None&order=ssid&limit=2',
  'buildsets?sourcestamps__contains=1&order=bsid&limit=2',
  'buildrequests?claimed=true&complete=false&order=buildrequestid',
  'buildrequests?results=-1&order=buildrequestid',
  'forceschedulers?builder_names__contains=flaky',
  'forceschedulers/force-flaky?field=name&field=all_fields',
  'application.spec?plural=builds&order=path',
  'application.spec?type__contains=log&order=path&field=path',
  '?name__contains=build&order=name',
  '?field=name&order=-name&limit=2&offset=1',
].map((path) => ({ path, endpoint: 'edge' }));
