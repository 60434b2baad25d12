// Builders: findBuilderId, updateBuilderInfo, updateBuilderList.
//
// Buildbot facts (buildbot/db/builders.py, buildbot/db/tags.py, buildbot/data/builders.py):
// - builders and tags are found or created by name_hash (sha1 of the name);
// - a master runs a builder when a builder_masters row (builderid, masterid) exists;
//   updateBuilderList removes the rows of names no longer configured (producing
//   builders/<id>/stopped) and adds the new ones (builders/<id>/started), both with the
//   message {builderid, masterid, name}; removing a row also removes, by cascade, the
//   configured_workers rows that hang from it; a master going away is updateBuilderList([]);
// - updateBuilderInfo replaces the description, the project (4.3's projectid) and the tags
//   (builders_tags, in the given order) and produces builders/<id>/update with the builder
//   entity. Buildbot calls it only
//   when the configuration changed; we produce the event only when something did.
import { many, maybeOne, type Queryable, sql } from '../db/pool.js';
import { builder } from '../entities/builder.js';
import { jsonOf } from '../entities/field.js';
import { noSuch } from '../errors.js';
import { builderKeys } from '../events/keys.js';
import { entity } from './entities.js';
import { findNamedId, findNamedIds } from './names.js';
import type { Tx } from './transaction.js';

/** A configured builder: its name, and optionally its description, tags and project. */
export interface BuilderSpec {
  name: string;
  description?: string | null;
  tags?: readonly string[];
  projectid?: number | null;
}

export async function findBuilderId(tx: Tx, name: string, autoCreate = true): Promise<number | null> {
  return findNamedId(tx, 'builders', name, autoCreate);
}

/** A builder's name by its id; null when there is none. */
export async function builderName(q: Queryable, builderid: number): Promise<string | null> {
  const row = await maybeOne<{ name: string }>(q, sql`SELECT name FROM builders WHERE id = ${builderid}`);
  return row?.name ?? null;
}

/** A builder's id by its name; null when there is none. */
export async function builderIdByName(q: Queryable, name: string): Promise<number | null> {
  const row = await maybeOne<{ id: number }>(q, sql`SELECT id FROM builders WHERE name = ${name}`);
  return row?.id ?? null;
}

/** Every builder's id and name, in id order. */
export function allBuilders(q: Queryable): Promise<{ id: number; name: string }[]> {
  return many(q, sql`SELECT id, name FROM builders ORDER BY id`);
}

/** The ids of the builders with these names (those that exist), in id order. */
/** The ids of these builders, each created if it has no row yet (findBuilderId), ascending. */
export async function findBuilderIds(tx: Tx, names: readonly string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const name of new Set(names)) ids.push((await findBuilderId(tx, name))!);
  return ids.sort((a, b) => a - b);
}

export async function findTagId(tx: Tx, name: string): Promise<number> {
  return (await findNamedId(tx, 'tags', name))!;
}

/** Replace a builder's description, tags and project; true (and an `update` event) if they changed. */
export async function updateBuilderInfo(
  tx: Tx,
  builderid: number,
  description: string | null,
  tags: readonly string[],
  projectid: number | null = null,
): Promise<boolean> {
  const b = await maybeOne<{ description: string | null; projectid: number | null; e: { tags: string[] } }>(
    tx.q,
    sql`SELECT a.description, a.projectid, ${jsonOf(builder.fields)} AS e FROM builders a
        WHERE a.id = ${builderid} FOR NO KEY UPDATE`,
  );
  if (!b) throw noSuch(`builder ${builderid}`);
  const wanted = [...new Set(tags)];
  const had = b.e.tags;
  const sameTags = had.length === wanted.length && had.every((t, i) => t === wanted[i]);
  if (b.description === description && b.projectid === projectid && sameTags) return false;
  const tagids: number[] = [];
  for (const tag of wanted) tagids.push(await findTagId(tx, tag));
  await tx.q.query(
    sql`UPDATE builders SET description = ${description}, projectid = ${projectid} WHERE id = ${builderid}`,
  );
  await tx.q.query(sql`DELETE FROM builders_tags WHERE builderid = ${builderid}`);
  if (tagids.length > 0) {
    await tx.q.query(sql`
      INSERT INTO builders_tags (builderid, tagid)
      SELECT ${builderid}, t FROM unnest(${tagids}::int[]) WITH ORDINALITY AS x(t, o) ORDER BY o`);
  }
  const e = await entity(tx.q, builder, builderid);
  tx.out.addAll(builderKeys(builderid), 'update', e);
  return true;
}

/**
 * Record the builders configured on `masterid`: names (or specs, whose description and tags
 * are applied too). Returns the builder ids, in the order given.
 */
export async function updateBuilderList(
  tx: Tx,
  masterid: number,
  builders: readonly (string | BuilderSpec)[],
): Promise<number[]> {
  const specs = builders.map((b) => (typeof b === 'string' ? { name: b } : b));
  const wanted = new Set(specs.map((s) => s.name));
  const current = await many<{ id: number; builderid: number; name: string }>(
    tx.q,
    sql`SELECT bm.id, bm.builderid, b.name FROM builder_masters bm JOIN builders b ON b.id = bm.builderid
        WHERE bm.masterid = ${masterid} ORDER BY bm.builderid`,
  );
  const running = new Set<string>();
  for (const row of current) {
    if (wanted.has(row.name)) {
      running.add(row.name);
      continue;
    }
    await tx.q.query(sql`DELETE FROM builder_masters WHERE id = ${row.id}`);
    tx.out.addAll(builderKeys(row.builderid), 'stopped', {
      builderid: row.builderid,
      masterid,
      name: row.name,
    });
  }
  // A few statements whatever the number of builders, not a few per builder: measured with
  // load/fleet/run.sh (1,000 builders, three masters starting at once on a machine at load
  // average 20-35), the per-builder loop here and the per-worker one of membership.ts made a
  // master's registering transaction some 8,000 round trips, holding every builder's row
  // (updateBuilderInfo's lock) while it ran, so the masters registered one after the other
  // and the last one's first build came minutes after its start.
  const byName = await findNamedIds(
    tx,
    'builders',
    specs.map((s) => s.name),
  );
  const ids = specs.map((s) => byName.get(s.name)!);
  const starting = specs.filter((s) => !running.has(s.name)).map((s) => byName.get(s.name)!);
  if (starting.length > 0) {
    await tx.q.query(sql`
      INSERT INTO builder_masters (builderid, masterid)
      SELECT b, ${masterid} FROM unnest(${[...new Set(starting)]}::int[]) AS x(b) ORDER BY b
      ON CONFLICT (builderid, masterid) DO NOTHING`);
  }
  for (const spec of specs) {
    if (running.has(spec.name)) continue;
    running.add(spec.name);
    const builderid = byName.get(spec.name)!;
    tx.out.addAll(builderKeys(builderid), 'started', { builderid, masterid, name: spec.name });
  }
  // The information is read for all at once, unlocked; only a builder whose information
  // differs goes through updateBuilderInfo, which locks its row and compares again.
  const described = specs.filter(
    (s) => s.description !== undefined || s.tags !== undefined || s.projectid !== undefined,
  );
  if (described.length === 0) return ids;
  const stored = new Map(
    (
      await many<{ id: number; description: string | null; projectid: number | null; e: { tags: string[] } }>(
        tx.q,
        sql`SELECT a.id, a.description, a.projectid, ${jsonOf(builder.fields)} AS e FROM builders a
            WHERE a.id = ANY(${described.map((s) => byName.get(s.name)!)}::int[])`,
      )
    ).map((r) => [r.id, r]),
  );
  for (const spec of described) {
    const builderid = byName.get(spec.name)!;
    const had = stored.get(builderid);
    const tags = [...new Set(spec.tags ?? [])];
    const same =
      had !== undefined &&
      had.description === (spec.description ?? null) &&
      had.projectid === (spec.projectid ?? null) &&
      had.e.tags.length === tags.length &&
      had.e.tags.every((t, i) => t === tags[i]);
    if (!same)
      await updateBuilderInfo(
        tx,
        builderid,
        spec.description ?? null,
        spec.tags ?? [],
        spec.projectid ?? null,
      );
  }
  return ids;
}
