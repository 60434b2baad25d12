// What a process has cost so far, read from /proc: CPU seconds (user + system) and its
// resident memory, for the fleet scenario's cost per build, per worker and per request.
import { readdirSync, readFileSync } from 'node:fs';

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

/**
 * CPU seconds of `pid` so far by thread kind (a thread's name without its number): node's
 * main thread (`node-MainThread`) runs the JavaScript, `node-V8Worker`s compile optimized code
 * and help the garbage collector, `libuv-worker`s do file and DNS work. A process's CPU
 * profile samples the main thread alone, so the workers' share is read here.
 */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // a thread gone since the listing
    }
    const kind = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(kind, (out.get(kind) ?? 0) + (Number(rest[11]) + Number(rest[12])) / TICKS);
  }
  return out;
}
