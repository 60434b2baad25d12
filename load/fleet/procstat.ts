// What a process has cost so far, read from /proc: CPU seconds (user + system) and its
// resident memory, for the fleet scenario's cost per build, per worker and per request.
import { readFileSync } from 'node:fs';

const TICKS = 100; // USER_HZ on Linux

/** User plus system CPU seconds of `pid` so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command's name (which may hold spaces) in parentheses.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / TICKS;
}

/** Resident set size now, in KiB. */
export function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}
