// What a resource type and an endpoint are. Every resource is read from one base table under
// the alias `a`; each field is a SQL expression over that row (correlated subqueries for
// related tables), so filtering, ordering and paging all happen in PostgreSQL. The fields of
// the resources that events carry too are defined once, in services/core/entities/.
import { type SQLQuery, sql } from '../../core/db/pool.js';
import type { Entity, Field, FieldArgs } from '../../core/entities/field.js';
import type { Parts, PartTable } from '../cache/keys.js';

/** Path parameters, already converted: numbers for `n:` elements, strings otherwise. */
export type PathArgs = FieldArgs;

export interface Resource {
  /** Entity type name (`build`), plural (`builds`, the envelope key). */
  name: string;
  plural: string;
  /** The key field, the default order (ascending) and the pagination tie-breaker. */
  key: string;
  /** FROM item whose alias is `a`, e.g. sql`builds a`. */
  from: SQLQuery;
  fields: readonly Field[];
  /** Default order when the request has none; Buildbot's /changes is newest first. */
  defaultOrder?: readonly string[];
  /** For lists without an id (root links, the spec): their own order, as SQL over `a`. */
  naturalOrder?: SQLQuery;
  /** How /application.spec names the type, when it is not an entity of `fields`. */
  specType?: { type: string; type_spec: Record<string, unknown> };
  /** Totals the database keeps for this table (migration 0004), by scope. */
  counted?: Counted;
  /**
   * A boolean field whose one-value `eq` filter keeps every read of `table` in a page within
   * the part of the column of the same name (../cache/keys.ts), when the table has one finer
   * than the path's: builds' `complete`. True only when the field is that column's value.
   */
  partFilter?: { table: PartTable; field: string };
}

/**
 * Trigger-maintained totals: `dims` in the order scope keys list them, and which
 * combinations of them are kept (e.g. [] for all rows, ['builderid', 'complete']).
 */
export interface Counted {
  table: string;
  dims: readonly string[];
  scopes: readonly (readonly string[])[];
}

export type EndpointKind =
  | 'rows' // a collection or one entity of the resource's rows
  | 'properties' // one JSON object read by `value` (a sourcedproperties dict; 4.3's commit_graph)
  | 'logchunk' // a range of log lines
  | 'raw-log' // a log download
  | 'build-data-value' // a build_data value download
  | 'artifact-raw'; // an artifact download (Flotilla's)

export interface Endpoint {
  pattern: string;
  resource: Resource;
  collection: boolean;
  kind: EndpointKind;
  /** WHERE conditions over alias `a` that bind the path parameters. */
  scope: (args: PathArgs) => SQLQuery[];
  /** Buildbot answers a `builders` root link for the first collection of a type. */
  rootLink?: string;
  /** POST actions this endpoint accepts (JSON-RPC methods). */
  actions?: readonly string[];
  /** Registered (it names a parent, and /application.spec lists it) but not readable itself. */
  noGet?: boolean;
  /** A raw log shown in the browser (Buildbot 4.3's `raw_inline`): no attachment disposition. */
  inline?: boolean;
  /** Flotilla's own (artifacts): served, but not in /application.spec, which stays Buildbot's. */
  unlisted?: boolean;
  /** For `properties` endpoints: the one JSON value, as SQL over the owner row `a`. */
  value?: (args: PathArgs) => SQLQuery;
  /** The dimensions of the resource's counted totals that this path fixes (text SQL values). */
  countScope?: (args: PathArgs) => Record<string, SQLQuery>;
  /**
   * Tables of which this endpoint's statement reads only one part, in the terms of
   * ../cache/keys.ts, e.g. `{ steps: { buildid: 5 } }`. True only when every mention of the
   * table in the statement (scope, parent, fields, totals) is limited to rows of that part;
   * the page cache keeps the page across writes to other parts (../read/page-keys.ts). Any
   * table not named counts whole.
   */
  parts?: (args: PathArgs) => Parts;
  /**
   * Parts that only the rows read can name, laid over `parts`: a path by builder and number
   * names one build, whose id its row holds. `value(field)` is the first row's value of a
   * field, or else the id of that name the statement resolved the path to (`pathIds`);
   * undefined when neither has it. Null when nothing finer is named. True only when every
   * row the statement reads in those tables belongs to the named part whatever is written
   * later, and a write that would make the path name another row must write this one first
   * (builds are unique by builder and number, so another build takes the number only after
   * this one has left it; so are steps by build and name or number, logs by step and slug).
   */
  rowParts?: (args: PathArgs, value: (field: string) => unknown) => Parts | null;
  /**
   * SQL (no alias) for a JSON object of the ids the path resolves to, read by the page's own
   * statement for `rowParts`: a log named by builder, build number, step and slug reads the
   * build's and the step's rows to find it, and its own row holds neither build id.
   */
  pathIds?: (args: PathArgs) => SQLQuery;
}

/** The resource that reads entity `e` from its table. */
export function entityResource(
  e: Entity,
  extra: Pick<Resource, 'counted' | 'defaultOrder' | 'partFilter'> = {},
): Resource {
  return {
    name: e.name,
    plural: e.plural,
    key: e.key,
    from: sql`${sql.ident(e.table)} a`,
    fields: e.fields,
    ...extra,
  };
}
