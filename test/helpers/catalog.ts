// A description of the public schema read from PostgreSQL's catalogs, one sorted list of
// lines per kind of object, so that two databases can be compared line by line.
import { type Queryable, sql } from '../../services/core/db/pool.js';

export type Catalog = Record<'tables' | 'columns' | 'constraints' | 'indexes' | 'sequences', string[]>;

const lines = async (db: Queryable, q: ReturnType<typeof sql>) =>
  (await db.query(q)).map((r) => r.line as string).sort();

export async function readCatalog(db: Queryable): Promise<Catalog> {
  return {
    tables: await lines(
      db,
      sql`SELECT c.relname AS line FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm')`,
    ),
    columns: await lines(
      db,
      sql`SELECT c.relname || '.' || a.attname || ' #' || a.attnum || ' ' || format_type(a.atttypid, a.atttypmod)
                 || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE ' NULL' END
                 || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '') AS line
          FROM pg_attribute a
          JOIN pg_class c ON c.oid = a.attrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
          LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped`,
    ),
    constraints: await lines(
      db,
      sql`SELECT c.relname || ' ' || k.conname || ' ' || k.contype::text || ' ' || pg_get_constraintdef(k.oid) AS line
          FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`,
    ),
    indexes: await lines(db, sql`SELECT indexdef AS line FROM pg_indexes WHERE schemaname = 'public'`),
    sequences: await lines(
      db,
      sql`SELECT s.sequencename || ' ' || s.data_type || ' start ' || s.start_value || ' by ' || s.increment_by
                 || ' owned by ' || coalesce(dep.owner, '-') AS line
          FROM pg_sequences s
          LEFT JOIN LATERAL (
            SELECT t.relname || '.' || a.attname AS owner
            FROM pg_depend d
            JOIN pg_class q ON q.oid = d.objid AND q.relname = s.sequencename
            JOIN pg_namespace qn ON qn.oid = q.relnamespace AND qn.nspname = 'public'
            JOIN pg_class t ON t.oid = d.refobjid
            JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
            WHERE d.deptype = 'a' AND d.classid = 'pg_class'::regclass
          ) dep ON true
          WHERE s.schemaname = 'public'`,
    ),
  };
}

/** Our additive indexes are the one allowed difference; they all carry this prefix. */
export function withoutOurIndexes(c: Catalog): Catalog {
  return { ...c, indexes: c.indexes.filter((l) => !/^CREATE (UNIQUE )?INDEX flotilla_/.test(l)) };
}
