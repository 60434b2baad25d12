// Run one read request against the database: compile, one round trip, shape the result.
import { sql } from '../../core/db/pool.js';
import { notFound } from '../http/errors.js';
import type { Registry } from '../registry/index.js';
import type { Endpoint, PathArgs } from '../registry/model.js';
import { compileRows, existsSql } from './compile.js';
import type { Envelope } from './envelope.js';
import type { RowReader } from './read-pool.js';
import type { ResultSpec } from './spec.js';

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

export async function readRows(
  db: RowReader,
  registry: Registry,
  endpoint: Endpoint,
  args: PathArgs,
  segments: readonly string[],
  spec: ResultSpec,
): Promise<Envelope> {
  const parent = endpoint.collection ? parentExists(registry, segments) : null;
  const query = compileRows({ endpoint, args, spec, parentExists: parent }, endpoint.resource.fields);
  const [row] = await db.rows<{
    rows: Record<string, unknown>[];
    total: unknown;
    parent_exists: boolean | null;
  }>(query);
  if (!row || row.parent_exists === false) throw notFound();
  const rows = row.rows;
  if (!endpoint.collection && rows.length === 0) throw notFound();
  return { plural: endpoint.resource.plural, rows, total: endpoint.collection ? Number(row.total) : null };
}

/** A `properties` endpoint: the owner row must exist; its properties form one object. */
export async function readProperties(db: RowReader, endpoint: Endpoint, args: PathArgs): Promise<Envelope> {
  const conds = endpoint.scope(args);
  const value = endpoint.value!(args);
  const rows = await db.rows<{ value: unknown }>(
    sql`SELECT coalesce(${value}, '{}'::json) AS value FROM ${endpoint.resource.from} WHERE ${sql.join(conds, sql` AND `)}`,
  );
  if (rows.length === 0) throw notFound();
  return { plural: endpoint.resource.plural, rows: [rows[0]!.value], total: null };
}
