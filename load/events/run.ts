// The event fan-out benchmark: CLIENTS websocket clients over PODS real API processes, all
// subscribed to steps/*/*, one steps/<id>/finished event per build step published on the bus
// at each RATE (events per second) for DURATION seconds; the time from publish to the last
// client, p50/p90/p99/max, per rate, as a markdown table (load/events/RESULTS.md).
//
//   load/bench/cluster.sh db events
//   DATABASE_URL="$(load/bench/cluster.sh url events)" node --import tsx load/events/run.ts
//
// Environment: DATABASE_URL (required: a migrated database), PODS (2), CLIENTS (1000), RATES
// (events/s, comma-separated; 20,100,200), DURATION (seconds per rate; 30), REDIS_URL (default:
// a private redis-server on a free port, started and stopped here), FLOTILLA_REV (the commit
// whose API runs, from a snapshot as load/bench does; default HEAD), API_DIR (a folder to run
// instead, e.g. the working tree).
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../../test/helpers/processes.js';
import { type FanoutResult, measureFanout } from './fanout.js';

async function privateRedis(): Promise<{ url: string; stop: () => Promise<unknown> }> {
  const r = await startRedis();
  return { url: r.url, stop: () => r.proc.stop() };
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const env = process.env;
const databaseUrl = env.DATABASE_URL ?? '';
if (!databaseUrl) {
  console.error('DATABASE_URL is required (load/bench/cluster.sh db events; cluster.sh url events)');
  process.exit(2);
}
const pods = Number(env.PODS ?? 2);
const clients = Number(env.CLIENTS ?? 1000);
const rates = (env.RATES ?? '20,100,200').split(',').map(Number);
const duration = Number(env.DURATION ?? 30);
const apiDir =
  env.API_DIR ??
  execFileSync(resolve(ROOT, 'load/bench/cluster.sh'), ['src', env.FLOTILLA_REV ?? 'HEAD'], {
    encoding: 'utf8',
  }).trim();
const commit = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', env.FLOTILLA_REV ?? 'HEAD'], {
  encoding: 'utf8',
}).trim();

const redis = env.REDIS_URL ? { url: env.REDIS_URL, stop: async () => {} } : await privateRedis();
const results: FanoutResult[] = [];
try {
  for (const rate of rates) {
    console.error(`# ${clients} clients over ${pods} pods, ${rate} events/s for ${duration} s`);
    const r = await measureFanout({
      databaseUrl,
      redisUrl: redis.url,
      apiDir: resolve(ROOT, apiDir),
      pods,
      clients,
      rate,
      events: rate * duration,
      log: (l) => console.error(`  ${l}`),
    });
    console.error(`  ${JSON.stringify(r)}`);
    results.push(r);
  }
} finally {
  await redis.stop();
}

console.log(
  `Flotilla ${commit}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}; ` +
    `clients, publisher and API processes on the same machine.\n`,
);
console.log(
  '| pods | clients | events/s | events | deliveries missing | clients dropped | out of order | publish → last client p50 / p90 / p99 / max (ms) | publish → each client p99 (ms) | API CPU per pod (cores) | CPU of clients + publisher (cores) | API peak RSS per pod (MiB) |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.pods} | ${r.clients} | ${r.rate} | ${r.events} | ${r.missing} | ${r.dropped} | ${r.outOfOrder} | ` +
      `${r.p50} / ${r.p90} / ${r.p99} / ${r.max} | ${r.deliveryP99} | ` +
      `${r.perPod.map((p) => p.cpuShare).join(', ')} | ${r.clientsCpuShare} | ${r.perPod.map((p) => Math.round(p.peakRssKiB / 1024)).join(', ')} |`,
  );
}
