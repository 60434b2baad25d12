// What PostgreSQL did during a window (the drain's, the steady forces'), when the bench cluster has pg_stat_statements
// loaded (load/results/fleet.md, 2026-11-29 00:40, says how): its statements by total time,
// and what the statements do not show, the transactions committed and the WAL written.
// Without the extension in the run's database the window reads nothing and prints nothing.
import type { ConnectionPool } from '../../services/core/db/pool.js';
import { sql } from '../../services/core/db/pool.js';
import { oneLine, statements, statementsBetween } from './pg-statements.js';

interface Totals {
  commits: number;
  walBytes: number;
  walRecords: number;
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

type Printer = (completed: number, say: (line: string) => void) => void;

/**
 * Start the window (the counters read). Its end reads them again and gives what prints the
 * figures per completed build (so that a window can end before another begins, and print later).
 */
export async function pgWindow(db: ConnectionPool): Promise<(() => Promise<Printer>) | null> {
  const s0 = await statements(db);
  if (!s0) return null;
  const t0 = await totals(db);
  return async () => {
    const [t1, s1] = [await totals(db), await statements(db)];
    const ran = statementsBetween(s0, s1 ?? s0);
    return (completed, say) => {
      const per = (n: number) => (n / Math.max(1, completed)).toFixed(1);
      const sum = (k: 'calls' | 'ms') => ran.reduce((n, s) => n + s[k], 0);
      say(
        `PostgreSQL in the window, per completed build: ${per(sum('calls'))} statements, ` +
          `${per(sum('ms'))} ms of statement time, ${per(t1.commits - t0.commits)} commits, ` +
          `${per(t1.walRecords - t0.walRecords)} WAL records, ${per((t1.walBytes - t0.walBytes) / 1024)} KiB of WAL`,
      );
      say('\n| calls / build | ms / build | ms a call | statement |\n|---|---|---|---|');
      for (const r of [...ran].sort((a, b) => b.ms - a.ms).slice(0, 25))
        say(
          `| ${per(r.calls)} | ${(r.ms / Math.max(1, completed)).toFixed(2)} | ${(r.ms / Math.max(1, r.calls)).toFixed(3)} | \`${oneLine(r.query, 110)}\` |`,
        );
    };
  };
}
