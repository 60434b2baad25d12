// Log ingestion from Buildbot's own workers against Flotilla's agent: one master, 10
// concurrent builds (5 workers, 2 builders, one build of each at a time per worker), each
// printing LINES lines, measured as log lines stored per second; once with Flotilla's
// agents, once with buildbot-worker 3.7 over msgpack_experimental_v7, once with the same
// workers made by plain `create-worker` (PB, its default; issue 30).
//
//   DATABASE_URL=postgresql://...  REDIS_URL=redis://...  node --import tsx load/workers/run.ts [lines per build]
//
// Needs Debian's buildbot-worker (npm test installs it). Each kind gets a fresh database next
// to DATABASE_URL's (the role needs CREATEDB), an API, a master and its 5 workers as real
// processes, all stopped by pid at the end. Prints a markdown table.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../../services/core/db/migrate.js';
import { createPool, sql } from '../../services/core/db/pool.js';
import { freePort } from '../../test/helpers/processes.js';
import { waitFor } from '../../test/helpers/wait.js';

const LINES = Number(process.argv[2] ?? 100_000);
const BUILDS = 10;
const WORKERS = 5;
const base = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!base || !redisUrl) throw new Error('set DATABASE_URL and REDIS_URL');

type Kind = 'flotilla' | 'buildbot-worker' | 'buildbot-worker-pb';

async function measure(kind: Kind): Promise<{ lines: number; seconds: number }> {
  const procs: ChildProcess[] = [];
  const service = (name: string, env: Record<string, string>) => {
    const p = spawn(process.execPath, ['--import', 'tsx', `services/${name}/main.ts`], {
      env: { PATH: process.env.PATH!, HOME: process.env.HOME!, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    procs.push(p);
  };
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-workerbench-'));
  const dbName = `workerbench_${Date.now()}`;
  const admin = createPool(base!, { poolSize: 1 });
  const url = new URL(base!);
  url.pathname = `/${dbName}`;
  const db = createPool(url.toString(), { poolSize: 2 });
  try {
    await admin.query(sql`CREATE DATABASE ${sql.ident(dbName)}`);
    await migrate(db);
    const workers = Array.from({ length: WORKERS }, (_, i) => `bw${i}`);
    const spew = `seq 1 ${LINES} | sed "s/^/log line number /"`;
    writeFileSync(
      join(dir, 'master.yaml'),
      `protocols: { msgpack_experimental_v7: { port: 0 }, pb: { port: 0 } }
workers:\n${workers.map((w) => `  - { name: ${w}, password: pw, max_builds: 2 }`).join('\n')}
builders:
  - { name: spew-a, workers: [${workers.join(', ')}], steps: [{ type: shell, name: spew, command: '${spew}' }] }
  - { name: spew-b, workers: [${workers.join(', ')}], steps: [{ type: shell, name: spew, command: '${spew}' }] }
force_schedulers:
  - { name: spew, builders: [spew-a, spew-b] }
`,
    );
    const [apiPort, workerPort, msgpackPort, pbPort, probe] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const common = {
      DATABASE_URL: url.toString(),
      REDIS_URL: redisUrl!,
      MASTER_CONFIG: join(dir, 'master.yaml'),
    };
    service('api', { ...common, PORT: String(apiPort) });
    service('master', {
      ...common,
      MASTER_NAME: 'workerbench',
      WORKER_PORT: String(workerPort),
      MSGPACK_WORKER_PORT: String(msgpackPort),
      PB_WORKER_PORT: String(pbPort),
      PROBE_PORT: String(probe),
    });
    for (const w of workers) {
      if (kind === 'flotilla') {
        // A worker reads its password from a file (or standard input), never its environment.
        writeFileSync(join(dir, `${w}.password`), 'pw\n', { mode: 0o600 });
        service('worker', {
          MASTER_URL: `ws://127.0.0.1:${workerPort}/worker`,
          WORKER_NAME: w,
          WORKER_PASSWORD_FILE: join(dir, `${w}.password`),
          WORKER_DIR: join(dir, w),
          PROBE_PORT: String(await freePort()),
        });
      } else {
        const wdir = join(dir, w);
        // PB is create-worker's default: no --protocol, as a team's workers are made.
        const protocol = kind === 'buildbot-worker' ? ['--protocol=msgpack_experimental_v7'] : [];
        const port = kind === 'buildbot-worker' ? msgpackPort : pbPort;
        execFileSync('buildbot-worker', ['create-worker', ...protocol, wdir, `127.0.0.1:${port}`, w, 'pw']);
        procs.push(
          spawn('buildbot-worker', ['start', '--nodaemon', wdir], {
            env: { PATH: '/usr/bin:/bin', HOME: wdir, LANG: 'C.UTF-8' },
            stdio: 'ignore',
          }),
        );
      }
    }
    const api = `http://127.0.0.1:${apiPort}/api/v2`;
    const get = async (p: string) =>
      (await (await fetch(api + p, { headers: { accept: 'application/json' } })).json()) as any;
    await waitFor('the API', async () => (await fetch(`${api}/workers`)).ok);
    await waitFor('workers connected', async () =>
      (await get('/workers')).workers.every((w: any) => w.connected_to.length > 0),
    );
    // Each force is checked: on a loaded machine one can be refused, and a run with fewer
    // builds than it says would measure something else.
    for (let i = 0; i < BUILDS / 2; i++) {
      const res = await fetch(`${api}/forceschedulers/spew`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'force', params: { username: 'b <b@x.y>' } }),
      });
      const answer = await res.text();
      if (!res.ok || answer.includes('"error"')) throw new Error(`force ${i}: ${res.status} ${answer}`);
    }
    await waitFor('builds done', async () => (await get('/builds?complete=true')).meta.total >= BUILDS, {
      timeoutMs: 900_000,
      everyMs: 50,
    });
    const [t] = await db.query(sql`
      SELECT sum(l.num_lines)::bigint AS lines, min(s.started_at) AS first, max(s.complete_at) AS last,
             count(*) FILTER (WHERE s.results = 0)::int AS ok
      FROM steps s JOIN logs l ON l.stepid = s.id WHERE s.name = 'spew'`);
    if (t.ok !== BUILDS) throw new Error(`${kind}: ${t.ok} of ${BUILDS} builds succeeded`);
    return { lines: Number(t.lines), seconds: Math.max(1, t.last - t.first) };
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    await db.dispose();
    await admin.query(sql`DROP DATABASE IF EXISTS ${sql.ident(dbName)} WITH (FORCE)`).catch(() => {});
    await admin.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `| worker | lines stored (${BUILDS} builds × ${LINES} + headers) | seconds (first step start to last step end) | lines/s |`,
);
console.log('|---|---|---|---|');
for (const kind of ['flotilla', 'buildbot-worker', 'buildbot-worker-pb'] as const) {
  const r = await measure(kind);
  console.log(`| ${kind} | ${r.lines} | ${r.seconds} | ${Math.round(r.lines / r.seconds)} |`);
}
