// The three targets, from the result files of load/bench/run.sh:
//
//   node --import tsx load/bench/report.ts [--dir load/results] [--big bench] [--small bench_small]
//
// Reads pgbench-<db>.json, flotilla-<db>.json and buildbot-<db>.json (whichever exist) and
// prints markdown:
//   1. Flotilla (with the page cache as configured by default; off; and with every kept page
//      checked) against the best SQL on the big database: the factor best-SQL tps / Flotilla
//      req/s, against the page + count(*) script and against the page + counter-row script
//      (target 1: at most 2 against the one that matches how the API gets its total);
//   2. each server's cost on the big database against the small one: req/s small / req/s big
//      at concurrency 1, where a request's cost is the inverse of the rate (target 2: <= 1.5);
//   3. Flotilla against Buildbot 3.7 on the big database (target 3: > 20).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadScenarios } from '../scenario.js';

const { values: args } = parseArgs({
  options: {
    dir: { type: 'string', default: 'load/results' },
    big: { type: 'string', default: 'bench' },
    small: { type: 'string', default: 'bench_small' },
  },
});

interface HttpRow {
  endpoint: string;
  path: string;
  connections: number;
  rps?: number;
  p50?: number;
  p99?: number;
  skipped?: string;
  failed?: number;
}
interface SqlRow {
  endpoint: string;
  sql: string;
  total: string;
  clients: number;
  tps: number;
}

/**
 * The rows of <name>.json, overlaid by those of partial runs (<name>.<endpoints>.json, made
 * with ONLY=...), the newest last: a re-measured endpoint replaces its earlier figures.
 */
function read<T extends { endpoint: string }>(name: string): T[] | undefined {
  if (!existsSync(args.dir!)) return undefined;
  const files = readdirSync(args.dir!)
    .filter((f) => f === `${name}.json` || (f.startsWith(`${name}.`) && f.endsWith('.json')))
    .map((f) => JSON.parse(readFileSync(join(args.dir!, f), 'utf8')) as { at: string; rows: T[] })
    .sort((a, b) => a.at.localeCompare(b.at));
  if (files.length === 0) return undefined;
  let rows: T[] = [];
  for (const f of files) {
    const redone = new Set(f.rows.map((r) => r.endpoint));
    rows = [...rows.filter((r) => !redone.has(r.endpoint)), ...f.rows];
  }
  return rows;
}

const fx = (n: number | undefined, d = 1) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(d));
const rate = (r?: HttpRow) => (r?.skipped ? r.skipped : fx(r?.rps));
const find = (rows: HttpRow[] | undefined, e: string, c: number) =>
  rows?.find((r) => r.endpoint === e && r.connections === c);
// The best SQL for an endpoint and total variant: the fastest of its exact scripts (the
// "pending" variant of the unclaimed requests is exact only where complete implies claimed).
const NOT_EXACT = new Set(['buildrequests_unclaimed_pending.sql']);
const sqlOf = (rows: SqlRow[] | undefined, e: string, c: number, total: string) =>
  rows
    ?.filter(
      (r) =>
        r.endpoint === e &&
        r.clients === c &&
        !NOT_EXACT.has(r.sql) &&
        (r.total === total || r.total === 'single entity'),
    )
    .sort((a, b) => b.tps - a.tps)[0];

const flotilla = read<HttpRow>(`flotilla-${args.big}`);
const flotillaSmall = read<HttpRow>(`flotilla-${args.small}`);
const flotillaOff = read<HttpRow>(`flotilla-nocache-${args.big}`);
const flotillaOffSmall = read<HttpRow>(`flotilla-nocache-${args.small}`);
const flotillaChecked = read<HttpRow>(`flotilla-checked-${args.big}`);
const buildbot = read<HttpRow>(`buildbot-${args.big}`);
const buildbotSmall = read<HttpRow>(`buildbot-${args.small}`);
const pg = read<SqlRow>(`pgbench-${args.big}`);
const base = flotilla ?? buildbot ?? [];
const order = loadScenarios().endpoints.map((e) => e.name);
const keys = base
  .map((r) => [r.endpoint, r.connections, r.path] as const)
  .sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]) || a[1] - b[1]);
const out: string[] = [];

out.push(`#### Target 1: Flotilla against the best SQL (${args.big})`, '');
out.push(
  '| endpoint | c | Flotilla req/s | SQL tps, page + count(*) | factor | SQL tps, page + counter row | factor | Flotilla, page cache off | factor | Flotilla, every kept page checked | factor |',
);
out.push('|---|---|---|---|---|---|---|---|---|---|---|');
for (const [e, c, path] of keys) {
  const f = find(flotilla, e, c);
  const off = find(flotillaOff, e, c);
  const checked = find(flotillaChecked, e, c);
  const count = sqlOf(pg, e, c, 'page + count(*)');
  const counter = sqlOf(pg, e, c, 'page + counter row');
  const factor = (s: SqlRow | undefined, r: HttpRow | undefined) =>
    s && r?.rps ? fx(s.tps / r.rps, 2) : '–';
  const single = count?.total === 'single entity';
  // Without the cache, against the SQL that gets its total the way the API does.
  const best = single ? count : counter;
  out.push(
    `| \`${path}\` | ${c} | ${rate(f)} | ${fx(count?.tps)} | ${factor(count, f)} | ${single ? '(single entity)' : fx(counter?.tps)} | ${single ? '' : factor(counter, f)} | ${rate(off)} | ${factor(best, off)} | ${rate(checked)} | ${factor(best, checked)} |`,
  );
}

out.push(
  '',
  `#### Target 2: cost on ${args.big} against ${args.small} (req/s ${args.small} / req/s ${args.big})`,
  '',
);
out.push(
  `| endpoint | c | Flotilla ${args.small} | Flotilla ${args.big} | factor | page cache off: ${args.small} | ${args.big} | factor | Buildbot ${args.small} | Buildbot ${args.big} | factor |`,
);
out.push('|---|---|---|---|---|---|---|---|---|---|---|');
for (const [e, c, path] of keys) {
  const fs = find(flotillaSmall, e, c);
  const fb = find(flotilla, e, c);
  const os = find(flotillaOffSmall, e, c);
  const ob = find(flotillaOff, e, c);
  const bs = find(buildbotSmall, e, c);
  const bb = find(buildbot, e, c);
  const factor = (s?: HttpRow, b?: HttpRow) => (s?.rps && b?.rps ? fx(s.rps / b.rps, 2) : '–');
  out.push(
    `| \`${path}\` | ${c} | ${rate(fs)} | ${rate(fb)} | ${factor(fs, fb)} | ${rate(os)} | ${rate(ob)} | ${factor(os, ob)} | ${rate(bs)} | ${rate(bb)} | ${factor(bs, bb)} |`,
  );
}

out.push('', `#### Target 3: Flotilla against Buildbot 3.7 (${args.big})`, '');
out.push(
  '| endpoint | c | Flotilla req/s | p50 ms | p99 ms | Buildbot req/s | p50 ms | p99 ms | Flotilla / Buildbot |',
);
out.push('|---|---|---|---|---|---|---|---|---|');
for (const [e, c, path] of keys) {
  const f = find(flotilla, e, c);
  const b = find(buildbot, e, c);
  out.push(
    `| \`${path}\` | ${c} | ${rate(f)} | ${fx(f?.p50)} | ${fx(f?.p99)} | ${rate(b)} | ${fx(b?.p50)} | ${fx(b?.p99)} | ${
      f?.rps && b?.rps ? fx(f.rps / b.rps, 1) : '–'
    } |`,
  );
}
console.log(out.join('\n'));
