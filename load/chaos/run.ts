// The fault suite's runner: each scenario on a fresh cluster of real processes, under GET
// load, with the checker's verdict as one row of a markdown table (load/results/faults.md's).
//
//   npx tsx load/chaos/run.ts                    # every scenario, the issue's sizes
//   ONLY=master-freeze,postgres-restart npx tsx load/chaos/run.ts
//
// Environment (defaults: the cluster the issue tortured): ONLY (scenario names), BUILDS (one
// per worker, see below), LINES (200000 per build), BATCH (2000 lines), PAUSE (0.3 s between
// batches), EXPIRY (15 s), LOAD (100 GET/s per API; 0 for none), APIS (2), MASTERS (2),
// WORKERS (4), MAX_BUILDS (5 per worker, of which one build of the chaos builder at a time),
// BASE_PORT (26000), SETTLE (600 s to
// wait for every request), WS (/ws clients following builds and logs, ws-watch.ts: 0),
// DIR (.data/chaos). Each scenario's state, logs and result.json
// stay in DIR/<scenario>; the results also go to load/chaos/results/<scenario>.json.
// FLOTILLA_REV runs the services of another commit (a snapshot, as load/bench does), for
// example `FLOTILLA_REV=main` to see a failure before its fix.
// Needs root (PostgreSQL runs as the postgres OS user).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stuckTotal } from './checker.js';
import { runScenario, SCENARIOS, type ScenarioResult } from './scenarios.js';
import { ROOT } from './stack.js';

const env = process.env;
const num = (name: string, dflt: number) => (env[name] ? Number(env[name]) : dflt);
const only = env.ONLY ? env.ONLY.split(',') : null;
const unknown = only?.filter((n) => !SCENARIOS.some((s) => s.name === n)) ?? [];
if (unknown.length) {
  console.error(
    `unknown scenarios: ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`,
  );
  process.exit(2);
}
// Absolute: pg_up walks the folder's parents up to /.
const dir = env.DIR ? resolve(env.DIR) : join(ROOT, '.data/chaos');
const out = join(ROOT, 'load/chaos/results');
const src = env.FLOTILLA_REV
  ? execFileSync(join(ROOT, 'load/bench/cluster.sh'), ['src', env.FLOTILLA_REV], { encoding: 'utf8' }).trim()
  : undefined;
mkdirSync(out, { recursive: true });

function row(r: ScenarioResult): string {
  const c = r.check;
  const failed = c.notSuccess.length + c.incomplete;
  return `| ${r.fault} | ${c.lostLines} | ${c.duplicates.length} | ${stuckTotal(c)} | ${r.traffic.server} | ${
    r.recoverSeconds === null ? 'never' : `${r.recoverSeconds.toFixed(1)} s`
  } | ${failed} | ${r.traffic.unavailable} | ${c.orphans} |`;
}

console.log(
  '| fault | lost lines | duplicate executions | stuck | 5xx under load | time to recover | requests not SUCCESS | 503 + Retry-After | commands left running |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const sc of SCENARIOS) {
  if (only && !only.includes(sc.name)) continue;
  console.error(`# ${sc.name}: ${sc.fault}`);
  const r = await runScenario(sc, {
    dir: join(dir, sc.name),
    // One build per worker: a worker runs one build of a builder at a time (the chaos cluster
    // has one builder), so more builds than workers queue, and the fault, which waits until
    // every build is a quarter through, would come when the first round had ended and some
    // workers were idle. With one each, every worker is mid-build when the fault comes.
    builds: num('BUILDS', num('WORKERS', 4)),
    job: { lines: num('LINES', 200_000), batch: num('BATCH', 2000), pause: num('PAUSE', 0.3) },
    expirySeconds: num('EXPIRY', 15),
    load: num('LOAD', 100),
    apis: num('APIS', 2),
    masters: num('MASTERS', 2),
    workers: num('WORKERS', 4),
    maxBuilds: num('MAX_BUILDS', 5),
    basePort: num('BASE_PORT', 26000),
    settleSeconds: num('SETTLE', 600),
    wsClients: num('WS', 0),
    fixed: true,
    ...(src ? { src } : {}),
    log: (l) => console.error(l),
  });
  writeFileSync(
    join(out, `${sc.name}${env.FLOTILLA_REV ? `.${env.FLOTILLA_REV}` : ''}.json`),
    `${JSON.stringify(r, null, 2)}\n`,
  );
  console.error(
    `  requests ${r.check.requests}, builds ${JSON.stringify(r.check.results)}, GETs ${r.traffic.sent}` +
      (r.check.badLogs.length ? `, bad logs ${JSON.stringify(r.check.badLogs.slice(0, 5))}` : '') +
      (r.check.duplicates.length ? `, overlaps ${JSON.stringify(r.check.duplicates.slice(0, 5))}` : '') +
      (r.check.endedThenRerun.length
        ? `, ran to their end and again ${JSON.stringify(r.check.endedThenRerun)}`
        : '') +
      (Object.keys(r.extra).length ? `, ${JSON.stringify(r.extra)}` : ''),
  );
  if (r.ws) {
    const { clients: _, ...ws } = r.ws;
    console.error(`  /ws clients: ${JSON.stringify(ws)}`);
  }
  if (r.jobs) console.error(`  compress-log jobs: ${JSON.stringify(r.jobs)}`);
  console.log(row(r));
}
