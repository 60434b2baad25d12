// A database of a benchmark's own, next to DATABASE_URL's (the role needs CREATEDB), with
// an admin pool that created it and drops it, whatever the outcome, in drop().
import { type ConnectionPool, createPool, sql } from '../services/core/db/pool.js';

export interface ScratchDatabase {
  name: string;
  url: string;
  /** A small pool on it (the benchmark's own queries). */
  db: ConnectionPool;
  drop(): Promise<void>;
}

export async function scratchDatabase(base: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${Date.now()}`;
  const admin = createPool(base, { poolSize: 1 });
  const url = new URL(base);
  url.pathname = `/${name}`;
  await admin.query(sql`CREATE DATABASE ${sql.ident(name)}`);
  const db = createPool(url.toString(), { poolSize: 2 });
  return {
    name,
    url: url.toString(),
    db,
    async drop() {
      await db.dispose();
      await admin.query(sql`DROP DATABASE IF EXISTS ${sql.ident(name)} WITH (FORCE)`).catch(() => {});
      await admin.dispose();
    },
  };
}
