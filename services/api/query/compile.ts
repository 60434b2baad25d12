// ResultSpec + endpoint -> one SQL statement that answers the whole request in one round
// trip: the page (filtered, ordered, limited by PostgreSQL), the exact total, and whether
// the parent in the path exists. Field expressions are evaluated twice by design: in WHERE
// and ORDER BY over every candidate row (where indexes can serve them), and in the JSON
// projection only for the rows of the page.
import { pgFormat } from '@databases/pg';
import { type SQLQuery, sql } from '../../core/db/pool.js';
import type { Field } from '../../core/entities/field.js';
import { type FieldType, isScalar } from '../../core/entities/types.js';
import { invalidQuery } from '../errors/catalogue.js';
import type { Endpoint, PathArgs } from '../registry/model.js';
import type { FilterValue } from '../registry/types.js';
import { pyString } from '../reply/pyjson.js';
import { countedTotal } from './counted-total.js';
import type { Filter, OrderTerm, ResultSpec } from './spec.js';

export interface RowsQuery {
  endpoint: Endpoint;
  args: PathArgs;
  spec: ResultSpec;
  /** SQL that is true when the parent named by the path exists; null for root collections. */
  parentExists: SQLQuery | null;
}

function param(type: FieldType, v: FilterValue): SQLQuery {
  const base = type.kind === 'list' ? type.of : type;
  switch (base.kind) {
    case 'integer':
    case 'datetime':
      return sql`${String(v)}::bigint`;
    case 'boolean':
      return sql`${v}::boolean`;
    default:
      return sql`${String(v)}::text`;
  }
}

function arrayParam(type: FieldType, vs: FilterValue[]): SQLQuery {
  const base = type.kind === 'list' ? type.of : type;
  switch (base.kind) {
    case 'integer':
    case 'datetime':
      return sql`${vs.map(String)}::bigint[]`;
    case 'boolean':
      return sql`${vs}::boolean[]`;
    default:
      return sql`${vs.map(String)}::text[]`;
  }
}

const isText = (type: FieldType) => type.kind === 'string' || type.kind === 'identifier';
/** Python compares strings by code point; so does the C collation, whatever the database's. */
const collated = (e: SQLQuery, type: FieldType) => (isText(type) ? sql`(${e} COLLATE "C")` : e);

function scalarFilter(f: Filter, e: SQLQuery, args: PathArgs): SQLQuery {
  const type = f.field.type;
  const v = f.values;
  const pythonNulls = !f.field.sqlNullSemantics;
  const one = v.length === 1 ? param(type, v[0]!) : null;
  const notIn = () => {
    const arr = arrayParam(type, v);
    return pythonNulls ? sql`(${e} IS NULL OR NOT (${e} = ANY(${arr})))` : sql`NOT (${e} = ANY(${arr}))`;
  };
  const eq = f.field.equals;
  if (eq && type.kind === 'boolean' && v.length === 1 && (f.op === 'eq' || f.op === 'ne')) {
    return eq(args, f.op === 'eq' ? (v[0] as boolean) : !(v[0] as boolean));
  }
  switch (f.op) {
    case 'eq':
      return one ? sql`${e} = ${one}` : sql`${e} = ANY(${arrayParam(type, v)})`;
    case 'in':
      return sql`${e} = ANY(${arrayParam(type, v)})`;
    case 'ne':
      if (!one) return notIn();
      return pythonNulls ? sql`${e} IS DISTINCT FROM ${one}` : sql`${e} <> ${one}`;
    case 'notin':
      return notIn();
    case 'lt':
      return sql`${collated(e, type)} < ${one!}`;
    case 'le':
      return sql`${collated(e, type)} <= ${one!}`;
    case 'gt':
      return sql`${collated(e, type)} > ${one!}`;
    case 'ge':
      return sql`${collated(e, type)} >= ${one!}`;
    case 'contains':
      if (!isText(type))
        throw invalidQuery(`'contains' needs a text or list field; '${f.field.name}' is ${type.kind}`);
      // A substring test, as Python's `in`: % and _ in the value are plain characters.
      return sql`(${sql.join(
        v.map((x) => sql`strpos(${e}, ${String(x)}::text) > 0`),
        sql` OR `,
      )})`;
  }
}

/** Python semantics of a list field against scalar values: only `contains` can match. */
function listFilter(f: Filter, e: SQLQuery): SQLQuery {
  switch (f.op) {
    case 'contains': {
      if (f.values.length === 1) return sql`${param(f.field.type, f.values[0]!)} = ANY(${e})`;
      // The list's elements may be int, its values bigint: compare arrays of one type.
      const of = f.field.type.kind === 'list' ? f.field.type.of : f.field.type;
      return isText(of)
        ? sql`${e}::text[] && ${arrayParam(f.field.type, f.values)}`
        : sql`${e}::bigint[] && ${arrayParam(f.field.type, f.values)}`;
    }
    case 'eq':
    case 'in':
      return sql`false`;
    case 'ne':
    case 'notin':
      return sql`true`;
    default:
      throw invalidQuery(`'${f.op}' cannot compare the list field '${f.field.name}' with a value`);
  }
}

export function filterSql(f: Filter, args: PathArgs): SQLQuery {
  const e = f.field.sql(args);
  if (f.field.type.kind === 'list' && isScalar(f.field.type.of)) return listFilter(f, e);
  if (isScalar(f.field.type)) return scalarFilter(f, e, args);
  throw invalidQuery(`invalid filter value for ${f.field.name}`);
}

function sortable(field: Field): boolean {
  const t = field.type;
  return isScalar(t) || (t.kind === 'list' && isScalar(t.of));
}

/** ORDER BY terms: as asked, nulls lowest, then the key so that pages never overlap. */
export function orderSql(
  terms: readonly OrderTerm[],
  key: Field,
  args: PathArgs,
  natural?: SQLQuery,
): SQLQuery {
  const parts: SQLQuery[] = [];
  for (const o of terms) {
    if (!sortable(o.field)) throw invalidQuery(`cannot order on field '${o.field.name}'`);
    const e = collated(o.field.sql(args), o.field.type.kind === 'list' ? o.field.type.of : o.field.type);
    // For a NOT NULL column the NULLS clause is left out, so that a plain index can serve it.
    if (!o.field.nullable && !o.field.nullableSql) parts.push(o.desc ? sql`${e} DESC` : sql`${e} ASC`);
    else parts.push(o.desc ? sql`${e} DESC NULLS LAST` : sql`${e} ASC NULLS FIRST`);
  }
  if (natural) parts.push(sql`${natural} ASC`);
  else if (!terms.some((o) => o.field === key)) parts.push(sql`${key.sql(args)} ASC`);
  return sql.join(parts, sql`, `);
}

function defaultOrder(endpoint: Endpoint, key: Field): OrderTerm[] {
  if (endpoint.resource.naturalOrder) return [];
  const names = endpoint.resource.defaultOrder ?? [endpoint.resource.key];
  return names.map((n) => {
    const desc = n.startsWith('-');
    const f = endpoint.resource.fields.find((x) => x.name === (desc ? n.slice(1) : n)) ?? key;
    return { field: f, desc };
  });
}

/**
 * The page by column: one JSON array holding the number of rows, then each selected field's
 * values in the rows' order, the fields in the order Buildbot writes their names (sorted).
 * The names are known here and go to the renderer once, not with every row (readPrepared
 * turns the columns back into rows).
 *
 * Why by column: PostgreSQL (15) looks up how to write a value as JSON (its type's category
 * and output function) for every value json_build_array is given, but only once per array
 * for array_to_json, which json_build_array applies to an array argument; a page of 50 rows
 * of 12 fields made 600 lookups, and makes 12. Measured on 500k builds
 * (`/builds?order=-buildid&limit=50`, pgbench -M prepared, generic plan, c=1,
 * load/results/page-cache-miss.md): json_build_object with the names as parameters 0.27 ms,
 * one json_build_array per row 0.215-0.223 ms, by column 0.141-0.186 ms; PostgreSQL's CPU per
 * request of the page in miss-ratio.ts went from 158-190 to 138-167 µs in the same rounds.
 *
 * array_agg takes the rows in the order the materialized page holds them (its ORDER BY): a
 * CTE scan feeding a plain aggregate reads its rows in the order they were stored. An ORDER
 * BY per aggregate would sort the page once per field. A list field may be an SQL array,
 * which array_agg would stack into one array of two dimensions: it goes as JSON.
 */
function projection(spec: ResultSpec, fields: readonly Field[], args: PathArgs) {
  const selected = spec.fields ? new Set(spec.fields) : null;
  const parts: SQLQuery[] = [sql`count(*)`];
  const names: string[] = [];
  for (const f of [...fields].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (selected && !selected.has(f.name)) continue;
    const e = spec.properties && f.withProperties ? f.withProperties(args, spec.properties) : f.sql(args);
    parts.push(f.type.kind === 'list' ? sql`array_agg(to_json(${e}))` : sql`array_agg(${e})`);
    names.push(f.name);
  }
  if (parts.length > 100) throw new Error('json_build_array takes at most 100 arguments');
  return { sql: sql`json_build_array(${sql.join(parts, sql`, `)})`, names };
}

/**
 * A field's value as the text of Buildbot's compact JSON, written by PostgreSQL (textProjection);
 * null for a list or an object, which the renderer writes (Python sorts keys by code point;
 * PostgreSQL's json keeps them as they came). Integers and datetimes are SQL integers in
 * Buildbot's schema, whose output is Python's repr of an int; a boolean's text cast is
 * `true`/`false`; to_json escapes a string as Python does but for what lies outside ' '..'~',
 * which readPrepared escapes (run.ts, asciiOnly).
 */
function valueText(f: Field, e: SQLQuery): SQLQuery | null {
  switch (f.type.kind) {
    case 'integer':
    case 'datetime':
    case 'boolean':
      return sql`coalesce((${e})::text, 'null')`;
    case 'string':
    case 'identifier':
    case 'binary':
      return sql`coalesce(to_json(${e})::text, 'null')`;
    default:
      return null;
  }
}

/** `'{}'::json` or `'[]'::json`: a field whose value is always that (a build's properties unless asked for). */
function constantJson(e: SQLQuery): string | null {
  const { text, values } = e.format(pgFormat);
  if (values.length > 0) return null;
  return text === "'{}'::json" ? '{}' : text === "'[]'::json" ? '[]' : null;
}

/**
 * Stands for a value the renderer writes, in the text PostgreSQL writes: to_json escapes every
 * control character in a string, and nothing else there has one, so any raw U+0001 is this.
 */
export const HOLE = '\u0001';

/**
 * The page as the text of its entities in Buildbot's compact JSON, written by PostgreSQL: one
 * string_agg of one concatenation per row, each field's name and value (valueText) in the
 * order Buildbot writes them (sorted); lists and objects are left as HOLE, their values
 * sent beside, by column as in `projection`, for the renderer to write in their place.
 *
 * Why: the API no longer parses the page (JSON.parse) nor writes each value again, and
 * PostgreSQL spends about as much writing this text as building the arrays of `projection`
 * (its executor 0.099 ms either way, EXPLAIN ANALYZE, best of 200). On 500k builds
 * (`/builds?order=-buildid&limit=50`, load/bench/read-forms.ts: the API's read path without
 * HTTP, 16 alternating rounds, the least a read cost; load/results/page-cache-miss.md) the
 * API's CPU a read went from 223 to 147 µs, PostgreSQL's from 220 to 230. Only for the
 * compact form (Accept: application/json); the indented form and pages whose keys need their
 * first row's values (Endpoint.rowParts) are read as values.
 */
function textProjection(spec: ResultSpec, fields: readonly Field[], args: PathArgs) {
  const selected = spec.fields ? new Set(spec.fields) : null;
  const parts: SQLQuery[] = [];
  const holes: SQLQuery[] = [];
  const names: string[] = [];
  let literal = '{';
  for (const f of [...fields].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (selected && !selected.has(f.name)) continue;
    const e = spec.properties && f.withProperties ? f.withProperties(args, spec.properties) : f.sql(args);
    literal += `${names.length > 0 ? ',' : ''}${pyString(f.name)}:`;
    names.push(f.name);
    const text = valueText(f, e);
    if (text) {
      parts.push(sql`${literal}::text`, text);
      literal = '';
      continue;
    }
    const constant = constantJson(e);
    if (constant !== null) {
      literal += constant;
      continue;
    }
    literal += HOLE;
    holes.push(f.type.kind === 'list' ? sql`array_agg(to_json(${e}))` : sql`array_agg(${e})`);
  }
  parts.push(sql`${`${literal}}`}::text`);
  if (holes.length > 99) throw new Error('json_build_array takes at most 100 arguments');
  const values = holes.length ? sql`json_build_array(${sql.join(holes, sql`, `)})` : sql`NULL::json`;
  return { sql: sql`string_agg(${sql.join(parts, sql` || `)}, ',')`, values, names, holes: holes.length };
}

/** A page's statement, and the names of the values in each of its rows (arrays). */
export interface CompiledRows {
  query: SQLQuery;
  names: readonly string[];
  /**
   * How the statement answers the page: `values`, by column (projection), or `text`, the
   * entities' JSON written by PostgreSQL (textProjection), with the number of values per row
   * left for the renderer to write.
   */
  form: { kind: 'values' } | { kind: 'text'; holes: number };
  /**
   * Whether one generic plan serves every execution (../db-routing/read-pool.ts): true for an unfiltered
   * page of a root collection in key order, whose only sensible plans are the key's index
   * in order or a sort of the whole table, whatever LIMIT and OFFSET are. PostgreSQL would
   * otherwise plan the statement on every execution: with `LIMIT $n` the generic plan is
   * costed for a tenth of the table, and never chosen. Planning was 0.15-0.2 ms of
   * `/builds?order=-buildid&limit=50` (0.01-0.02 ms with the generic plan; EXPLAIN ANALYZE
   * of the prepared statement on 500k builds), and the generic plans of every root
   * collection in key order were as fast as the custom ones on bench
   * (load/results/page-cache-miss.md).
   * A filter or a path scope makes the plan depend on how many rows match: planned each time.
   */
  genericPlan: boolean;
}

export function keyField(endpoint: Endpoint): Field {
  const key = endpoint.resource.fields.find((f) => f.name === endpoint.resource.key);
  if (!key) throw new Error(`resource ${endpoint.resource.name} has no key field ${endpoint.resource.key}`);
  return key;
}

export function compileRows(
  q: RowsQuery,
  fields: readonly Field[],
  form: 'values' | 'text' = 'values',
): CompiledRows {
  const { endpoint, args, spec } = q;
  const key = keyField(endpoint);
  const conds = [...endpoint.scope(args), ...spec.filters.map((f) => filterSql(f, args))];
  const where = conds.length ? sql`WHERE ${sql.join(conds, sql` AND `)}` : sql``;
  const natural = endpoint.resource.naturalOrder;
  const order = endpoint.collection
    ? orderSql(spec.order ?? defaultOrder(endpoint, key), key, args, natural)
    : (natural ?? key.sql(args));
  const limit = endpoint.collection && spec.limit !== null ? sql`LIMIT ${spec.limit}` : sql``;
  const offset = endpoint.collection && spec.offset ? sql`OFFSET ${spec.offset}` : sql``;
  const from = endpoint.resource.from;
  // A page without LIMIT or OFFSET holds every row the total counts: the total is its size,
  // and the WHERE is evaluated once. Counted again, a costly scope ran twice: a build's
  // changes (changes.ts) looked for the previous successful build for the page and again for
  // the total (load/results/fleet-reads.md, "prev_success at 2.5M builds").
  const unpaged = spec.limit === null && !spec.offset;
  const total = !endpoint.collection
    ? sql`NULL::bigint`
    : unpaged
      ? sql`(SELECT count(*) FROM page)`
      : (countedTotal(endpoint, args, spec) ?? sql`(SELECT count(*) FROM ${from} ${where})`);
  const parent = q.parentExists ?? sql`NULL::boolean`;
  // Only where the page cache needs them to name a page's parts (Endpoint.pathIds).
  const ids = endpoint.pathIds ? sql`, ${endpoint.pathIds(args)} AS path_ids` : sql``;
  const keyOrder = (spec.order ?? defaultOrder(endpoint, key)).every((o) => o.field === key);
  const genericPlan = endpoint.collection && conds.length === 0 && !natural && keyOrder;
  // MATERIALIZED: the page is computed once; the projection then reads only its rows.
  const page = sql`WITH page AS MATERIALIZED (SELECT a.* FROM ${from} ${where} ORDER BY ${order} ${limit} ${offset})`;
  if (form === 'text') {
    const text = textProjection(spec, fields, args);
    const query = sql`${page}
      SELECT p.n, p.body, p.holes, ${total} AS total, ${parent} AS parent_exists${ids}
      FROM (SELECT count(*) AS n, ${text.sql} AS body, ${text.values} AS holes FROM page a) p`;
    return { query, names: text.names, genericPlan, form: { kind: 'text', holes: text.holes } };
  }
  const row = projection(spec, fields, args);
  const query = sql`${page}
    SELECT
      (SELECT ${row.sql} FROM page a) AS rows,
      ${total} AS total,
      ${parent} AS parent_exists${ids}`;
  return { query, names: row.names, genericPlan, form: { kind: 'values' } };
}

export function existsSql(endpoint: Endpoint, args: PathArgs): SQLQuery {
  const conds = endpoint.scope(args);
  const where = conds.length ? sql`WHERE ${sql.join(conds, sql` AND `)}` : sql``;
  return sql`EXISTS (SELECT 1 FROM ${endpoint.resource.from} ${where})`;
}
