// What an entity is: its fields, each a name, a type and the SQL that yields its value from
// one row of the entity's table under the alias `a` (correlated subqueries for related
// tables). It is the one definition of each resource's shape: the read API filters, orders
// and projects these fields (services/api/registry, services/api/query), and the events of
// the data operations carry the same fields rendered by jsonOf (core/data/entities.ts), so
// that an event says exactly what a GET of the same entity answers.
import { type SQLQuery, sql } from '../db/pool.js';
import type { EntityField, FieldType } from './types.js';

/**
 * What a field's SQL may depend on: a read's path parameters (a worker read under a master
 * lists only that master's connections), none for an event.
 */
export type FieldArgs = Readonly<Record<string, number | string>>;

export interface Field extends EntityField {
  /** The value, as a SQL expression over alias `a` that yields JSON-compatible SQL types. */
  sql: (args: FieldArgs) => SQLQuery;
  /**
   * Buildbot pushes this field's filters into SQL, where `ne` and `notin` drop NULLs; every
   * other field is filtered in Python, where None != x is true. We keep both behaviours.
   */
  sqlNullSemantics?: boolean;
  /** The SQL value can be NULL even though the type says otherwise (sorting puts NULL lowest). */
  nullableSql?: boolean;
  /** The value when a read names properties (`property=*` or names); `sql` otherwise. */
  withProperties?: (args: FieldArgs, names: readonly string[]) => SQLQuery;
  /** An index-friendly test for `field = value` (e.g. `complete = 0` for a smallint flag). */
  equals?: (args: FieldArgs, value: boolean) => SQLQuery;
}

export function field(
  name: string,
  type: FieldType,
  sqlExpr: SQLQuery | ((args: FieldArgs) => SQLQuery),
  opts: Partial<
    Pick<Field, 'nullable' | 'nullableSql' | 'sqlNullSemantics' | 'withProperties' | 'equals'>
  > = {},
): Field {
  return { name, type, sql: typeof sqlExpr === 'function' ? sqlExpr : () => sqlExpr, ...opts };
}

export interface Entity {
  /** Entity type name (`build`) and plural (`builds`, the read envelope's key). */
  name: string;
  plural: string;
  /** The key field's name. */
  key: string;
  /** The table whose rows are the entities. */
  table: string;
  fields: readonly Field[];
}

// Every write that carries an event renders its entity's JSON from the same field list with
// no args (core/data/entities.ts): a build's start did it six times, a pair of tagged
// templates per field each time. A SQLQuery is an immutable value, so one made for a list
// serves each later statement (load/results/fleet.md, 2026-11-29 03:38, phase S: jsonOf's
// own frame was 1.1% of the masters' busy samples outside the socket writes, the tagged
// templates it made counted apart).
const argless = new WeakMap<readonly Field[], SQLQuery>();

/** The entity's fields as one JSON object (in their order), over alias `a`. */
export function jsonOf(fields: readonly Field[], args?: FieldArgs): SQLQuery {
  if (args) return renderJson(fields, args);
  let made = argless.get(fields);
  if (!made) {
    made = renderJson(fields, {});
    argless.set(fields, made);
  }
  return made;
}

function renderJson(fields: readonly Field[], args: FieldArgs): SQLQuery {
  return sql`json_build_object(${sql.join(
    fields.map((f) => sql`${f.name}::text, ${f.sql(args)}`),
    sql`, `,
  )})`;
}

/** The key field of an entity (its id). */
export function keyOf(e: Entity): Field {
  const key = e.fields.find((f) => f.name === e.key);
  if (!key) throw new Error(`entity ${e.name} has no key field ${e.key}`);
  return key;
}

/** `property` values select which properties to return: `*` all, otherwise by name. */
export function propertyNames(names: readonly string[]): { all: boolean; names: string[] } {
  return { all: names.includes('*'), names: names.filter((n) => n !== '*') };
}
