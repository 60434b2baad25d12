// The issue's benchmark over HTTP: every endpoint of load/scenarios.json, alone, at each
// concurrency, against one server (Flotilla's API or a real Buildbot 3.7 on the same
// database). req/s, p50 and p99; for the raw log download, the server's peak RSS.
//
//   node --import tsx load/bench/http.ts --base http://127.0.0.1:8030/api/v2 --label buildbot \
//        [--pid PID] [--duration 10] [--connections 1,8] [--timeout 60] [--warmup 2] [--only name,name]
//        [--out FILE] [--engine wrk|autocannon]
//
// The load generator is wrk (load/wrk.ts) unless --engine autocannon: both are closed loops
// of the given connections, but wrk costs the machine far less per request.
// Before an endpoint is measured, it is warmed up for --warmup seconds at the highest
// concurrency (JIT, pools, caches), unless its first request took 500 ms or more.
// Each endpoint is first asked once (its status and latency are recorded). An endpoint whose
// single request takes longer than --timeout is recorded as ">Ns" and not run. A slow one
// runs longer than --duration: for three rounds of requests on every connection (at the
// first request's latency times the concurrency, up to 120 s), so that requests still in
// flight when autocannon stops (they are dropped, not counted) do not leave it with none.
// Peak RSS (with --pid): VmRSS of that process sampled every 20 ms during the raw-log runs,
// and its VmHWM (the kernel's high-water mark over the process's life) after them.
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { hammer } from '../measure.js';
import { fill, loadScenarios, percentile, resolveIds } from '../scenario.js';
import { hammerWrk } from '../wrk.js';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    label: { type: 'string', default: 'server' },
    pid: { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '1,8' },
    timeout: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '2' },
    only: { type: 'string' },
    out: { type: 'string' },
    engine: { type: 'string', default: 'wrk' },
  },
});
const engine = args.engine === 'autocannon' ? hammer : hammerWrk;
const base = (args.base ?? process.env.BASE_URL ?? '').replace(/\/$/, '');
if (!base) throw new Error('--base http://host:port/api/v2 (or BASE_URL) is required');
const duration = Number(args.duration);
const timeout = Number(args.timeout);
const warmup = Number(args.warmup);
const levels = args.connections!.split(',').map(Number);
const pid = args.pid ? Number(args.pid) : undefined;

const spec = loadScenarios();
const only = args.only?.split(',');
const endpoints = spec.endpoints.filter((e) => !only || only.includes(e.name));
const ids = await resolveIds(base, spec.headers);

function procStatus(field: 'VmRSS' | 'VmHWM'): number | undefined {
  if (!pid) return undefined;
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface Row {
  endpoint: string;
  path: string;
  connections: number;
  status?: number;
  firstRequestMs?: number;
  skipped?: string;
  rps?: number;
  p50?: number;
  p99?: number;
  responses?: number;
  failed?: number;
  seconds?: number;
  rssBeforeBytes?: number;
  rssPeakBytes?: number;
  hwmAfterBytes?: number;
  /** the machine's 1-minute load average before the run: other work on it shows here */
  load1?: number;
}

const rows: Row[] = [];
for (const e of endpoints) {
  const path = fill(e.path, ids);
  const t0 = performance.now();
  let status: number | undefined;
  let skipped: string | undefined;
  try {
    const res = await fetch(base + path, {
      headers: spec.headers,
      signal: AbortSignal.timeout(timeout * 1000),
    });
    await res.arrayBuffer();
    status = res.status;
  } catch (err) {
    skipped = (err as Error).name === 'TimeoutError' ? `>${timeout}s` : String(err);
  }
  const firstMs = performance.now() - t0;
  // warm-up (JIT, connection pools, caches): 2 s at the highest concurrency, where it is cheap
  if (!skipped && warmup > 0 && firstMs < 500) {
    await engine({
      base,
      paths: [path],
      connections: Math.max(...levels),
      durationSeconds: warmup,
      timeoutSeconds: timeout,
      headers: spec.headers,
    });
  }
  for (const connections of levels) {
    const runSeconds = Math.max(duration, Math.min(120, Math.ceil((3 * firstMs * connections) / 1000)));
    const row: Row = { endpoint: e.name, path, connections, status, firstRequestMs: Math.round(firstMs) };
    rows.push(row);
    if (skipped) {
      row.skipped = skipped;
      console.error(`${e.name} c=${connections}: skipped (${skipped})`);
      continue;
    }
    let peak = 0;
    const sampler =
      e.heavy && pid ? setInterval(() => (peak = Math.max(peak, procStatus('VmRSS') ?? 0)), 20) : undefined;
    row.rssBeforeBytes = e.heavy ? procStatus('VmRSS') : undefined;
    row.load1 = loadavg()[0];
    const run = await engine({
      base,
      paths: [path],
      connections,
      durationSeconds: runSeconds,
      timeoutSeconds: timeout,
      headers: spec.headers,
    });
    if (sampler) {
      clearInterval(sampler);
      row.rssPeakBytes = peak;
      row.hwmAfterBytes = procStatus('VmHWM');
    }
    Object.assign(row, {
      rps: run.rps,
      p50: run.p50 ?? percentile(run.latencies, 50),
      p99: run.p99 ?? percentile(run.latencies, 99),
      responses: run.responses,
      failed: run.failed,
      seconds: run.seconds,
    });
    if (runSeconds !== duration) console.error(`${e.name} c=${connections}: slow, ran ${runSeconds} s`);
    console.error(
      `${e.name} c=${connections}: ${run.rps.toFixed(1)} req/s, p50 ${row.p50?.toFixed(1)} ms, p99 ${row.p99?.toFixed(1)} ms` +
        (run.failed ? `, ${run.failed} failed ${JSON.stringify(run.statusCodes)}` : ''),
    );
  }
}

const mb = (b?: number) => (b === undefined ? '' : (b / 1048576).toFixed(0) + ' MiB');
const fmt = (n?: number, d = 1) => (n === undefined || Number.isNaN(n) ? '' : n.toFixed(d));
const table = [
  `| endpoint | c | req/s | p50 ms | p99 ms | responses | failed | status | load avg | peak RSS (VmRSS sampled / VmHWM) |`,
  `|---|---|---|---|---|---|---|---|---|---|`,
  ...rows.map((r) =>
    r.skipped
      ? `| \`${r.path}\` | ${r.connections} | ${r.skipped} | | | 0 | | ${r.status ?? ''} | | |`
      : `| \`${r.path}\` | ${r.connections} | ${fmt(r.rps)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.responses} | ${r.failed} | ${r.status} | ${fmt(r.load1)} | ${
          r.rssPeakBytes !== undefined
            ? `${mb(r.rssPeakBytes)} / ${mb(r.hwmAfterBytes)} (before: ${mb(r.rssBeforeBytes)})`
            : ''
        } |`,
  ),
].join('\n');
const note = process.env.BENCH_NOTE ?? '';
console.log(
  `### ${args.label} (${base}; build ${ids.build}, log ${ids.log}; ${duration} s per run; ${args.engine})\n\n${note ? `${note}\n\n` : ''}${table}\n`,
);
if (args.out) {
  writeFileSync(
    args.out,
    JSON.stringify(
      {
        label: args.label,
        note,
        base,
        ids,
        duration,
        engine: args.engine,
        at: new Date().toISOString(),
        rows,
      },
      null,
      2,
    ) + '\n',
  );
}
