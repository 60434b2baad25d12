// What PostgreSQL did during the drain window, when the bench cluster has pg_stat_statements
// loaded (load/results/fleet.md, 2026-11-29 00:40, says how): its statements by total time,
// and what the statements do not show, the transactions committed and the WAL written.
// Without the extension in the run's database the window reads nothing and prints nothing.
import type { ConnectionPool } from '../../services/core/db/pool.js';
import { sql } from '../../services/core/db/pool.js';

interface Totals {
  commits: number;
  walBytes: number;
  walRecords: number;
}

async function hasStatements(db: ConnectionPool): Promise<boolean> {
  const rows = await db.query(sql`SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'`);
  return rows.length > 0;
}

async function totals(db: ConnectionPool): Promise<Totals> {
  const [d] = await db.query(
    sql`SELECT sum(xact_commit)::float8 AS commits FROM pg_stat_database WHERE datname = current_database()`,
  );
  const [w] = await db.query(
    sql`SELECT wal_bytes::float8 AS bytes, wal_records::float8 AS records FROM pg_stat_wal`,
  );
  return { commits: Number(d.commits), walBytes: Number(w.bytes), walRecords: Number(w.records) };
}

/** Start the window: the statements' counters reset. Its end prints the figures per completed build. */
export async function pgWindow(
  db: ConnectionPool,
): Promise<((completed: number, say: (line: string) => void) => Promise<void>) | null> {
  if (!(await hasStatements(db))) return null;
  await db.query(sql`SELECT pg_stat_statements_reset()`);
  const t0 = await totals(db);
  return async (completed, say) => {
    const t1 = await totals(db);
    const per = (n: number) => (n / Math.max(1, completed)).toFixed(1);
    const rows = await db.query(sql`
      SELECT calls::float8 AS calls, total_exec_time AS ms, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 110) AS q
      FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time DESC LIMIT 25`);
    const [all] = await db.query(sql`
      SELECT sum(calls)::float8 AS calls, sum(total_exec_time) AS ms FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`);
    say(
      `PostgreSQL in the window, per completed build: ${per(Number(all.calls))} statements, ` +
        `${per(Number(all.ms))} ms of statement time, ${per(t1.commits - t0.commits)} commits, ` +
        `${per(t1.walRecords - t0.walRecords)} WAL records, ${per((t1.walBytes - t0.walBytes) / 1024)} KiB of WAL`,
    );
    say('\n| calls / build | ms / build | ms a call | statement |\n|---|---|---|---|');
    for (const r of rows)
      say(
        `| ${per(Number(r.calls))} | ${(Number(r.ms) / Math.max(1, completed)).toFixed(2)} | ${(Number(r.ms) / Math.max(1, Number(r.calls))).toFixed(3)} | \`${String(r.q).replaceAll('|', '\\|')}\` |`,
      );
  };
}
