// CPU time of the processes a read goes through (Linux /proc): the API, the S3 server and
// PostgreSQL's backends (children of its postmaster), so that a run reports the CPU a read
// costs in each, not only its rate: on a machine with every core busy, the rate follows the
// CPU a read costs in all of them.
import { readdirSync, readFileSync } from 'node:fs';

// /proc counts in clock ticks, 100 a second on Linux (USER_HZ).
const MS_PER_TICK = 10;

/** utime + stime of a process in ms, and its parent; null once it is gone. */
function stat(pid: number): { ms: number; ppid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command's name (in parentheses, which may hold spaces): state, ppid, ... utime, stime.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ms: (Number(f[11]) + Number(f[12])) * MS_PER_TICK, ppid: Number(f[1]) };
  } catch {
    return null;
  }
}

/** CPU ms so far of the API, the S3 server and each of PostgreSQL's processes (by pid). */
export function cpuNow(pids: { api: number; s3: number; postmaster: number }): Map<string, number> {
  const now = new Map<string, number>();
  now.set('api', stat(pids.api)?.ms ?? 0);
  now.set('s3', stat(pids.s3)?.ms ?? 0);
  now.set(`pg ${pids.postmaster}`, stat(pids.postmaster)?.ms ?? 0);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s?.ppid === pids.postmaster) now.set(`pg ${name}`, s.ms);
  }
  return now;
}

/**
 * CPU ms spent between two readings, per response: `postgresql` sums the processes seen in
 * both (a backend that ended or began between them is left out, its share unknown).
 */
export function cpuPerResponse(
  before: Map<string, number>,
  after: Map<string, number>,
  responses: number,
): Record<string, number> {
  const per = (ms: number) => Math.round((ms / Math.max(1, responses)) * 100) / 100;
  let postgresql = 0;
  for (const [k, ms] of after) if (k.startsWith('pg ') && before.has(k)) postgresql += ms - before.get(k)!;
  return {
    api: per(after.get('api')! - before.get('api')!),
    s3: per(after.get('s3')! - before.get('s3')!),
    postgresql: per(postgresql),
  };
}
