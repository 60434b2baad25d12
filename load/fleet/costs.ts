// What the rest of the fleet run's machine spent during a window, beside the masters' CPU
// (procstat.ts): PostgreSQL's whole cluster, Redis, and the masters' claim passes. A build
// costs CPU in every one of these; on two cores their sum, not the masters' share, is what
// bounds the builds a second (load/results/fleet.md, 2026-11-28 22:30).
import { readdirSync, readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { ConnectionPool } from '../../services/core/db/pool.js';
import { sql } from '../../services/core/db/pool.js';

const TICKS = 100; // USER_HZ on Linux

function statOf(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command's name (which may hold spaces) in parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * CPU seconds of the PostgreSQL cluster behind `db` so far: its postmaster, every live child,
 * and the children it has reaped (a connection's backend that ended), all on this machine.
 */
export async function postgresCpuSeconds(db: ConnectionPool): Promise<number> {
  const [row] = await db.query(sql`SELECT pg_backend_pid() AS pid`);
  const postmaster = Number(statOf(row.pid)?.[1]);
  const own = statOf(postmaster);
  if (!own) throw new Error('the PostgreSQL cluster runs elsewhere: its CPU cannot be read here');
  // utime, stime, cutime, cstime of the postmaster (fields 14-17 of /proc/PID/stat)
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const s = statOf(pid);
    if (s && Number(s[1]) === postmaster) ticks += Number(s[11]) + Number(s[12]);
  }
  return ticks / TICKS;
}

/** CPU seconds of the Redis server so far (its own INFO). */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const get = (k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return get('used_cpu_sys') + get('used_cpu_user');
}

/**
 * What Redis has carried so far (its INFO): events appended to the stream (XADD), messages
 * published (PUBLISH, those of scripts included: an event on the ids channel, and on the
 * masters' when a master acts on its kind), and bytes sent to its clients, subscribers
 * included.
 */
export async function redisTraffic(
  redis: Redis,
): Promise<{ xadds: number; publishes: number; outBytes: number }> {
  const info = await redis.info('all');
  const calls = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
  const outBytes = Number(/total_net_output_bytes:(\d+)/.exec(info)?.[1] ?? 0);
  return { xadds: calls('xadd'), publishes: calls('publish'), outBytes };
}

/** A master's claim passes so far (flotilla_claim_pass_seconds on its /metrics): how many, and their seconds. */
export async function claimPasses(probePort: number): Promise<{ count: number; seconds: number }> {
  const text = await (await fetch(`http://127.0.0.1:${probePort}/metrics`)).text();
  const get = (k: string) =>
    Number(new RegExp(`^flotilla_claim_pass_seconds_${k}\\S* ([\\d.e+-]+)$`, 'm').exec(text)?.[1] ?? 0);
  return { count: get('count'), seconds: get('sum') };
}
