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

/** CPU ms so far of each named process; `postgresql` sums the postmaster's children. */
export function cpuNow(pids: { api: number; s3: number; postmaster: number }): Record<string, number> {
  let postgresql = stat(pids.postmaster)?.ms ?? 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s?.ppid === pids.postmaster) postgresql += s.ms;
  }
  return { api: stat(pids.api)?.ms ?? 0, s3: stat(pids.s3)?.ms ?? 0, postgresql };
}
