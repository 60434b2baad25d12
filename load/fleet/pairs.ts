// Issue 35's goal 2 in pairs: phase S's bursts and PostgreSQL alone on the same statements
// (pgbench.sh on the script of a real start) taken in turns in one run, each burst between two
// pgbench rounds, so that a burst is compared with the limit of its own minutes.
//
// Why: this machine's speed drifts by a third within an hour, every process alike (a fixed
// loop of JavaScript took 415-587 ms in three runs a minute apart on an idle machine,
// 2026-11-29 11:30), so a burst and a pgbench run half an hour apart compare the hours more
// than the two. The limit of a pair is the best rate of the pgbench rounds on either side of
// the burst (the best of each round's client counts): a higher limit, never a kinder one.
//
// "Alone" for both: before each pgbench round and each burst, the fleet's processes and the
// PostgreSQL cluster are waited for until together they use under QUIET_CORES of a core for a
// second (after a burst its builds end, their logs are compressed by the masters' jobs, and
// autovacuum may run). The fleet stays up during pgbench rounds, idle: its masters' heartbeats
// and the idle workers' connections are in the limit's minutes, as in a burst's.
//
//   S_PGBENCH_SECONDS=10 S_ROUNDS=5 STOP_AFTER=S load/fleet/run.sh    (S_PGBENCH_CLIENTS="2 3")
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ConnectionPool } from '../../services/core/db/pool.js';
import { waitFor } from '../../test/helpers/wait.js';
import { postgresCpuSeconds } from './costs.js';
import { cpuSeconds } from './procstat.js';

const run = promisify(execFile);
const PGBENCH = join(import.meta.dirname, 'pgbench.sh');
/** The fleet and PostgreSQL together under this share of a core for a second count as quiet. */
const QUIET_CORES = 0.15;
const QUIET_LIMIT_MS = 180_000;

export interface PgbenchRound {
  clients: number;
  tps: number;
  /** PostgreSQL's CPU a start, as pgbench.sh prints it. */
  pgMs: number | null;
}

export interface PairsConfig {
  seconds: number;
  clients: number[];
  rounds: number;
}

/** From S_PGBENCH_SECONDS and S_PGBENCH_CLIENTS; `rounds`: phase S's bursts (run.ts' S_ROUNDS). */
export function pairsConfig(env: NodeJS.ProcessEnv, rounds: number): PairsConfig | null {
  const seconds = Number(env.S_PGBENCH_SECONDS ?? 0);
  if (!(seconds > 0)) return null;
  const clients = (env.S_PGBENCH_CLIENTS ?? '2 3').split(/\s+/).filter(Boolean).map(Number);
  if (clients.some((c) => !Number.isInteger(c) || c < 1))
    throw new Error(`S_PGBENCH_CLIENTS: whole numbers of clients, not "${env.S_PGBENCH_CLIENTS}"`);
  return { seconds, clients, rounds };
}

/**
 * Seed pgbench's database (fleet_pgbench, beside the fleet's) with requests enough for every
 * round at 2,000 starts a second (above any rate measured here), then one short round unmeasured: the first run after seeding
 * meets cold backends and buffers (311 starts a second against 566-655 after, 2026-11-29 09:20).
 */
export async function seedPgbench(c: PairsConfig): Promise<void> {
  const requests = 2000 * (c.seconds * c.clients.length * (c.rounds + 1) + 5);
  await run(PGBENCH, [], { env: { ...process.env, SEED: 'only', REQUESTS: String(requests) } });
  await pgbenchRound({ ...c, seconds: 5, clients: [c.clients[0]!] });
}

/** One round: each client count for `seconds` on the seeded database. */
export async function pgbenchRound(c: Pick<PairsConfig, 'seconds' | 'clients'>): Promise<PgbenchRound[]> {
  const { stdout } = await run(PGBENCH, [], {
    env: { ...process.env, SEED: 'kept', CLIENTS: c.clients.join(' '), SECONDS_EACH: String(c.seconds) },
  });
  return parseRounds(stdout);
}

/** pgbench.sh's lines `-M prepared, clients 2: tps = 655.4 (...) PostgreSQL CPU a start 2.53 ms; ...`. */
export function parseRounds(out: string): PgbenchRound[] {
  const rounds: PgbenchRound[] = [];
  for (const line of out.split('\n')) {
    const m = /clients (\d+): tps = ([\d.]+).*?PostgreSQL CPU a start (?:([\d.]+) ms|unknown)/.exec(line);
    if (m) rounds.push({ clients: Number(m[1]), tps: Number(m[2]), pgMs: m[3] ? Number(m[3]) : null });
  }
  if (rounds.length === 0) throw new Error(`pgbench.sh printed no rate:\n${out}`);
  return rounds;
}

export const best = (r: readonly PgbenchRound[]) => Math.max(...r.map((x) => x.tps));

/**
 * Wait until `pids` and the PostgreSQL cluster together use under QUIET_CORES for a second;
 * resolves with how long it took, or null when they never did within QUIET_LIMIT_MS (the pair
 * is then taken anyway, and says so).
 */
export async function quiet(db: ConnectionPool, pids: readonly number[]): Promise<number | null> {
  const began = Date.now();
  const sample = async () => pids.reduce((s, p) => s + cpuSeconds(p), 0) + (await postgresCpuSeconds(db));
  let last = await sample();
  let at = Date.now();
  try {
    await waitFor(
      'the fleet and PostgreSQL quiet',
      async () => {
        const [now, t] = [await sample(), Date.now()];
        if (t - at < 500) return false; // the first look: nothing measured yet
        const cores = (now - last) / ((t - at) / 1000);
        [last, at] = [now, t];
        return cores < QUIET_CORES;
      },
      { timeoutMs: QUIET_LIMIT_MS, everyMs: 1000 },
    );
  } catch {
    return null;
  }
  return (Date.now() - began) / 1000;
}

/** The pairs' lines: each warm burst against the best pgbench round on either side of it. */
export function pairLines(bursts: readonly number[], limits: readonly number[]): string[] {
  const lines = [
    '| burst | builds started/s | pgbench before, after (best) | burst / the better of the two |',
    '|---|---|---|---|',
  ];
  const ratios: number[] = [];
  bursts.forEach((rate, i) => {
    const [before, after] = [limits[i]!, limits[i + 1]!];
    const ratio = rate / Math.max(before, after);
    // The first burst meets masters whose JavaScript is not yet optimized (run.ts, phase S).
    if (i > 0) ratios.push(ratio);
    lines.push(
      `| ${i + 1}${i === 0 ? ' (first, not counted)' : ''} | ${rate.toFixed(1)} | ${before.toFixed(1)}, ${after.toFixed(1)} | ${(100 * ratio).toFixed(1)}% |`,
    );
  });
  const sorted = [...ratios].sort((a, b) => a - b);
  const median = sorted.length
    ? (sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2
    : Number.NaN;
  lines.push(
    '',
    `warm bursts against the limit of their own minutes: median ${(100 * median).toFixed(1)}%, ` +
      `lowest ${(100 * (sorted[0] ?? Number.NaN)).toFixed(1)}%, highest ${(100 * (sorted.at(-1) ?? Number.NaN)).toFixed(1)}% (goal: 50%)`,
  );
  return lines;
}
