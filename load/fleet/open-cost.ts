// Wall time of opening a pool's connections against a database: POOL (10) at once, as a master
// now does at its start (core/db/pool.ts openConnections), and one alone, RUNS (5) fresh pools
// each, in turns. A connection's opening is a backend forked and its SCRAM exchange.
//
//   DATABASE_URL="$(BENCH_PG_PORT=21440 load/bench/cluster.sh url fleet_run)" node_modules/.bin/node --import tsx load/fleet/open-cost.ts
import { loadavg } from 'node:os';
import { createPool, openConnections } from '../../services/core/db/pool.js';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('set DATABASE_URL');
const size = Number(process.env.POOL ?? 10);
const runs = Number(process.env.RUNS ?? 5);

async function timed(count: number): Promise<number> {
  const pool = createPool(url!, { poolSize: size });
  const t0 = performance.now();
  await openConnections(pool, count);
  const ms = performance.now() - t0;
  await pool.dispose();
  return ms;
}

const all: number[] = [];
const one: number[] = [];
for (let i = 0; i < runs; i++) {
  all.push(await timed(size));
  one.push(await timed(1));
}
const line = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
console.log(
  `${size} connections at once: ${line(all)} ms; one alone: ${line(one)} ms; load average (1 min) ${loadavg()[0]!.toFixed(1)}`,
);
