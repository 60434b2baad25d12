// The busy-cluster benchmark against one running server (load/busy/run.sh starts Flotilla or
// Buildbot 3.7 with its workers and calls this): the web-UI mix of scenarios.json's `busy`,
// first quiet (no build running), then while `--builds` builds run at once (load/busy/builds.ts
// keeps them running). Each phase is `load/run.ts busy` in its own process, as k6 would be.
// With `--metrics` (Flotilla's /metrics), the page cache's lookups are counted per phase.
//
//   node --import tsx load/busy/run.ts --base http://127.0.0.1:21080/api/v2 --label flotilla \
//     [--metrics http://127.0.0.1:21081/metrics] [--quiet 30s] [--busy 60s] [--vus 40] [--builds 20]
//
// Prints one markdown row per phase and writes load/results/busy-<label>.json.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sample } from '../../test/helpers/prometheus.js';
import { BuildLoad, type BuildLoadReport } from './builds.js';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    label: { type: 'string' },
    metrics: { type: 'string' },
    quiet: { type: 'string', default: '30s' },
    busy: { type: 'string', default: '60s' },
    vus: { type: 'string', default: '40' },
    builds: { type: 'string', default: '20' },
    scheduler: { type: 'string', default: 'busy' },
    builder: { type: 'string', default: 'busy' },
    workers: { type: 'string', default: '20' },
  },
});
if (!args.base || !args.label) throw new Error('usage: run.ts --base URL --label NAME [--metrics URL] ...');
const base = args.base.replace(/\/$/, '');

interface Phase {
  phase: string;
  at: string;
  loadBefore: number;
  loadAfter: number;
  reqPerSecond: number;
  requests: number;
  failed: string;
  p50: number;
  p99: number;
  pages: Record<string, string>;
  logLinesRead: number;
  thresholds: string[];
  pageCache?: { hit: number; miss: number; expired: number; hitRate: number };
  builds?: BuildLoadReport;
}

async function pageCache(): Promise<{ hit: number; miss: number; expired: number } | undefined> {
  if (!args.metrics) return undefined;
  const text = await (await fetch(args.metrics)).text();
  const n = (outcome: string) => sample(text, 'flotilla_page_cache_lookups_total', { outcome }) ?? 0;
  return { hit: n('hit'), miss: n('miss'), expired: n('expired') };
}

/** One run of load/run.ts busy, in its own process; its figures from the --out file. */
async function mix(phase: string, duration: string): Promise<Phase> {
  const out = join(tmpdir(), `busy-${process.pid}-${phase}.json`);
  const at = new Date().toISOString();
  const loadBefore = loadavg()[0]!;
  const cacheBefore = await pageCache();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'load/run.ts',
      'busy',
      '--base',
      base,
      '--duration',
      duration,
      '--vus',
      args.vus!,
      '--out',
      out,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0 && code !== 1) throw new Error(`load/run.ts busy exited ${code}`);
  const cacheAfter = await pageCache();
  const report = JSON.parse(readFileSync(out, 'utf8')).report.busy as {
    metrics: Record<string, string>;
    verdicts: { metric: string; expression: string; ok: boolean }[];
  };
  rmSync(out, { force: true });
  const m = report.metrics;
  const num = (text: string | undefined, re: RegExp) => Number(re.exec(text ?? '')?.[1] ?? Number.NaN);
  const result: Phase = {
    phase,
    at,
    loadBefore,
    loadAfter: loadavg()[0]!,
    reqPerSecond: num(m.http_reqs, /\(([\d.]+)\/s\)/),
    requests: num(m.http_reqs, /^http_reqs: (\d+)/),
    failed: m.http_req_failed?.replace(/^http_req_failed: /, '') ?? '',
    p50: num(m.http_req_duration, /p50=([\d.]+)/),
    p99: num(m.http_req_duration, /p99=([\d.]+)/),
    pages: Object.fromEntries(
      Object.entries(m)
        .filter(([k]) => k.startsWith('page_'))
        .map(([k, v]) => [k.slice(5), v.replace(/^page_\w+: /, '')]),
    ),
    logLinesRead: num(m.log_lines_read, /^log_lines_read: (\d+)/),
    thresholds: report.verdicts.map((v) => `${v.ok ? 'ok' : 'FAIL'} ${v.metric} ${v.expression}`),
  };
  if (cacheBefore && cacheAfter) {
    const d = {
      hit: cacheAfter.hit - cacheBefore.hit,
      miss: cacheAfter.miss - cacheBefore.miss,
      expired: cacheAfter.expired - cacheBefore.expired,
    };
    result.pageCache = { ...d, hitRate: d.hit / Math.max(1, d.hit + d.miss + d.expired) };
  }
  return result;
}

// Both phases with every worker connected: the quiet one too pays for their connections.
const workersBy = Date.now() + 300_000;
for (;;) {
  const res = await fetch(`${base}/workers`, { headers: { accept: 'application/json' } });
  const workers = res.ok ? ((await res.json()) as { workers: { connected_to: unknown[] }[] }).workers : [];
  const connected = workers.filter((w) => w.connected_to.length > 0).length;
  if (connected >= Number(args.workers)) break;
  if (Date.now() > workersBy)
    throw new Error(`${connected} of ${args.workers} workers connected after 300 s`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
}

const phases: Phase[] = [];
phases.push(await mix('quiet', args.quiet!));
const load = new BuildLoad(base, args.scheduler!, args.builder!, Number(args.builds));
await load.start();
try {
  console.log(`\n== waiting for ${args.builds} builds to run at once`);
  await load.fullyRunning();
  await load.mark();
  const busy = await mix('busy', args.busy!);
  busy.builds = await load.report();
  phases.push(busy);
} finally {
  await load.stop();
}

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
writeFileSync(
  `load/results/busy-${args.label}.json`,
  JSON.stringify({ label: args.label, base, commit, vus: Number(args.vus), phases }, null, 2) + '\n',
);
console.log(
  `\n| target | phase | at (UTC) | VUs | req/s | p50 ms | p99 ms | failed | page-cache hits | running builds (min-max, mean) | builds finished | log lines followed | load avg before/after |`,
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const p of phases) {
  const cache = p.pageCache
    ? `${(100 * p.pageCache.hitRate).toFixed(1)}% (${p.pageCache.hit}/${p.pageCache.hit + p.pageCache.miss + p.pageCache.expired})`
    : '-';
  const b = p.builds;
  console.log(
    `| ${args.label} | ${p.phase} | ${p.at.slice(11, 19)} | ${args.vus} | ${p.reqPerSecond.toFixed(1)} | ${p.p50} | ${p.p99} | ${p.failed} | ${cache} | ${b ? `${b.running.min}-${b.running.max}, ${b.running.mean.toFixed(1)}` : '0'} | ${b?.finished ?? 0} | ${p.logLinesRead} | ${p.loadBefore.toFixed(1)} / ${p.loadAfter.toFixed(1)} |`,
  );
}
for (const p of phases) {
  console.log(`\n${args.label}, ${p.phase}: page p50/p99 (ms, a page is its requests one after another)`);
  for (const [name, v] of Object.entries(p.pages)) console.log(`  ${name}: ${v}`);
}
