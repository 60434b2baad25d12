// The local runner: the scenarios of load/scenarios.json, as the k6 scripts of load/k6 run
// them, with autocannon (collections), fetch (log tailing) and ws (event fan-out), and the
// same thresholds. Exits 1 when a threshold fails, 2 on a usage or setup error.
//
//   BASE_URL=http://127.0.0.1:8080/api/v2 node --import tsx load/run.ts [scenario ...]
//        [--duration 30s] [--vus N] [--out FILE] [--rate N] [--start-timeout 60s]
//
// Scenarios: collections, log_tail, ws_fanout (default: all three, one after the other), and
// busy (the web UI while 20 builds run: load/busy/run.sh sets that up and runs it), and
// fleet_reads (issue 35's reads at ten million builds: load/fleet/reads.sh), and
// fleet_forces (request to build started at a constant rate of forces, on a running fleet:
// load/fleet/run.ts's phase C runs it).
// --duration and --vus override every scenario's (like k6's -e DURATION / -e VUS); --rate and
// --start-timeout fleet_forces's (-e RATE / -e START_TIMEOUT).
// BUILD_ID / LOG_ID name the ids the endpoints use instead of finding them through the API.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { busyMix } from './busy/mix.js';
import { fleetForces } from './fleet/forces.js';
import { fleetReads } from './fleet/reads.js';
import { hammer } from './measure.js';
import {
  fill,
  httpMetrics,
  type Ids,
  judge,
  loadScenarios,
  type Metric,
  resolveIds,
  type ScenarioSpec,
  type Scenarios,
  seconds,
  type Verdict,
} from './scenario.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    base: { type: 'string' },
    duration: { type: 'string' },
    vus: { type: 'string' },
    out: { type: 'string' },
    rate: { type: 'string' },
    'start-timeout': { type: 'string' },
  },
});

type Runner = (spec: Scenarios, sc: ScenarioSpec, base: string, ids: Ids) => Promise<Record<string, Metric>>;

/** Each VU requests every endpoint but the heavy ones in turn: autocannon's request cycle per connection. */
const collections: Runner = async (spec, sc, base, ids) => {
  const run = await hammer({
    base,
    paths: spec.endpoints.filter((e) => !e.heavy).map((e) => fill(e.path, ids)),
    connections: sc.vus,
    durationSeconds: seconds(sc.duration),
    timeoutSeconds: 60,
    headers: spec.headers,
  });
  const total = run.responses + run.timeouts;
  return {
    http_req_duration: { kind: 'trend', samples: run.latencies },
    http_req_failed: { kind: 'rate', passes: run.failed, total },
    // k6's check: status is 200.
    checks: { kind: 'rate', passes: total - run.failed, total },
    http_reqs: { kind: 'counter', count: total, seconds: run.seconds },
  };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs vus virtual users (numbered from 1, as k6's __VU) to completion; the seconds it took. */
async function runVus(vus: number, vu: (n: number) => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: vus }, (_, i) => vu(i + 1)));
  return (performance.now() - t0) / 1000;
}

/** Each VU follows the log from its own offset, pageLines at a time, pollMs apart; 404 past the end. */
const logTail: Runner = async (spec, sc, base, ids) => {
  const info: any = await (await fetch(`${base}/logs/${ids.log}`, { headers: spec.headers })).json();
  const numLines: number = info.logs?.[0]?.num_lines ?? 0;
  const durations: number[] = [];
  let failed = 0;
  let requests = 0;
  let lines = 0;
  const end = Date.now() + seconds(sc.duration) * 1000;
  const vu = async (n: number) => {
    let offset = numLines > 0 ? ((n - 1) * 50000) % numLines : 0;
    while (Date.now() < end) {
      const t0 = performance.now();
      let status = 0;
      let content = '';
      try {
        const res = await fetch(`${base}/logs/${ids.log}/contents?offset=${offset}&limit=${sc.pageLines}`, {
          headers: spec.headers,
          signal: AbortSignal.timeout(60_000),
        });
        status = res.status;
        const body = await res.text();
        if (status === 200) content = JSON.parse(body).logchunks?.[0]?.content ?? '';
      } catch {
        status = 0;
      }
      durations.push(performance.now() - t0);
      requests++;
      if (status === 200) {
        const got = content.split('\n').length - 1;
        lines += got;
        offset += got;
      } else {
        if (status !== 404) failed++;
        offset = 0;
      }
      await sleep(sc.pollMs ?? 0);
    }
  };
  const took = await runVus(sc.vus, vu);
  return {
    // k6's check: status is 200, or 404 past the end.
    ...httpMetrics(durations, requests, failed, took),
    log_lines_read: { kind: 'counter', count: lines, seconds: took },
  };
};

const FAILED_SESSION_PAUSE_MS = 1000;

/** Each VU opens /ws, subscribes, counts events for holdSeconds, closes, and starts over. */
const wsFanout: Runner = async (_spec, sc, base) => {
  const url = base.replace(/^http/, 'ws').replace(/\/api\/v2$/, '') + '/ws';
  const acks: number[] = [];
  let sessions = 0;
  let failedSessions = 0;
  let events = 0;
  const end = Date.now() + seconds(sc.duration) * 1000;
  const session = () =>
    new Promise<void>((resolve) => {
      let sentAt = 0;
      let acked = false;
      const socket = new WebSocket(url);
      const finish = () => {
        clearTimeout(timer);
        sessions++;
        if (!acked) failedSessions++;
        resolve();
      };
      // a k6 iteration is never cut short: the socket is held for holdSeconds in full
      const timer = setTimeout(() => socket.close(), (sc.holdSeconds ?? 10) * 1000);
      socket.on('open', () => {
        sentAt = performance.now();
        socket.send(JSON.stringify({ cmd: 'startConsuming', path: sc.path, _id: 1 }));
      });
      socket.on('message', (data) => {
        const msg = JSON.parse(String(data));
        if (msg._id === 1) {
          acks.push(performance.now() - sentAt);
          acked = msg.code === 200;
        } else if (msg.k) {
          events++;
        }
      });
      socket.on('error', () => socket.terminate());
      socket.on('close', finish);
    });
  const took = await runVus(sc.vus, async () => {
    while (Date.now() < end) {
      const failedBefore = failedSessions;
      await session();
      // as the k6 script: a failed session waits a moment instead of reconnecting at once
      if (failedSessions > failedBefore) await sleep(FAILED_SESSION_PAUSE_MS);
    }
  });
  return {
    ws_subscribe_ack: { kind: 'trend', samples: acks },
    ws_failed: { kind: 'rate', passes: failedSessions, total: sessions },
    // k6's check: the connection opened and the subscription was acknowledged.
    checks: { kind: 'rate', passes: sessions - failedSessions, total: sessions },
    ws_sessions: { kind: 'counter', count: sessions - failedSessions, seconds: took },
    ws_events: { kind: 'counter', count: events, seconds: took },
  };
};

/** People in the web UI of a cluster that builds: load/busy/mix.ts. */
const busy: Runner = (spec, sc, base) => busyMix(sc, base, spec.headers);

/** The five reads at ten million builds (load/generate/fleet.sql's data): load/fleet/reads.ts. */
const fleet_reads: Runner = (spec, sc, base) => fleetReads(sc, base, spec.headers);

/** Forces at a constant rate, each to its build's start, on the fleet: load/fleet/forces.ts. */
const fleet_forces: Runner = (spec, sc, base) => fleetForces(sc, [base], spec.headers);

const RUNNERS: Record<string, Runner> = {
  collections,
  log_tail: logTail,
  ws_fanout: wsFanout,
  busy,
  fleet_reads,
  fleet_forces,
};
// The scenarios that name no generated build or log: they find their own through the API.
const NO_IDS = new Set(['ws_fanout', 'busy', 'fleet_reads', 'fleet_forces']);
// The scenarios that need a set-up of their own (builds running; the fleet data; a fleet that
// builds what it is forced): only when named.
const ONLY_NAMED = new Set(['busy', 'fleet_reads', 'fleet_forces']);

function describe(name: string, m: Metric): string {
  if (m.kind === 'trend') {
    if (m.samples.length === 0) return `${name}: no samples`;
    const s = [...m.samples].sort((a, b) => a - b);
    const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]?.toFixed(1);
    return `${name}: n=${s.length} p50=${at(50)} p95=${at(95)} p99=${at(99)} max=${s[s.length - 1]?.toFixed(1)} ms`;
  }
  if (m.kind === 'rate') return `${name}: ${m.passes}/${m.total}`;
  return `${name}: ${m.count} (${(m.count / m.seconds).toFixed(1)}/s)`;
}

async function main(): Promise<number> {
  const spec = loadScenarios();
  const base = (args.base ?? process.env.BASE_URL ?? 'http://127.0.0.1:8080/api/v2').replace(/\/$/, '');
  const names =
    positionals.length > 0 ? positionals : Object.keys(spec.scenarios).filter((n) => !ONLY_NAMED.has(n));
  for (const n of names) if (!RUNNERS[n] || !spec.scenarios[n]) throw new Error(`no scenario "${n}"`);
  const ids = names.every((n) => NO_IDS.has(n)) ? { build: 0, log: 0 } : await resolveIds(base, spec.headers);
  console.log(`BASE_URL ${base}; build ${ids.build}, log ${ids.log}`);
  const report: Record<string, { metrics: Record<string, string>; verdicts: Verdict[] }> = {};
  let failed = 0;
  for (const name of names) {
    const sc = { ...spec.scenarios[name]! };
    if (args.duration) sc.duration = args.duration;
    if (args.vus) sc.vus = Number(args.vus);
    if (args.rate) {
      sc.rate = Number(args.rate);
      if (!(sc.rate > 0)) throw new Error(`--rate ${args.rate}: not a number of forces a second`);
    }
    if (args['start-timeout']) sc.startTimeout = args['start-timeout'];
    console.log(`\n== ${name}: ${sc.rate ? `${sc.rate} iterations/s` : `${sc.vus} VUs`} for ${sc.duration}`);
    const metrics = await RUNNERS[name]!(spec, sc, base, ids);
    const verdicts = judge(sc.thresholds, metrics);
    for (const [metric, m] of Object.entries(metrics)) console.log('   ' + describe(metric, m));
    for (const v of verdicts) {
      console.log(`   ${v.ok ? 'ok  ' : 'FAIL'} ${v.metric} ${v.expression} (${+v.value.toFixed(4)})`);
      if (!v.ok) failed++;
    }
    report[name] = {
      metrics: Object.fromEntries(Object.entries(metrics).map(([k, m]) => [k, describe(k, m)])),
      verdicts,
    };
  }
  if (args.out) writeFileSync(args.out, JSON.stringify({ base, ids, report }, null, 2) + '\n');
  console.log(failed ? `\n${failed} threshold(s) failed` : '\nall thresholds passed');
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`load: ${(err as Error).message}`);
    process.exit(2);
  },
);
