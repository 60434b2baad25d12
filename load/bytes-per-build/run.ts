// Bytes per build at rest (issue 33 §1): the same BUILDS builds (50) run on Flotilla and on
// Buildbot 3.7, each master with its own fresh database, and what each database grew by,
// per build and per table, after VACUUM ANALYZE and again after VACUUM FULL.
//
//   DATABASE_URL=postgresql://...  node --import tsx load/bytes-per-build/run.ts
//   (environment: BUILDS, KINDS=flotilla,buildbot; load/bytes-per-build/run.sh starts the
//   bench PostgreSQL for it)
//
// The same builds: one builder `app` of four shell steps (STEPS below: about 5,400 lines, most
// of them the kind of output a compile and a test run print), forced BUILDS times through
// each master's REST API, run by the same two buildbot-worker 3.7 processes over PB (created
// by plain `create-worker`, as a team's workers are; Flotilla's master speaks PB too), so the
// lines each master stores are the same bytes. Buildbot's database is made by Buildbot itself
// (`buildbot create-master --db`: its own schema, none of Flotilla's tables, triggers or
// indexes); Flotilla's by its migrations. Each master runs its defaults: Buildbot compresses
// chunks with gz above 4 KiB and merges a log's chunks when it finishes; Flotilla compresses
// with gz (log_compression) and merges in its compress-log job, which this waits for.
//
// Measured: pg_total_relation_size (table, indexes, TOAST) of every table of the database
// (pg_largeobject too, where Flotilla keeps artifacts), once the masters and workers are up
// and idle (after VACUUM FULL ANALYZE: the base), then after the builds (VACUUM ANALYZE: the
// space PostgreSQL holds, free space inside the tables included) and after VACUUM FULL (the
// live rows only). Per build = (after - base) / BUILDS. Prints markdown.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../../services/core/db/migrate.js';
import { type ConnectionPool, sql } from '../../services/core/db/pool.js';
import { type ApiProcess, apiProcess } from '../../test/helpers/api.js';
import { type BuildbotMaster, startBuildbotMaster } from '../../test/helpers/buildbot-master.js';
import { createBuildbotWorker, startBuildbotWorker } from '../../test/helpers/buildbot-worker.js';
import { freePort, type Running, startRedis, startService } from '../../test/helpers/processes.js';
import { waitFor } from '../../test/helpers/wait.js';
import { forceChecked } from '../force.js';
import { scratchDatabase } from '../scratch-database.js';

const BUILDS = Number(process.env.BUILDS ?? 50);
type Kind = 'flotilla' | 'buildbot';
const KINDS = (process.env.KINDS?.split(',') ?? ['flotilla', 'buildbot']) as Kind[];
const WORKERS = ['bytes1', 'bytes2'];
const base = process.env.DATABASE_URL;
if (!base) throw new Error('set DATABASE_URL');

// A build's output: a checkout's few lines, a compile's long repetitive ones, a test run's
// short ones, and a package step's hashes (which no codec shrinks much). Deterministic, so
// both masters store the same text.
const STEPS: Array<[string, string]> = [
  [
    'checkout',
    'for i in $(seq 1 40); do echo "Updating files: $((i * 100 / 40))% ($i/40) src/module_$i.c"; done',
  ],
  [
    'compile',
    'for i in $(seq 1 2000); do echo "gcc -c -O2 -g -Wall -Wextra -Iinclude -Ithird_party/include -DNDEBUG src/module_$((i % 400)).c -o build/obj/module_$i.o"; done; echo "src/module_7.c:12: warning: unused variable x" >&2',
  ],
  [
    'test',
    'for i in $(seq 1 3000); do echo "[ RUN      ] Suite$((i / 50)).case_$i"; echo "[       OK ] Suite$((i / 50)).case_$i ($((i * 7 % 1000)) ms)"; done',
  ],
  [
    'package',
    'for i in $(seq 1 300); do printf "%s  dist/part_%d.tar\\n" "$(printf %d $i | sha256sum | cut -c1-64)" $i; done',
  ],
];

interface Measured {
  /** Table name to bytes per build: after VACUUM ANALYZE, after VACUUM FULL. */
  tables: Map<string, { held: number; live: number }>;
  chunks: { rows: number; stored: number; lines: number };
  load: [number, number];
}

// Every table of the database with its indexes and TOAST, and the large objects' catalog
// (artifacts), which a per-schema listing would miss.
async function sizes(db: ConnectionPool, vacuum: 'plain' | 'full'): Promise<Map<string, number>> {
  await db.query(vacuum === 'full' ? sql`VACUUM FULL ANALYZE` : sql`VACUUM ANALYZE`);
  const rows = await db.query(sql`
    SELECT n.nspname || '.' || c.relname AS name, pg_total_relation_size(c.oid)::bigint AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'm')
      AND (n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
           OR c.relname IN ('pg_largeobject', 'pg_largeobject_metadata'))`);
  return new Map(rows.map((r) => [String(r.name), Number(r.bytes)]));
}

async function get(api: string, path: string): Promise<any> {
  const res = await fetch(api + path, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
  return res.json();
}

// Flotilla's master: its API and one master on a Redis of their own, PB for the workers.
async function startFlotilla(
  dir: string,
  url: string,
  procs: Running[],
): Promise<{ api: string; pb: number }> {
  const redis = await startRedis();
  procs.push(redis.proc);
  writeFileSync(
    join(dir, 'master.yaml'),
    `protocols: { pb: { port: 0 } }
workers:\n${WORKERS.map((w) => `  - { name: ${w}, password: pw }`).join('\n')}
builders:
  - name: app
    workers: [${WORKERS.join(', ')}]
    steps:\n${STEPS.map(([name, command]) => `      - { type: shell, name: ${name}, command: ${JSON.stringify(command)} }`).join('\n')}
force_schedulers:
  - { name: app, builders: [app] }
`,
  );
  const api: ApiProcess = await apiProcess({
    databaseUrl: url,
    redisUrl: redis.url,
    config: join(dir, 'master.yaml'),
    env: { OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' },
  });
  procs.push(api.proc);
  const pb = await freePort();
  procs.push(
    startService('master', {
      DATABASE_URL: url,
      REDIS_URL: redis.url,
      MASTER_CONFIG: join(dir, 'master.yaml'),
      MASTER_NAME: 'bytes-per-build',
      WORKER_PORT: String(await freePort()),
      PB_WORKER_PORT: String(pb),
      PROBE_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
    }),
  );
  return { api: api.base, pb };
}

async function measure(kind: Kind): Promise<Measured> {
  const loadBefore = loadavg()[0]!;
  const procs: Running[] = [];
  let buildbot: BuildbotMaster | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bytes-'));
  const scratch = await scratchDatabase(base!, `bytesbench_${kind}`);
  const { db, url } = scratch;
  try {
    let api: string;
    let pb: number;
    if (kind === 'buildbot') {
      // Buildbot's own schema, made by Buildbot, in a basedir used for nothing else.
      execFileSync('buildbot', ['create-master', '-r', `--db=${url}`, join(dir, 'create')], {
        stdio: 'ignore',
      });
      buildbot = await startBuildbotMaster('load/bytes-per-build/master.cfg', url, {
        www: true,
        env: { BB_WORKERS: WORKERS.join(','), BB_STEPS: JSON.stringify(STEPS) },
      });
      api = buildbot.api!;
      pb = buildbot.pbPort;
    } else {
      await migrate(db);
      ({ api, pb } = await startFlotilla(dir, url, procs));
    }
    for (const w of WORKERS) {
      createBuildbotWorker({ dir: join(dir, w), port: pb, name: w, password: 'pw', protocol: 'pb' });
      procs.push(startBuildbotWorker(join(dir, w)));
    }
    await waitFor('workers connected', async () => {
      const workers = (await get(api, '/workers')).workers;
      return workers.length === WORKERS.length && workers.every((w: any) => w.connected_to.length > 0);
    });
    await waitFor('the builder on its master', async () =>
      (await get(api, '/builders')).builders.some((b: any) => b.name === 'app' && b.masterids.length > 0),
    );
    const before = await sizes(db, 'full');
    for (let i = 0; i < BUILDS; i++) await forceChecked(api, 'app', 1);
    await waitFor('builds done', async () => (await get(api, '/builds?complete=true')).meta.total >= BUILDS, {
      // Buildbot ran 3 to 4 of these builds a minute at a load average of 50 (2026-11-28).
      timeoutMs: 3 * 3_600_000,
      everyMs: 500,
    });
    const builds = (await get(api, '/builds?complete=true')).builds;
    const failed = builds.filter((b: any) => b.results !== 0);
    if (builds.length !== BUILDS || failed.length > 0)
      throw new Error(`${kind}: ${builds.length} builds, ${failed.length} not successful`);
    if (kind === 'flotilla')
      // Its compress-log job merges each finished log; measured before, the chunks would be
      // the appends' many small rows, which the job replaces.
      await waitFor(
        'every log compressed',
        async () => {
          const [r] = await db.query(sql`SELECT (SELECT count(*) FROM logs)::int AS logs,
            (SELECT count(*) FROM flotilla.job_runs WHERE queue = 'compress-log')::int AS done`);
          return r.done >= r.logs;
        },
        { timeoutMs: 600_000, everyMs: 500 },
      );
    const [chunks] = await db.query(sql`SELECT count(*)::int AS rows,
      coalesce(sum(octet_length(content)), 0)::bigint AS stored,
      coalesce(sum(last_line - first_line + 1), 0)::bigint AS lines FROM logchunks`);
    const held = await sizes(db, 'plain');
    const live = await sizes(db, 'full');
    const tables = new Map<string, { held: number; live: number }>();
    for (const name of new Set([...before.keys(), ...held.keys()])) {
      const b = before.get(name) ?? 0;
      tables.set(name, {
        held: ((held.get(name) ?? 0) - b) / BUILDS,
        live: ((live.get(name) ?? 0) - b) / BUILDS,
      });
    }
    return {
      tables,
      chunks: {
        rows: chunks.rows / BUILDS,
        stored: Number(chunks.stored) / BUILDS,
        lines: Number(chunks.lines) / BUILDS,
      },
      load: [loadBefore, loadavg()[0]!],
    };
  } finally {
    for (const p of procs.reverse()) await p.stop('SIGKILL');
    await buildbot?.stop();
    await scratch.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Flotilla's rows that its housekeeping (services/master/jobs/expire-masters.ts, every minute)
// removes within a day of a build: count deltas folded, build write records forgotten five
// minutes after the build, compress-log job runs after a day; a request's unclaimed-set row
// goes at its claim. Measured right after the builds they are there; at rest they are not.
const HOUSEKEPT = new Set([
  'flotilla.count_deltas',
  'flotilla.build_writes',
  'flotilla.job_runs',
  'flotilla.unclaimed_buildrequests',
]);
const kb = (n: number) => (n / 1024).toFixed(1);
// Each master's figures as soon as they are taken (a later failure keeps them), then the tables.
const results = new Map<Kind, Measured>();
for (const kind of KINDS) {
  const m = await measure(kind);
  results.set(kind, m);
  console.log(
    `${kind}: ${JSON.stringify({ perBuild: Object.fromEntries(m.tables), chunks: m.chunks, load: m.load })}\n`,
  );
}
const total = (m: Measured, k: 'held' | 'live' | 'kept') =>
  [...m.tables]
    .filter(([name]) => k !== 'kept' || !HOUSEKEPT.has(name))
    .reduce((s, [, t]) => s + t[k === 'held' ? 'held' : 'live'], 0);
console.log(
  `${BUILDS} builds each (${STEPS.length} steps; lines stored a build: ${[...results].map(([k, m]) => `${k} ${m.chunks.lines}`).join(', ')})\n`,
);
console.log(
  '| master | KiB/build after VACUUM ANALYZE | KiB/build live (VACUUM FULL) | live, less what housekeeping removes within a day | log chunk rows/build | chunk bytes stored/build (KiB) | load average (1 min) before, after |',
);
console.log('|---|---|---|---|---|---|---|');
for (const [kind, m] of results)
  console.log(
    `| ${kind} | ${kb(total(m, 'held'))} | ${kb(total(m, 'live'))} | ${kb(total(m, 'kept'))} | ${m.chunks.rows.toFixed(1)} | ${kb(m.chunks.stored)} | ${m.load.map((l) => l.toFixed(1)).join(', ')} |`,
  );
const f = results.get('flotilla');
const b = results.get('buildbot');
if (f && b)
  console.log(
    `\nFlotilla / Buildbot 3.7: ${(total(f, 'held') / total(b, 'held')).toFixed(2)} after VACUUM ANALYZE, ${(total(f, 'live') / total(b, 'live')).toFixed(2)} live, ${(total(f, 'kept') / total(b, 'kept')).toFixed(2)} at rest (live, less what the housekeeping removes)`,
  );
// Per table: every table that grew by at least 64 bytes a build on either side.
console.log(`\n| table | ${KINDS.map((k) => `${k} KiB/build (analyze, full)`).join(' | ')} |`);
console.log(`|---|${KINDS.map(() => '---|').join('')}`);
const names = new Set([...results.values()].flatMap((m) => [...m.tables.keys()]));
const rows = [...names]
  .map((name) => ({ name, per: KINDS.map((k) => results.get(k)!.tables.get(name)) }))
  .filter((r) => r.per.some((t) => t && Math.max(Math.abs(t.held), Math.abs(t.live)) >= 64))
  .sort((x, y) => Math.max(...y.per.map((t) => t?.held ?? 0)) - Math.max(...x.per.map((t) => t?.held ?? 0)));
for (const r of rows)
  console.log(`| ${r.name} | ${r.per.map((t) => (t ? `${kb(t.held)}, ${kb(t.live)}` : '-')).join(' | ')} |`);
