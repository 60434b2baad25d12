// Every page of a web UI, measured in Debian's Chromium through the DevTools protocol (issue
// 34 §3): the REST requests a page makes and the bytes they and the page's own files
// transfer until its first render is complete, the time that takes, and then the CPU the
// page's main thread uses while builds run. The same hash routes serve Flotilla's UI and
// Buildbot's (`#/builders/1`, `#/waterfall`, ...), so one script measures both: give it the
// UI's URL.
//
//   node --import tsx load/bench/web/measure.ts URL [--label NAME] [--out FILE.json]
//        [--busy SCHEDULER:BUILDER] [--builds 20] [--cpu-seconds 10] [--pages home,build]
//
// What is measured, per page, each in a new browser context (nothing cached):
// - first render complete: from the navigation's start to the end of the last response the
//   page asked for before it went quiet (no request in flight for QUIET_MS), then one frame
//   so that what those responses made is painted. A page that never goes quiet (one that
//   polls) is cut at LIMIT_MS and marked.
// - requests: API requests (`/api/v2/`) until then; bytes: every response's encoded length
//   (the page, its script and style, the API's answers) until then.
// - CPU (with --busy): with `--builds` builds kept running by the force scheduler SCHEDULER on
//   BUILDER (load/busy/builds.ts), the page is left open CPU_SETTLE_MS, then the main
//   thread's task time (Performance.getMetrics TaskDuration) over --cpu-seconds, as a share of
//   one core; and the API requests it made in that window.
import { writeFileSync } from 'node:fs';
import type { BrowserContext, CDPSession } from 'playwright-core';
import { launchBrowser } from '../../../test/web/browser.js';
import { BuildLoad } from '../../busy/builds.js';

const QUIET_MS = 600;
const LIMIT_MS = 30_000;
const CPU_SETTLE_MS = 3_000;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
}
const base = process.argv[2]?.replace(/\/?$/, '/') ?? '';
if (!base.startsWith('http')) {
  console.error('usage: measure.ts URL [--label NAME] [--out FILE.json] [--busy SCHEDULER:BUILDER]');
  process.exit(2);
}
const label = arg('label', new URL(base).host);
const out = arg('out', '');
const busy = arg('busy', '');
const builds = Number(arg('builds', '20'));
const cpuSeconds = Number(arg('cpu-seconds', '10'));
// Only these pages (by the names of the table), to measure one again without the others.
const only = arg('pages', '').split(',').filter(Boolean);

async function api(path: string): Promise<any> {
  const res = await fetch(`${base}api/v2/${path}`, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return res.json();
}

/** The pages, by their hash routes, with ids read from the API (the newest of each). */
async function pages(): Promise<[string, string][]> {
  const build = (await api('builds?order=-buildid&limit=1&complete=true')).builds[0];
  const step = (await api(`builds/${build.buildid}/steps?limit=1&order=number`)).steps[0];
  const log = step ? (await api(`steps/${step.stepid}/logs?limit=1`)).logs[0] : null;
  const request = (await api('buildrequests?order=-buildrequestid&limit=1')).buildrequests[0];
  const change = (await api('changes?order=-changeid&limit=1')).changes[0];
  const worker = (await api('workers?limit=1&order=workerid')).workers[0];
  const b = `/builders/${build.builderid}`;
  const list: [string, string | null][] = [
    ['home', '/'],
    ['builders', '/builders'],
    ['builder', b],
    ['build', `${b}/builds/${build.number}`],
    ['log', log ? `${b}/builds/${build.number}/steps/${step.number}/logs/${log.slug}` : null],
    ['waterfall', '/waterfall'],
    ['grid', '/grid'],
    ['console', '/console'],
    ['changes', '/changes'],
    ['change', change ? `/changes/${change.changeid}` : null],
    ['workers', '/workers'],
    ['worker', worker ? `/workers/${worker.workerid}` : null],
    ['build requests', '/buildrequests'],
    ['build request', request ? `/buildrequests/${request.buildrequestid}` : null],
    ['schedulers', '/schedulers'],
    ['masters', '/masters'],
    ['change sources', '/changesources'],
    ['about', '/about'],
    ['settings', '/settings'],
  ];
  return list.filter(
    (p): p is [string, string] => p[1] !== null && (only.length === 0 || only.includes(p[0])),
  );
}

interface Traffic {
  inFlight: Set<string>;
  started: number;
  lastEnd: number;
  lastChange: number;
  apiRequests: number;
  bytes: number;
}

/** Counts the page's requests and bytes from the DevTools protocol's Network events. */
function watch(cdp: CDPSession): Traffic {
  const t: Traffic = { inFlight: new Set(), started: 0, lastEnd: 0, lastChange: 0, apiRequests: 0, bytes: 0 };
  cdp.on('Network.requestWillBeSent', (e) => {
    if (t.started === 0) t.started = e.timestamp;
    if (e.request.url.startsWith('ws')) return;
    t.inFlight.add(e.requestId);
    t.lastChange = Date.now();
    if (new URL(e.request.url).pathname.includes('/api/v2/')) t.apiRequests++;
  });
  const done = (e: { requestId: string; timestamp: number; encodedDataLength?: number }) => {
    if (!t.inFlight.delete(e.requestId)) return;
    t.bytes += e.encodedDataLength ?? 0;
    t.lastEnd = Math.max(t.lastEnd, e.timestamp);
    t.lastChange = Date.now();
  };
  cdp.on('Network.loadingFinished', done);
  cdp.on('Network.loadingFailed', done);
  return t;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface FirstRender {
  ms: number;
  apiRequests: number;
  bytes: number;
  quiet: boolean;
}

/** A new page in `ctx`, its traffic watched, nothing served from the cache. */
async function open(ctx: BrowserContext) {
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  return { page, cdp, t: watch(cdp) };
}

async function firstRender(ctx: BrowserContext, route: string): Promise<FirstRender> {
  const { page, t } = await open(ctx);
  const begun = Date.now();
  await page.goto(`${base}#${route}`);
  let quiet = false;
  while (Date.now() - begun < LIMIT_MS) {
    await sleep(50);
    if (t.inFlight.size === 0 && Date.now() - t.lastChange >= QUIET_MS) {
      quiet = true;
      break;
    }
  }
  // One frame after the last response: what it brought is laid out and painted.
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))');
  const result = {
    ms: Math.round((t.lastEnd - t.started) * 1000),
    apiRequests: t.apiRequests,
    bytes: t.bytes,
    quiet,
  };
  await page.close();
  return result;
}

interface Cpu {
  corePercent: number;
  apiRequests: number;
}

async function cpuWhileBusy(ctx: BrowserContext, route: string): Promise<Cpu> {
  const { page, cdp, t } = await open(ctx);
  await cdp.send('Performance.enable');
  await page.goto(`${base}#${route}`);
  await sleep(CPU_SETTLE_MS);
  const task = async () =>
    ((await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')?.value ??
      0) as number;
  const before = await task();
  const requestsBefore = t.apiRequests;
  const from = Date.now();
  await sleep(cpuSeconds * 1000);
  const used = (await task()) - before;
  const wall = (Date.now() - from) / 1000;
  const result = { corePercent: (100 * used) / wall, apiRequests: t.apiRequests - requestsBefore };
  await page.close();
  return result;
}

const browser = await launchBrowser();
const rows: { page: string; route: string; first: FirstRender; cpu?: Cpu }[] = [];
try {
  const list = await pages();
  for (const [name, route] of list) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    rows.push({ page: name, route, first: await firstRender(ctx, route) });
    await ctx.close();
    console.error(`${name}: ${JSON.stringify(rows.at(-1)!.first)}`);
  }
  if (busy) {
    const [scheduler, builder] = busy.split(':');
    const load = new BuildLoad(`${base}api/v2`, scheduler!, builder!, builds);
    await load.start();
    try {
      await load.fullyRunning();
      await load.mark();
      for (const row of rows) {
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        row.cpu = await cpuWhileBusy(ctx, row.route);
        await ctx.close();
        console.error(`${row.page} while busy: ${JSON.stringify(row.cpu)}`);
      }
      console.error(`build load: ${JSON.stringify(await load.report())}`);
    } finally {
      await load.stop();
    }
  }
} finally {
  await browser.close();
}

const kb = (n: number) => (n / 1024).toFixed(1);
const lines = [
  `| page (${label}) | API requests | KB transferred | first render complete, ms | CPU while ${builds} builds run, % of a core | API requests in ${cpuSeconds} s then |`,
  '|---|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.page} | ${r.first.apiRequests} | ${kb(r.first.bytes)} | ${r.first.ms}${r.first.quiet ? '' : ' (never quiet)'} | ${r.cpu ? r.cpu.corePercent.toFixed(1) : '–'} | ${r.cpu ? r.cpu.apiRequests : '–'} |`,
  ),
];
console.log(lines.join('\n'));
if (out) writeFileSync(out, `${JSON.stringify({ label, base, builds, cpuSeconds, rows }, null, 1)}\n`);
