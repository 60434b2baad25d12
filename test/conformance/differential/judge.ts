// What Flotilla should have answered, given what Buildbot 3.7 answered to the same request on
// the same rows, after the compatibility rules of DESIGN.md: a missing resource is 404 `not
// found`; `meta.total` counts every match whatever limit and offset cut; `order` sorts nulls
// lowest and strings by code point, with the default order when none is asked; where Buildbot
// crashes (500), a 400. Returns null when Flotilla's answer is acceptable, else what differs.

export interface Answer {
  status: number;
  type: string;
  disposition: string | null;
  /** The CORS headers, the server's own origin written `{self}`. */
  cors?: string;
  text: string;
}

type Row = Record<string, unknown>;
type Json = unknown;

const VOLATILE = new Set(['last_active']);
const SETS = new Set(['configured_on', 'connected_to']);

/** JSON with sorted keys, volatile values blanked and unordered lists sorted. */
export function canon(v: Json, key = ''): string {
  if (Array.isArray(v)) {
    const items = v.map((x) => canon(x));
    if (SETS.has(key)) items.sort();
    return `[${items.join(',')}]`;
  }
  if (v !== null && typeof v === 'object') {
    const o = v as Row;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${VOLATILE.has(k) ? 'null' : canon(o[k], k)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Contract order: nulls lowest, numbers and booleans by value, strings by code point. */
function cmp(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : 1;
  return Number(a) < Number(b) ? -1 : Number(a) > Number(b) ? 1 : 0;
}

export interface Query {
  params: [string, string][];
  first(name: string): string | undefined;
  all(name: string): string[];
}

export function parseQuery(path: string): Query {
  const i = path.indexOf('?');
  const params = i < 0 ? [] : [...new URLSearchParams(path.slice(i + 1))];
  return {
    params,
    first: (n) => params.find(([k]) => k === n)?.[1],
    all: (n) => params.filter(([k]) => k === n).map(([, v]) => v),
  };
}

export function withoutPaging(path: string): string {
  const i = path.indexOf('?');
  if (i < 0) return path;
  const rest = [...new URLSearchParams(path.slice(i + 1))].filter(([k]) => k !== 'limit' && k !== 'offset');
  return rest.length
    ? `${path.slice(0, i)}?${rest.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`
    : path.slice(0, i);
}

const mediaType = (ct: string) => ct.split(';')[0]!.trim().toLowerCase();

function envelopeList(body: Json): { plural: string; list: Row[]; total: unknown } | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const o = body as Row;
  if (!('meta' in o)) return null;
  const plural = Object.keys(o).find((k) => k !== 'meta');
  if (!plural || !Array.isArray(o[plural])) return null;
  return { plural, list: o[plural] as Row[], total: (o.meta as Row)?.total };
}

export interface Context {
  path: string;
  collection: boolean;
  /** The default order, for pages without `order`. */
  defaultOrder: readonly string[];
  /** Buildbot's answer to the same request without limit and offset (only when paged). */
  unpaged?: Answer;
}

function parseJson(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/**
 * Deliberate differences (docs/compatibility.md): Flotilla refuses with 400 what Buildbot
 * silently ignores or crashes on. A 400 of Flotilla's for one of these is accepted.
 */
const REFUSED: [RegExp, string][] = [
  [/[?&][a-z_]+__(?!(eq|ne|lt|le|gt|ge|contains|in|notin)=)[a-z]+=/, 'unknown operator'],
  [/[?&](limit|offset)=-/, 'negative limit or offset'],
  [/[?&]nosuch__eq=/, 'unknown field with an operator'],
];

export function judge(bb: Answer, fl: Answer, ctx: Context): string | null {
  if (fl.status >= 500) return `flotilla ${fl.status}: ${fl.text.slice(0, 120)}`;
  if (fl.status === 400 && REFUSED.some(([re]) => re.test(ctx.path))) return null;
  if (fl.status === 400 && /cannot order on field/.test(fl.text)) return null;
  if (bb.status >= 500) {
    if (fl.status === 400 || fl.status === 404) return null;
    return `buildbot 500, flotilla ${fl.status}: bb ${bb.text.slice(0, 200)}`;
  }
  if (fl.status === 404) {
    if (fl.text !== 'not found' || mediaType(fl.type) !== 'text/plain') return 'a 404 without `not found`';
    if (bb.status === 404) return null;
    if (bb.status === 200) {
      const env = envelopeList(parseJson(bb.text));
      if (env && (env.list.length === 0 || env.list.every((r) => Object.keys(r).length === 0))) return null;
      if (!env && bb.text.trim() === '{}') return null;
    }
    return `flotilla 404, buildbot ${bb.status}: ${bb.text.slice(0, 160)}`;
  }
  if (bb.status !== fl.status) {
    return `status: buildbot ${bb.status}, flotilla ${fl.status}: bb ${bb.text.slice(0, 140)} | fl ${fl.text.slice(0, 140)}`;
  }
  if (mediaType(bb.type) !== mediaType(fl.type))
    return `content-type: buildbot ${bb.type}, flotilla ${fl.type}`;
  if (bb.disposition !== fl.disposition) {
    return `content-disposition: buildbot ${bb.disposition}, flotilla ${fl.disposition}`;
  }
  const bj = parseJson(bb.text);
  const fj = parseJson(fl.text);
  if (bj === undefined || fj === undefined) {
    return bb.text === fl.text ? null : textDiff(bb.text, fl.text);
  }
  if (bb.status !== 200)
    return canon(bj) === canon(fj) ? null : `body: bb ${bb.text.slice(0, 200)} | fl ${fl.text.slice(0, 200)}`;
  const be = envelopeList(bj);
  const fe = envelopeList(fj);
  if (!be || !fe || !ctx.collection) {
    return canon(bj) === canon(fj) ? null : firstDiff(bj, fj, 'body');
  }
  if (be.plural !== fe.plural) return `envelope key: buildbot ${be.plural}, flotilla ${fe.plural}`;
  const q = parseQuery(ctx.path);
  const paged = q.first('limit') !== undefined || q.first('offset') !== undefined;
  let full = be.list;
  if (paged) {
    const u = ctx.unpaged ? envelopeList(parseJson(ctx.unpaged.text)) : null;
    if (!u) return `buildbot answered no unpaged list (${ctx.unpaged?.status})`;
    full = u.list;
  }
  if (fe.total !== full.length) return `meta.total: expected ${full.length}, flotilla ${String(fe.total)}`;
  const orderArgs = q.all('order');
  const sortKeys = orderArgs.length
    ? orderArgs
    : !paged
      ? []
      : ctx.defaultOrder.filter((k) => full.every((r) => k.replace(/^-/, '') in r));
  if (sortKeys.length === 0) return multiset(full, fe.list, 'list');
  const keyOf = (r: Row) => canon(sortKeys.map((k) => r[k.replace(/^-/, '')] ?? null));
  const sorted = [...full].sort((x, y) => {
    for (const k of sortKeys) {
      const desc = k.startsWith('-');
      const c = cmp(x[desc ? k.slice(1) : k], y[desc ? k.slice(1) : k]);
      if (c) return desc ? -c : c;
    }
    return 0;
  });
  // Python's int(): spaces around, a sign, underscores between digits.
  const pyInt = (s: string) => Number(s.trim().replace(/_/g, ''));
  const offset = pyInt(q.first('offset') ?? '0');
  const limit = q.first('limit');
  const page = sorted.slice(offset, limit === undefined ? undefined : offset + pyInt(limit));
  if (page.length !== fe.list.length)
    return `list: expected ${page.length} items, flotilla ${fe.list.length}`;
  const groups = new Map<string, string[]>();
  for (const r of sorted) {
    const k = keyOf(r);
    groups.set(k, [...(groups.get(k) ?? []), canon(r)]);
  }
  for (let i = 0; i < page.length; i++) {
    const got = fe.list[i]!;
    if (keyOf(got) !== keyOf(page[i]!)) {
      return `list[${i}] order: expected key ${keyOf(page[i]!)}, flotilla ${keyOf(got)}`;
    }
    const g = groups.get(keyOf(got)) ?? [];
    const j = g.indexOf(canon(got));
    if (j < 0)
      return `list[${i}]: not among Buildbot's rows with that key: ${canon(got).slice(0, 200)} vs ${g[0]?.slice(0, 200)}`;
    g.splice(j, 1);
  }
  return null;
}

function multiset(expected: Row[], got: Row[], where: string): string | null {
  const left = expected.map((r) => canon(r));
  for (const r of got) {
    const c = canon(r);
    const j = left.indexOf(c);
    if (j < 0) {
      const near = expected.find((e) => Object.keys(e).some((k) => k.endsWith('id') && e[k] === r[k]));
      return `${where}: unexpected item ${c.slice(0, 200)}${near ? `; buildbot ${canon(near).slice(0, 200)}` : ''}${
        near ? ` (${firstDiff(near, r, '')})` : ''
      }`;
    }
    left.splice(j, 1);
  }
  return left.length ? `${where}: ${left.length} missing, e.g. ${left[0]!.slice(0, 200)}` : null;
}

function firstDiff(a: Json, b: Json, path: string): string {
  if (canon(a) === canon(b)) return '';
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const x = a as Row;
    const y = b as Row;
    for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
      if (VOLATILE.has(k)) continue;
      if (!(k in y)) return `${path}.${k}: missing in flotilla`;
      if (!(k in x)) return `${path}.${k}: extra in flotilla`;
      if (canon(x[k], k) !== canon(y[k], k)) return firstDiff(x[k], y[k], `${path}.${k}`);
    }
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) {
      if (canon(a[i]) !== canon(b[i])) return firstDiff(a[i], b[i], `${path}[${i}]`);
    }
  }
  return `${path}: buildbot ${canon(a).slice(0, 160)}, flotilla ${canon(b).slice(0, 160)}`;
}

function textDiff(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `text differs at ${i} (${a.length} vs ${b.length}): bb ${JSON.stringify(a.slice(Math.max(0, i - 20), i + 40))} fl ${JSON.stringify(b.slice(Math.max(0, i - 20), i + 40))}`;
}

/** A control request: the answer must match, but for the contract's 404 and Buildbot's crashes. */
export function judgePost(bb: Answer, fl: Answer, path: string, method = 'POST'): string | null {
  if (fl.status >= 500 && fl.status !== 501) return `flotilla ${fl.status}: ${fl.text.slice(0, 160)}`;
  const missing = /(^|\/)(999999|nosuch)(\/|$)|^nosuchpath$/.test(path);
  // A HEAD has no body to say it in.
  const notFound = fl.text === 'not found' || (method === 'HEAD' && fl.text === '');
  if (fl.status === 404 && missing) return notFound ? null : 'a 404 without `not found`';
  if (bb.status === 500) {
    return fl.status === 400 || fl.status === 404
      ? null
      : `buildbot 500 (${bb.text.slice(0, 160)}), flotilla ${fl.status} ${fl.text.slice(0, 160)}`;
  }
  if (bb.status !== fl.status || mediaType(bb.type) !== mediaType(fl.type)) {
    return `buildbot ${bb.status} ${mediaType(bb.type)} ${bb.text.slice(0, 200)} | flotilla ${fl.status} ${mediaType(fl.type)} ${fl.text.slice(0, 200)}`;
  }
  if (bb.cors !== fl.cors) return `CORS headers: buildbot ${bb.cors} | flotilla ${fl.cors}`;
  if (bb.disposition !== fl.disposition)
    return `content-disposition: buildbot ${bb.disposition}, flotilla ${fl.disposition}`;
  const bj = parseJson(bb.text);
  const fj = parseJson(fl.text);
  if (bj === undefined || fj === undefined) return bb.text === fl.text ? null : textDiff(bb.text, fl.text);
  return canon(bj) === canon(fj)
    ? null
    : `body: buildbot ${bb.text.slice(0, 240)} | flotilla ${fl.text.slice(0, 240)}`;
}
