// The database server's version, as /config names it beside Flotilla's and Node's (Buildbot's
// /config lists the versions of what it runs on: Python, Buildbot, Twisted).
import { one, type Queryable, sql } from '../db/pool.js';

/** `SHOW server_version`: e.g. "16.4 (Debian 16.4-1.pgdg120+1)". */
export async function serverVersion(db: Queryable): Promise<string> {
  const row = await one<{ server_version: string }>(db, sql`SHOW server_version`);
  return row.server_version;
}
