// Run one read request against the database: compile, one round trip, shape the result.
import { type SQLQuery, sql } from '../../core/db/pool.js';
import { statementText, type WriteVersions, withVersion } from '../cache/versions.js';
import type { RowReader } from '../db-routing/read-pool.js';
import { notFound } from '../errors/catalogue.js';
import type { Registry } from '../registry/index.js';
import type { Endpoint, PathArgs } from '../registry/model.js';
import { pyDumps } from '../reply/pyjson.js';
import { type CompiledRows, compileRows, existsSql, HOLE, keyField } from './compile.js';
import type { Envelope } from './envelope.js';
import type { ResultSpec } from './spec.js';

/** The write version of what a read saw, and the tables it covers (see ../cache/versions.ts). */
export interface Stamp {
  tables: readonly string[];
  version: string;
}

export interface Read {
  env: Envelope;
  /** Null when the read cannot be versioned (or versions are off). */
  stamp: Stamp | null;
  /** The ids the path resolved to (Endpoint.pathIds), for the page's keys. */
  pathIds?: Readonly<Record<string, unknown>>;
}

/**
 * The query, with its write version when it can have one. `alsoReads` names tables that a
 * later statement of the same read takes its rows from (the version must cover them too).
 */
/**
 * `scanned`: the statement whose tables the page depends on, when `query` also reads tables
 * whose writes another of them always shows (a moved log's index: logs.ts findLog).
 */
export function versioned(query: SQLQuery, versions: WriteVersions | null, alsoReads = '', scanned = query) {
  const tables = versions?.enabled ? versions.dependencies(`${statementText(scanned)} ${alsoReads}`) : null;
  return tables ? { query: withVersion(query, tables), tables } : { query, tables: null };
}

export function stampOf(
  tables: readonly string[] | null,
  row: { write_version?: string } | undefined,
): Stamp | null {
  return tables && row?.write_version !== undefined ? { tables, version: row.write_version } : null;
}

/**
 * SQL for "the parent named by this path exists", from the single endpoint the parent path
 * matches; null for a root collection. A parent path that matches nothing (a name that is
 * not an identifier) names no parent: not found.
 */
export function parentExists(registry: Registry, segments: readonly string[]) {
  if (segments.length < 2) return null;
  const parent = registry.matcher.match(segments.slice(0, -1));
  if (!parent || parent.endpoint.collection) throw notFound();
  return existsSql(parent.endpoint, parent.args);
}

/**
 * A rows read as its URL asks for it: the result spec and the compiled statement (and, once
 * asked, the statement with its write version). All of it follows from the URL alone, so a
 * URL read again (a page expired by a write, or the page cache off) reuses them: parsing,
 * compiling, formatting the statement and naming it (a SHA-1 of its text, ../db-routing/read-pool.ts)
 * took 110-140 µs of a 300-500 µs miss of `/builds?order=-buildid&limit=50`, more than
 * everything else the API does but JSON.parse (load/bench/miss-cost.ts;
 * load/results/page-cache-miss.md).
 */
export interface PreparedRows {
  spec: ResultSpec;
  compiled: CompiledRows;
  /**
   * The same read in the text form (compile.ts, textProjection), which compact JSON is read
   * as; compiled beside the values form, kept with it in PreparedReads.
   */
  text?: PreparedRows;
  versioned?: { versions: WriteVersions; query: SQLQuery; tables: readonly string[] | null };
  /** The Link header to the next page, once a page of this URL has had one. */
  next?: string;
}

export function prepareRows(
  registry: Registry,
  endpoint: Endpoint,
  args: PathArgs,
  segments: readonly string[],
  spec: ResultSpec,
): PreparedRows {
  const parent = endpoint.collection ? parentExists(registry, segments) : null;
  const q = { endpoint, args, spec, parentExists: parent };
  const prepared: PreparedRows = { spec, compiled: compileRows(q, endpoint.resource.fields) };
  // The text form leaves out the rows' values, which a page's keys may need (Endpoint.rowParts).
  if (!endpoint.rowParts)
    prepared.text = { spec, compiled: compileRows(q, endpoint.resource.fields, 'text') };
  return prepared;
}

/** Prepared reads by URL, the oldest dropped first beyond `limit`; long URLs are not kept. */
export class PreparedReads {
  private readonly kept = new Map<string, PreparedRows>();

  constructor(
    private readonly limit = 2000,
    private readonly longest = 1000,
  ) {}

  get(url: string, make: () => PreparedRows): PreparedRows {
    const known = this.kept.get(url);
    if (known) return known;
    const made = make();
    if (url.length <= this.longest) {
      if (this.kept.size >= this.limit) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(url, made);
    }
    return made;
  }
}

export async function readRows(
  db: RowReader,
  registry: Registry,
  endpoint: Endpoint,
  args: PathArgs,
  segments: readonly string[],
  spec: ResultSpec,
  versions: WriteVersions | null = null,
): Promise<Read> {
  return readPrepared(db, endpoint, prepareRows(registry, endpoint, args, segments, spec), versions);
}

/** The page's rows from its columns (compile.ts's projection: the count, then each field's values). */
function byRow([count, ...columns]: [number, ...unknown[][]]): unknown[][] {
  const rows = new Array<unknown[]>(count);
  for (let r = 0; r < count; r++) {
    const row = new Array<unknown>(columns.length);
    for (let c = 0; c < columns.length; c++) row[c] = columns[c]![r];
    rows[r] = row;
  }
  return rows;
}

// What Python's ensure_ascii escapes and to_json does not: everything past '~'. A page is
// almost always ASCII, which Buffer.byteLength and one indexOf tell in about a µs (a regular
// expression's test of 11 KB took 8).
const NON_ASCII = /[\u007f-\uffff]/g;
const asciiEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

function asciiOnly(text: string): string {
  if (Buffer.byteLength(text) === text.length && !text.includes('\u007f')) return text;
  return text.replace(NON_ASCII, asciiEscape);
}

/**
 * The entities' compact JSON from the text form: PostgreSQL's text, made ASCII, with each
 * HOLE filled with its value (row by row, a row's holes in the order of its fields).
 */
function entitiesJson(body: string | null, holes: number, columns: unknown[][] | null): string {
  if (body === null) return '[]';
  const text = asciiOnly(body);
  if (holes === 0 || !columns) return `[${text}]`;
  const pieces = text.split(HOLE);
  let out = `[${pieces[0]}`;
  for (let k = 1; k < pieces.length; k++) {
    const i = k - 1;
    out += pyDumps(columns[i % holes]![Math.floor(i / holes)]) + pieces[k];
  }
  return `${out}]`;
}

/** The one row of a page's statement, in either form (compile.ts). */
interface PageRow {
  /** The values form: the page by column. */
  rows?: [number, ...unknown[][]];
  /** The text form: the number of entities, their JSON with holes, the holes' values by column. */
  n?: string;
  body?: string | null;
  holes?: unknown[][] | null;
  total: unknown;
  parent_exists: boolean | null;
  path_ids?: Record<string, unknown> | null;
  write_version?: string;
}

export async function readPrepared(
  db: RowReader,
  endpoint: Endpoint,
  prepared: PreparedRows,
  versions: WriteVersions | null = null,
): Promise<Read> {
  const { compiled } = prepared;
  let v = prepared.versioned;
  if (v?.versions !== versions) {
    v = versions ? { versions, ...versioned(compiled.query, versions) } : undefined;
    prepared.versioned = v;
  }
  const query = v?.query ?? compiled.query;
  const tables = v?.tables ?? null;
  const [row] = await db.rows<PageRow>(query, { genericPlan: compiled.genericPlan });
  if (!row || row.parent_exists === false) throw notFound();
  const form = compiled.form;
  let page: Pick<Envelope, 'rows' | 'names' | 'json'>;
  let count: number;
  if (form.kind === 'text') {
    count = Number(row.n);
    page = { rows: [], json: entitiesJson(row.body ?? null, form.holes, row.holes ?? null) };
  } else {
    const rows = byRow(row.rows!);
    count = rows.length;
    page = { rows, names: compiled.names };
  }
  if (!endpoint.collection && count === 0) throw notFound();
  return {
    env: {
      plural: endpoint.resource.plural,
      ...page,
      total: endpoint.collection ? Number(row.total) : null,
    },
    stamp: stampOf(tables, row),
    ...(row.path_ids ? { pathIds: row.path_ids } : {}),
  };
}

/**
 * The key of the one entity an endpoint names (a build's id, a worker's id, a force
 * scheduler's name); null when it names nothing that exists.
 */
export async function entityKey(
  db: RowReader,
  endpoint: Endpoint,
  args: PathArgs,
): Promise<number | string | null> {
  const conds = endpoint.scope(args);
  const where = conds.length ? sql.join(conds, sql` AND `) : sql`true`;
  const rows = await db.rows<{ key: number | string }>(
    sql`SELECT ${keyField(endpoint).sql(args)} AS key FROM ${endpoint.resource.from} WHERE ${where} LIMIT 1`,
  );
  return rows[0]?.key ?? null;
}

/** A `properties` endpoint: the owner row must exist; its properties form one object. */
export async function readProperties(
  db: RowReader,
  endpoint: Endpoint,
  args: PathArgs,
  versions: WriteVersions | null = null,
): Promise<Read> {
  const conds = endpoint.scope(args);
  const value = endpoint.value!(args);
  const { query, tables } = versioned(
    sql`SELECT coalesce(${value}, '{}'::json) AS value FROM ${endpoint.resource.from} WHERE ${sql.join(conds, sql` AND `)}`,
    versions,
  );
  const rows = await db.rows<{ value: unknown; write_version?: string }>(query);
  if (rows.length === 0) throw notFound();
  return {
    env: { plural: endpoint.resource.plural, rows: [rows[0]!.value], total: null },
    stamp: stampOf(tables, rows[0]),
  };
}
