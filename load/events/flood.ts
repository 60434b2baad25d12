// The event flood of issue 13 (finding 5): one client opens CONNECTIONS websockets to a real
// API process and asks each for SUBSCRIPTIONS `logs/<id>/lines` subscriptions (every one a
// different log), while two other clients go on as usual: a probe asking an unrelated REST
// read (GET /api/v2/masters) PROBE_RATE times a second, and a viewer following one live log
// to which a line is appended every 50 ms. Each phase runs PHASE seconds: quiet, then with
// the flood holding everything the API let it open. Printed: the probe's latency, and the
// viewer's lines and their delay, per phase, as a markdown table (load/events/RESULTS.md).
// The other clients come from other loopback addresses (127.0.0.2, .3): separate clients
// to the per-client limits, as other users are.
//
//   load/bench/cluster.sh db events
//   DATABASE_URL="$(load/bench/cluster.sh url events)" API_DIR=. node --import tsx load/events/flood.ts
//
// Environment: DATABASE_URL (required: a migrated database), CONNECTIONS (100), SUBSCRIPTIONS
// (1000), PROBE_RATE (50), PHASE (20), FLOTILLA_REV / API_DIR as in load/events/run.ts.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { WebSocket } from 'ws';
import { appendToLogStream } from '../../services/core/logs/live-stream.js';
import { startRedis } from '../../test/helpers/processes.js';
import { startPod, stopPod } from './fanout.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const env = process.env;
if (!env.DATABASE_URL) {
  console.error('DATABASE_URL is required (load/bench/cluster.sh db events; cluster.sh url events)');
  process.exit(2);
}
const CONNECTIONS = Number(env.CONNECTIONS ?? 100);
const SUBSCRIPTIONS = Number(env.SUBSCRIPTIONS ?? 1000);
const PROBE_RATE = Number(env.PROBE_RATE ?? 50);
const PHASE_S = Number(env.PHASE ?? 20);
const VIEWED_LOG = 1;
const rev = env.FLOTILLA_REV ?? 'HEAD';
const apiDir =
  env.API_DIR ??
  execFileSync(resolve(ROOT, 'load/bench/cluster.sh'), ['src', rev], { encoding: 'utf8' }).trim();
const commit = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', rev], { encoding: 'utf8' }).trim();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : Number.NaN;
};
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');

/** One GET from `from`: its time in ms, or null when it failed. */
function probe(origin: string, from: string): Promise<number | null> {
  const t0 = performance.now();
  return new Promise((done) => {
    const req = http.get(
      `${origin}/api/v2/masters?limit=1`,
      { localAddress: from, timeout: 30_000 },
      (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode === 200 ? performance.now() - t0 : null));
      },
    );
    req.on('error', () => done(null));
    req.on('timeout', () => req.destroy());
  });
}

interface Phase {
  name: string;
  probes: number[];
  probeFailures: number;
  linesSent: number;
  lineDelays: number[];
}

const redisServer = await startRedis();
const redis = new Redis(redisServer.url, { connectionName: 'flood-writer' });
const pod = await startPod({
  databaseUrl: env.DATABASE_URL,
  redisUrl: redisServer.url,
  apiDir: resolve(ROOT, apiDir),
});
const wsUrl = `${pod.origin.replace('http', 'ws')}/ws`;
const flood: WebSocket[] = [];
let floodRefused = 0;
let subscribed = 0;
let subscriptionsRefused = 0;
const phases: Phase[] = [];
try {
  // The viewer: one live log, a line every 50 ms, each line carrying the time it was written.
  const sentAt = new Map<number, number>();
  let current: Phase | null = null;
  const viewer = new WebSocket(wsUrl, { localAddress: '127.0.0.2' });
  await new Promise((r, j) => viewer.once('open', r).once('error', j));
  viewer.on('message', (d: Buffer) => {
    const m = JSON.parse(d.toString());
    if (m.k !== `logs/${VIEWED_LOG}/lines` || !current) return;
    for (const n of String(m.m.content).match(/line (\d+)/g) ?? []) {
      const t = sentAt.get(Number(n.slice(5)));
      if (t !== undefined) current.lineDelays.push(performance.now() - t);
    }
  });
  viewer.send(JSON.stringify({ cmd: 'startConsuming', path: `logs/${VIEWED_LOG}/lines`, _id: 1 }));
  await sleep(500);
  let line = 0;
  const writer = setInterval(() => {
    if (!current) return;
    sentAt.set(++line, performance.now());
    current.linesSent++;
    void appendToLogStream(redis, VIEWED_LOG, line, `line ${line}\n`);
  }, 50);

  const run = async (name: string) => {
    const phase: Phase = { name, probes: [], probeFailures: 0, linesSent: 0, lineDelays: [] };
    current = phase;
    const end = performance.now() + PHASE_S * 1000;
    const pending: Promise<void>[] = [];
    for (let next = performance.now(); next < end; next += 1000 / PROBE_RATE) {
      await sleep(Math.max(0, next - performance.now()));
      pending.push(
        probe(pod.origin, '127.0.0.3').then((t) => {
          if (t === null) phase.probeFailures++;
          else phase.probes.push(t);
        }),
      );
    }
    await Promise.all(pending);
    await sleep(500); // the last lines' way to the viewer
    current = null;
    phases.push(phase);
    console.error(
      `# ${name}: probe p99 ${ms(percentile(phase.probes, 99))} ms, lines ${phase.lineDelays.length}/${phase.linesSent}`,
    );
  };

  await run('quiet');
  // The flood: every connection asks for every subscription at once, as fast as it can.
  console.error(`# flooding: ${CONNECTIONS} connections x ${SUBSCRIPTIONS} log subscriptions`);
  await Promise.all(
    Array.from(
      { length: CONNECTIONS },
      (_, c) =>
        new Promise<void>((done) => {
          const s = new WebSocket(wsUrl, { localAddress: '127.0.0.1' });
          s.once('unexpected-response', (_q, res) => {
            floodRefused++;
            res.resume();
            done();
          });
          s.once('error', () => done());
          s.on('message', (d: Buffer) => {
            const m = JSON.parse(d.toString());
            if (m.code === 200) subscribed++;
            else if (m.code === 400) subscriptionsRefused++;
          });
          s.once('open', () => {
            flood.push(s);
            for (let i = 0; i < SUBSCRIPTIONS; i++) {
              const logid = 1_000_000 + c * SUBSCRIPTIONS + i;
              s.send(JSON.stringify({ cmd: 'startConsuming', path: `logs/${logid}/lines`, _id: i }));
            }
            done();
          });
        }),
    ),
  );
  // Measured once every subscription asked for is answered: what is measured is the flood
  // held, not this process parsing its 100,000 answers while it times the probe.
  const asked = () => flood.length * SUBSCRIPTIONS;
  for (let i = 0; i < 600 && subscribed + subscriptionsRefused < asked(); i++) await sleep(100);
  await run('flood');
  clearInterval(writer);
  viewer.close();
} finally {
  for (const s of flood) s.terminate();
  await stopPod(pod).catch(() => {});
  redis.disconnect();
  await redisServer.proc.stop();
}

const [quiet, flooded] = phases;
console.log(
  `Flotilla ${commit}${env.API_DIR ? ' (working tree)' : ''}, ${cpus().length} CPUs, Node ${process.version}; ` +
    `API, Redis and clients on one machine. Flood: ${CONNECTIONS} connections x ${SUBSCRIPTIONS} ` +
    `logs/<id>/lines subscriptions from one client: ${CONNECTIONS - floodRefused} connections opened ` +
    `(${floodRefused} refused 429), ${subscribed} subscriptions accepted (${subscriptionsRefused} refused).\n`,
);
console.log(
  "| phase | probe requests | probe failures | probe p50 / p99 / max (ms) | viewer's lines received / sent | line delay p50 / p99 (ms) |",
);
console.log('|---|---|---|---|---|---|');
for (const p of phases) {
  console.log(
    `| ${p.name} | ${p.probes.length + p.probeFailures} | ${p.probeFailures} | ` +
      `${ms(percentile(p.probes, 50))} / ${ms(percentile(p.probes, 99))} / ${ms(p.probes.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY))} | ` +
      `${p.lineDelays.length} / ${p.linesSent} | ${ms(percentile(p.lineDelays, 50))} / ${ms(percentile(p.lineDelays, 99))} |`,
  );
}
if (quiet && flooded) {
  const ratio = percentile(flooded.probes, 99) / percentile(quiet.probes, 99);
  console.log(
    `\nprobe p99 under the flood / quiet: ${ratio.toFixed(2)}x (within 2x: ${ratio <= 2 ? 'yes' : 'no'})`,
  );
}
