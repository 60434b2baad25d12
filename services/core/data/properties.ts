// Build properties: setBuildProperty, setBuildProperties.
//
// Buildbot facts (buildbot/db/builds.py setBuildProperty, buildbot/data/properties.py):
// - a property is one build_properties row (value as JSON text, source), created or updated;
//   the table has no unique key, so we hold the build's row lock while writing;
// - setBuildProperties compares each new [value, source] with the stored one and writes
//   only those that differ, then produces ONE event builds/<id>/properties/update holding
//   only those, and none when nothing differs (there is no way to delete a property);
// - setBuildProperty always produces that event. Buildbot 3.7's message is literally
//   {"name": [value, source]} (a bug); ours is keyed by the property's name, as
//   setBuildProperties' is.
// Values are compared as JSON values (key order aside), so a value stored by Buildbot's
// json.dumps and the same value from us compare equal.
import { many, type Queryable, type SQLQuery, sql } from '../db/pool.js';
import { buildPropertiesKey } from '../events/keys.js';
import { lockBuild } from './build-lock.js';
import type { Tx } from './transaction.js';

/** name -> [value, source] */
export type SourcedProperties = Record<string, readonly [unknown, string]>;

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const rb = b as Record<string, unknown>;
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(rb, k) && sameJson((a as never)[k], rb[k]));
}

/** What JSON makes of a value (undefined becomes null, Dates strings...), as it will be read back. */
const normalize = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? 'null');

/**
 * Write the properties that differ from the stored ones; returns those, normalized.
 *
 * Measured (issue 35, load/results/fleet.md, 2026-11-28 20:01): over the 1,000 builds the
 * fleet's masters started at once, pg_stat_statements counted 9,000 single-row INSERTs into
 * build_properties (9 per build, 4.7 s of the database's time, the most called statement
 * after BEGIN and COMMIT), in a transaction of 18 statements. New rows are now one INSERT
 * and changed ones one UPDATE, whatever their number: lock, read, write at a build's start
 * (test/core/data/properties.test.ts counts them).
 */
async function write(tx: Tx, buildid: number, props: SourcedProperties): Promise<SourcedProperties> {
  const names = Object.keys(props);
  if (names.length === 0) return {};
  const stored = await many<{ name: string; value: unknown; broken: boolean; source: string }>(
    tx.q,
    sql`SELECT name, flotilla.try_json(value) AS value, flotilla.try_json(value) IS NULL AS broken, source
        FROM build_properties WHERE buildid = ${buildid} AND name = ANY(${names}::text[])`,
  );
  const old = new Map(stored.map((r) => [r.name, r]));
  const changed: Record<string, readonly [unknown, string]> = {};
  const inserts: PropertyRow[] = [];
  const updates: PropertyRow[] = [];
  for (const name of names) {
    const [raw, source] = props[name]!;
    const value = normalize(raw);
    const was = old.get(name);
    if (was && !was.broken && was.source === source && sameJson(was.value, value)) continue;
    (was ? updates : inserts).push({ name, text: JSON.stringify(value), source });
    changed[name] = [value, source];
  }
  await insertBuildProperties(tx, buildid, inserts);
  await updateBuildProperties(tx, buildid, updates);
  return changed;
}

/** One property as stored: its value as JSON text. */
interface PropertyRow {
  name: string;
  text: string;
  source: string;
}

const column = (rows: PropertyRow[], key: keyof PropertyRow) => rows.map((r) => r[key]);

/** New build_properties rows, in one statement, in the order given. */
async function insertBuildProperties(tx: Tx, buildid: number, rows: PropertyRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.q.query(sql`INSERT INTO build_properties (buildid, name, value, source)
    SELECT ${buildid}, n, v, s
    FROM unnest(${column(rows, 'name')}::text[], ${column(rows, 'text')}::text[], ${column(rows, 'source')}::text[])
      WITH ORDINALITY AS x(n, v, s, o)
    ORDER BY o`);
}

/** Stored build_properties rows given new values and sources, in one statement. */
async function updateBuildProperties(tx: Tx, buildid: number, rows: PropertyRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.q.query(sql`UPDATE build_properties p SET value = x.v, source = x.s
    FROM unnest(${column(rows, 'name')}::text[], ${column(rows, 'text')}::text[], ${column(rows, 'source')}::text[])
      AS x(n, v, s)
    WHERE p.buildid = ${buildid} AND p.name = x.n`);
}

/**
 * The properties of a build created in the same transaction: it has none yet and nobody else
 * sees its row, so each is new and goes into one INSERT, without setBuildProperties' lock of
 * the build and read of what is stored (two statements of a build's start; phase S of the
 * fleet run, load/results/fleet.md 2026-11-29). The same event as setBuildProperties'.
 */
export async function addNewBuildProperties(
  tx: Tx,
  buildid: number,
  props: SourcedProperties,
): Promise<SourcedProperties> {
  const added: Record<string, readonly [unknown, string]> = {};
  const rows: PropertyRow[] = [];
  for (const [name, [raw, source]] of Object.entries(props)) {
    const value = normalize(raw);
    rows.push({ name, text: JSON.stringify(value), source });
    added[name] = [value, source];
  }
  await insertBuildProperties(tx, buildid, rows);
  if (rows.length > 0) tx.out.add(buildPropertiesKey(buildid), added);
  return added;
}

/** Set one property (created if missing). Produces the update event whether or not it changed. */
export async function setBuildProperty(
  tx: Tx,
  buildid: number,
  name: string,
  value: unknown,
  source: string,
): Promise<void> {
  await lockBuild(tx, buildid);
  await write(tx, buildid, { [name]: [value, source] });
  tx.out.add(buildPropertiesKey(buildid), { [name]: [normalize(value), source] });
}

/**
 * Synchronize the build's properties with `props`: writes the ones that changed and produces
 * one event holding only those, or none. Returns the changed properties.
 */
export async function setBuildProperties(
  tx: Tx,
  buildid: number,
  props: SourcedProperties,
): Promise<SourcedProperties> {
  await lockBuild(tx, buildid);
  const changed = await write(tx, buildid, props);
  if (Object.keys(changed).length > 0) tx.out.add(buildPropertiesKey(buildid), changed);
  return changed;
}

/** The build's properties as they stand: name -> [value, source] (a value that is not JSON as its text). */
export async function getBuildProperties(q: Queryable, buildid: number): Promise<SourcedProperties> {
  const rows = await many<{ name: string; v: unknown; source: string }>(
    q,
    sql`SELECT name, flotilla.try_json(value) AS v, source FROM build_properties WHERE buildid = ${buildid}`,
  );
  return Object.fromEntries(rows.map((p) => [p.name, [p.v, p.source] as const]));
}

/** A build set's properties as stored: name -> [value, source]; a malformed one is left out. */
export async function getBuildsetProperties(q: Queryable, bsid: number): Promise<SourcedProperties> {
  return buildsetPropertiesOf(await many(q, buildsetPropertiesQuery(bsid)));
}

/** getBuildsetProperties' statement, for a build's start to read with its other facts (build-start.ts). */
export const buildsetPropertiesQuery = (bsid: number): SQLQuery =>
  sql`SELECT property_name, flotilla.try_json(property_value) AS pair
        FROM buildset_properties WHERE buildsetid = ${bsid}`;

/** A build set's properties from buildsetPropertiesQuery's rows. */
export function buildsetPropertiesOf(
  rows: readonly { property_name: string; pair: unknown }[],
): SourcedProperties {
  const out: Record<string, readonly [unknown, string]> = {};
  for (const p of rows)
    if (Array.isArray(p.pair) && p.pair.length === 2) out[p.property_name] = [p.pair[0], String(p.pair[1])];
  return out;
}
