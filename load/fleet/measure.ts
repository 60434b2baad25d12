// Issue 35's reads at ten million builds on a busy cluster: called back by load/busy/run.sh
// (BUSY_MEASURE, through load/fleet/reads.sh) with the server's URL once its master and 20
// workers run. Keeps `--builds` builds running through the force scheduler (load/busy/
// builds.ts, the busy benchmark's load, the same for Flotilla and Buildbot 3.7), runs the
// fleet_reads scenario of scenarios.json (load/fleet/reads.ts) with its thresholds, and
// writes the figures, the builds that ran, and the machine's load average (other work shares
// this machine) to --out.
//
//   node --import tsx load/fleet/measure.ts URL --label NAME --out FILE.json [--builds 20]
//        [--duration 60s] [--vus 8]
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { BuildLoad } from '../busy/builds.js';
import { judge, loadScenarios, type Metric, percentile } from '../scenario.js';
import { fleetReads } from './reads.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    label: { type: 'string', default: 'flotilla' },
    out: { type: 'string' },
    builds: { type: 'string', default: '20' },
    duration: { type: 'string' },
    vus: { type: 'string' },
  },
});
const url = positionals[0];
if (!url || !args.out) {
  console.error(
    'usage: measure.ts URL --label NAME --out FILE.json [--builds 20] [--duration 60s] [--vus 8]',
  );
  process.exit(2);
}
const base = `${url.replace(/\/$/, '')}/api/v2`;
const spec = loadScenarios();
const sc = { ...spec.scenarios.fleet_reads! };
if (args.duration) sc.duration = args.duration;
if (args.vus) sc.vus = Number(args.vus);

const load = new BuildLoad(base, 'busy', 'busy', Number(args.builds));
await load.start();
let metrics: Record<string, Metric>;
let builds: Awaited<ReturnType<BuildLoad['report']>>;
const loadBefore = loadavg();
const at = new Date().toISOString();
try {
  console.log(`== waiting for ${args.builds} builds to run at once`);
  try {
    await load.fullyRunning(120_000);
  } catch (err) {
    // On a machine this loaded (other engineers' work) a build can stay in transition; the
    // reads go on, and the report says how many builds ran at once while they did.
    console.log(`== ${(err as Error).message}: measuring all the same`);
  }
  await load.mark();
  console.log(`== fleet_reads: ${sc.vus} VUs for ${sc.duration} on ${base}`);
  metrics = await fleetReads(sc, base, spec.headers);
  builds = await load.report();
} finally {
  await load.stop();
}
const loadAfter = loadavg();
const verdicts = judge(sc.thresholds, metrics);

interface Trend {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}
const trends: Record<string, Trend> = {};
const counts: Record<string, Metric> = {};
for (const [name, m] of Object.entries(metrics)) {
  if (m.kind !== 'trend') {
    counts[name] = m;
    continue;
  }
  const sorted = [...m.samples].sort((a, b) => a - b);
  const r = (p: number) => +percentile(sorted, p).toFixed(1);
  trends[name] = { n: sorted.length, p50: r(50), p95: r(95), p99: r(99), max: r(100) };
}
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
writeFileSync(
  args.out,
  `${JSON.stringify(
    {
      label: args.label,
      base,
      commit,
      at,
      vus: sc.vus,
      duration: sc.duration,
      loadBefore,
      loadAfter,
      builds,
      trends,
      counts,
      verdicts,
    },
    null,
    2,
  )}\n`,
);
console.log(`\n| read | n | p50 ms | p95 ms | p99 ms | max ms |`);
console.log('|---|---|---|---|---|---|');
for (const [name, s] of Object.entries(trends)) {
  console.log(`| ${name} | ${s.n} | ${s.p50} | ${s.p95} | ${s.p99} | ${s.max} |`);
}
console.log(`running builds: ${JSON.stringify(builds.running)}, finished ${builds.finished}`);
console.log(
  `load average before ${loadBefore.map((x) => x.toFixed(1)).join(' ')}, after ${loadAfter.map((x) => x.toFixed(1)).join(' ')}`,
);
for (const v of verdicts)
  console.log(`${v.ok ? 'ok  ' : 'FAIL'} ${v.metric} ${v.expression} (${+v.value.toFixed(1)})`);
