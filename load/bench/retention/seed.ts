// The old builds both retention benchmarks delete (run.ts in-process, masters.ts through real
// masters): all finished 400 days ago, in one statement per table (as load/generate does), on
// one builder, each build one step and one log of `chunks / builds` chunks of 10 lines, with
// its request and build set. Ids start at 1: seed a fresh database before anything else
// writes builds into it.
import { type ConnectionPool, sql } from '../../../services/core/db/pool.js';

/** The sizes both take from the environment: the issue's by default. */
export const SIZES = {
  chunks: Number(process.env.CHUNKS ?? 1_000_000),
  builds: Number(process.env.BUILDS ?? 100_000),
  running: Number(process.env.RUNNING ?? 20),
};

export interface SeedOptions {
  builderid: number;
  masterid: number;
  builds: number;
  chunks: number;
}

export async function seed(db: ConnectionPool, o: SeedOptions): Promise<void> {
  const { builderid, masterid, builds } = o;
  const per = Math.max(1, Math.round(o.chunks / builds));
  const at = Math.floor(Date.now() / 1000) - 400 * 86_400;
  await db.query(sql`INSERT INTO buildsets (id, reason, submitted_at, complete, complete_at, results)
    SELECT g, 'old', ${at}, 1, ${at}, 0 FROM generate_series(1, ${builds}) g`);
  await db.query(sql`INSERT INTO buildrequests (id, buildsetid, builderid, priority, complete, results, submitted_at, complete_at)
    SELECT g, g, ${builderid}, 0, 1, 0, ${at}, ${at} FROM generate_series(1, ${builds}) g`);
  await db.query(sql`INSERT INTO builds (id, number, builderid, buildrequestid, workerid, masterid, started_at, complete_at, state_string, results)
    SELECT g, g, ${builderid}, g, NULL, ${masterid}, ${at}, ${at}, 'done', 0 FROM generate_series(1, ${builds}) g`);
  await db.query(sql`INSERT INTO steps (id, number, name, buildid, started_at, complete_at, state_string, results, urls_json, hidden)
    SELECT g, 0, 'compile', g, ${at}, ${at}, 'done', 0, '[]', 0 FROM generate_series(1, ${builds}) g`);
  await db.query(sql`INSERT INTO logs (id, name, slug, stepid, complete, num_lines, type)
    SELECT g, 'stdio', 'stdio', g, 1, ${per * 10}, 's' FROM generate_series(1, ${builds}) g`);
  await db.query(sql`INSERT INTO logchunks (logid, first_line, last_line, content, compressed)
    SELECT l, c * 10, c * 10 + 9, convert_to(repeat('oan old line of output ' || c || E'\n', 10), 'UTF8'), 0
    FROM generate_series(1, ${builds}) l, generate_series(0, ${per - 1}) c`);
  for (const t of ['buildsets', 'buildrequests', 'builds', 'steps', 'logs'])
    await db.query(sql`SELECT setval(pg_get_serial_sequence(${`public.${t}`}, 'id'), ${builds + 1}, false)`);
  await db.query(sql`VACUUM ANALYZE`);
  await db.query(sql`SELECT flotilla.compact_counts()`);
}
