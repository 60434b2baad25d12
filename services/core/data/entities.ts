// The entities events carry: an entity's fields (core/entities/) rendered as one JSON object
// for the row with a given key, the same fields a GET of that entity answers. Buildbot's
// events carry its data-layer entity (buildbot/data/*.py db2data): a build's `properties` is
// {} there, a build request's null, a worker's connected_to/configured_on list every master.
import { many, type Queryable, type SQLQuery, sql } from '../db/pool.js';
import { type Entity, jsonOf, keyOf } from '../entities/field.js';

/** The JSON of an entity: its fields by name (callers name the few they read). */
export type EntityJson = Record<string, unknown>;

/** The entities `e` with these keys as JSON, in key order (those that exist). */
export async function entities<T extends EntityJson = EntityJson>(
  q: Queryable,
  e: Entity,
  keys: readonly number[],
): Promise<T[]> {
  if (keys.length === 0) return [];
  const key = keyOf(e).sql({});
  const rows = await many<{ e: T }>(
    q,
    sql`SELECT ${jsonOf(e.fields)} AS e FROM ${sql.ident(e.table)} a WHERE ${key} = ANY(${[...keys]}::int[]) ORDER BY ${key}`,
  );
  return rows.map((r) => r.e);
}

/** The entity `e` with this key as JSON; undefined when there is none. */
export async function entity<T extends EntityJson = EntityJson>(
  q: Queryable,
  e: Entity,
  key: number,
): Promise<T | undefined> {
  return (await entities<T>(q, e, [key]))[0];
}

/**
 * The entity `e` as a write of one row left it, in the write's own statement: `write` is an
 * INSERT or UPDATE of e's table ending RETURNING *; undefined when it touched no row. Events
 * carry what was just written without a second statement to read it back: a short build's
 * step and build events read their entity back eleven times (load/results/fleet.md,
 * 2026-11-28 22:30). Only for entities whose fields read the row's own columns (a subquery
 * of the same table would see it as it was before the write). `also`, another write (of
 * another table) made in the same statement: PostgreSQL allows data-modifying WITH only at
 * the top, so it cannot come inside `write`.
 */
export async function writtenEntity<T extends EntityJson = EntityJson>(
  q: Queryable,
  e: Entity,
  write: SQLQuery,
  also?: SQLQuery,
): Promise<T | undefined> {
  const first = also ? sql`w AS (${also}), ` : sql``;
  const rows = await many<{ e: T }>(
    q,
    sql`WITH ${first}a AS (${write}) SELECT ${jsonOf(e.fields)} AS e FROM a`,
  );
  return rows[0]?.e;
}
