// State kept between runs where Buildbot keeps it: one `objects` row per (name, class name)
// and its `object_state` values as JSON. Using Buildbot's names means a Buildbot database
// adopted by Flotilla (and the other way round) keeps the same state: a timed scheduler's
// last build, a git poller's last revisions, the web session secret.
import { maybeOne, one, type Queryable, sql } from '../db/pool.js';

/** The id of the state object (name, class name), created if needed. */
export async function stateObjectId(q: Queryable, name: string, className: string): Promise<number> {
  const row = await maybeOne<{ id: number }>(
    q,
    sql`INSERT INTO objects (name, class_name) VALUES (${name}, ${className})
        ON CONFLICT (name, class_name) DO NOTHING RETURNING id`,
  );
  // It exists already (or another writer just made it, committed and visible now).
  return (
    row ??
    (await one<{ id: number }>(
      q,
      sql`SELECT id FROM objects WHERE name = ${name} AND class_name = ${className}`,
    ))
  ).id;
}

/** A value, or undefined when there is none (or it is not JSON). */
export async function getState(q: Queryable, objectid: number, key: string): Promise<unknown> {
  const row = await maybeOne<{ value_json: string }>(
    q,
    sql`SELECT value_json FROM object_state WHERE objectid = ${objectid} AND name = ${key}`,
  );
  if (!row) return undefined;
  try {
    return JSON.parse(row.value_json);
  } catch {
    return undefined;
  }
}

/** Store a value; with ifAbsent, only where there is none yet (the first writer wins). */
export async function setState(
  q: Queryable,
  objectid: number,
  key: string,
  value: unknown,
  opts: { ifAbsent?: boolean } = {},
): Promise<void> {
  const json = JSON.stringify(value);
  await q.query(
    opts.ifAbsent
      ? sql`INSERT INTO object_state (objectid, name, value_json) VALUES (${objectid}, ${key}, ${json})
            ON CONFLICT (objectid, name) DO NOTHING`
      : sql`INSERT INTO object_state (objectid, name, value_json) VALUES (${objectid}, ${key}, ${json})
            ON CONFLICT (objectid, name) DO UPDATE SET value_json = EXCLUDED.value_json
            WHERE object_state.value_json IS DISTINCT FROM EXCLUDED.value_json`,
  );
}
