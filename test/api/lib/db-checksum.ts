// A checksum of every table's content in the public schema (Buildbot's tables): equal before
// and after means no row was added, changed or removed. The fuzz tests use it to show that
// refused requests change nothing (garbage.fuzz.test.ts).
import { type ConnectionPool, sql } from '../../../services/core/db/pool.js';

export type Checksum = (pool: ConnectionPool) => Promise<string>;

/** A checksum function; its statement is built on first use, from the tables then present. */
export function tableChecksum(): Checksum {
  let statement: ReturnType<typeof sql> | null = null;
  return async (pool) => {
    if (!statement) {
      const tables = await pool.query(sql`
        SELECT table_name AS t FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`);
      if (tables.length < 30) throw new Error(`only ${tables.length} tables: not Buildbot's schema`);
      const parts = tables.map(
        ({ t }) =>
          sql`SELECT ${t}::text AS n, (SELECT md5(coalesce(string_agg(x::text, E'\n' ORDER BY x::text), ''))
              FROM ${sql.ident('public', t)} x) AS h`,
      );
      statement = sql`SELECT md5(string_agg(n || ':' || h, ';' ORDER BY n)) AS sum FROM (${sql.join(parts, sql` UNION ALL `)}) s`;
    }
    const [row] = await pool.query(statement);
    return row.sum as string;
  };
}
