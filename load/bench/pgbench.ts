// The "best SQL" baseline: for each endpoint of load/scenarios.json, the hand-written SQL of
// load/bench/sql/ that answers it, run alone by pgbench on the same database.
//
//   node --import tsx load/bench/pgbench.ts --db postgresql://... [--duration 10]
//        [--connections 1,8] [--only name,name] [--label bench] [--out FILE]
//
// A list endpoint runs three ways (pgbench -D total=...): 0 the page alone, 1 the page plus
// the one-row lookup of a counter that triggers keep (load_bench.counts stands in for it:
// load/bench/sql/counts.sql), 2 the page plus an exact count(*). Single entities run once.
// pgbench: -n (no vacuum), -M prepared (the best a client can do), -j = -c (one thread per
// client), -T duration. tps counts whole scripts: a page and its total are one transaction.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fill, loadScenarios } from '../scenario.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '1,8' },
    only: { type: 'string' },
    label: { type: 'string', default: 'pgbench' },
    out: { type: 'string' },
  },
});
const db = args.db ?? process.env.DATABASE_URL;
if (!db) throw new Error('--db postgresql://... (or DATABASE_URL) is required');
const levels = args.connections!.split(',').map(Number);

/**
 * endpoint name -> its SQL files, and whether it is a list (three total variants). A file that
 * reads a table of ours (flotilla.*) runs only where that table exists (see NEEDS).
 */
const SQL: Record<string, { files: string[]; list: boolean }> = {
  'changes-newest': { files: ['changes.sql'], list: true },
  'changes-default': { files: ['changes.sql'], list: true },
  'builds-newest': { files: ['builds.sql'], list: true },
  'builder-builds': { files: ['builder_builds.sql'], list: true },
  'builds-builder-complete': { files: ['builds_builder_complete.sql'], list: true },
  'buildrequests-incomplete': { files: ['buildrequests_incomplete.sql'], list: true },
  'buildrequests-unclaimed': {
    files: [
      'buildrequests_unclaimed.sql',
      'buildrequests_unclaimed_pending.sql',
      'buildrequests_unclaimed_set.sql',
    ],
    list: true,
  },
  'buildsets-newest': { files: ['buildsets.sql'], list: true },
  'build-properties': { files: ['build_properties.sql'], list: false },
  'build-steps': { files: ['build_steps.sql'], list: false },
  'log-contents': { files: ['log_contents.sql'], list: false },
  'log-raw': { files: ['log_raw.sql'], list: false },
};
const TOTAL = ['page only', 'page + counter row', 'page + count(*)'];
const NEEDS: Record<string, string> = {
  'buildrequests_unclaimed_set.sql': 'flotilla.unclaimed_complete_buildrequests',
};

function psqlValue(sql: string): string {
  return execFileSync('psql', ['-X', '-At', '-c', sql, db!], { encoding: 'utf8' }).trim();
}

function ids(): { build: number; log: number } {
  const q = (sql: string) => Number(psqlValue(sql));
  return {
    build: Number(process.env.BUILD_ID) || q('SELECT max(id) FROM builds'),
    log: Number(process.env.LOG_ID) || q("SELECT min(id) FROM logs WHERE slug = 'huge'"),
  };
}

interface Row {
  endpoint: string;
  path: string;
  sql: string;
  total: string;
  clients: number;
  tps: number;
  latencyMs: number;
  command: string;
  /** the machine's 1-minute load average before the run: other work on it shows here */
  load1: number;
}

const spec = loadScenarios();
const only = args.only?.split(',');
const found = ids();
const rows: Row[] = [];
for (const e of spec.endpoints.filter((x) => !only || only.includes(x.name))) {
  const plan = SQL[e.name];
  if (!plan)
    throw new Error(`no SQL baseline for endpoint ${e.name}: add it to SQL in load/bench/pgbench.ts`);
  for (const file of plan.files) {
    const table = NEEDS[file];
    if (table && !psqlValue(`SELECT to_regclass('${table}') IS NOT NULL`).startsWith('t')) {
      console.error(`${e.name} ${file}: skipped, this database has no ${table}`);
      continue;
    }
    for (const total of plan.list ? [0, 1, 2] : [0]) {
      for (const clients of levels) {
        const script = `load/bench/sql/${file}`;
        const pgArgs = [
          '-n',
          '-M',
          'prepared',
          '-T',
          args.duration!,
          '-c',
          String(clients),
          '-j',
          String(clients),
          '-f',
          script,
          '-D',
          `total=${total}`,
          '-D',
          `build=${found.build}`,
          '-D',
          `log=${found.log}`,
        ];
        const load1 = loadavg()[0]!;
        const out = execFileSync('pgbench', [...pgArgs, db], {
          encoding: 'utf8',
          cwd: fileURLToPath(new URL('../..', import.meta.url)),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const tps = Number(/^tps = ([\d.]+)/m.exec(out)?.[1]);
        const latencyMs = Number(/^latency average = ([\d.]+) ms/m.exec(out)?.[1]);
        const row: Row = {
          endpoint: e.name,
          path: fill(e.path, found),
          sql: file,
          total: plan.list ? TOTAL[total]! : 'single entity',
          clients,
          tps,
          latencyMs,
          command: `pgbench ${pgArgs.join(' ')} $DATABASE_URL`,
          load1,
        };
        rows.push(row);
        console.error(`${e.name} ${file} ${row.total} c=${clients}: ${tps.toFixed(1)} tps, ${latencyMs} ms`);
      }
    }
  }
}

const table = [
  '| endpoint | SQL | total | c | tps | latency avg ms | load avg |',
  '|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| \`${r.path}\` | ${r.sql} | ${r.total} | ${r.clients} | ${r.tps.toFixed(1)} | ${r.latencyMs.toFixed(3)} | ${r.load1.toFixed(1)} |`,
  ),
].join('\n');
console.log(`### ${args.label}: best SQL by pgbench (build ${found.build}, log ${found.log})\n\n${table}\n`);
if (args.out) {
  writeFileSync(
    args.out,
    JSON.stringify({ label: args.label, ids: found, at: new Date().toISOString(), rows }, null, 2) + '\n',
  );
}
