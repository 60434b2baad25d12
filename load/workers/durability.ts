// What a master's death mid-step costs in output, with Buildbot's worker and with Flotilla's
// agent: a command prints numbered lines at a steady rate, each also appended with its time
// to a file on the worker; the master is killed with SIGKILL mid-step; then the lines the
// command had printed before the kill are compared with the lines PostgreSQL holds.
//
//   DATABASE_URL=postgresql://...  REDIS_URL=redis://...  node --import tsx load/workers/durability.ts [rounds] [lines/s]
//
// Needs Debian's buildbot-worker. Each round gets a fresh database (the role needs CREATEDB),
// an API, a master and one worker as real processes, all stopped by pid. Prints a table.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../../services/core/db/migrate.js';
import { createPool, sql } from '../../services/core/db/pool.js';
import { freePort } from '../../test/helpers/processes.js';
import { waitFor } from '../../test/helpers/wait.js';
import { forceChecked } from '../force.js';

const ROUNDS = Number(process.argv[2] ?? 3);
const RATE = Number(process.argv[3] ?? 2000);
const base = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!base || !redisUrl) throw new Error('set DATABASE_URL and REDIS_URL');

type Kind = 'flotilla' | 'buildbot-worker';
interface Round {
  printed: number;
  stored: number;
  /** Milliseconds between the last stored line's printing and the kill. */
  gapMs: number;
}

// Prints `line N` RATE times a second and appends `N <ns>` to printed.log in the build's
// directory, so that what was printed before any moment can be read back afterwards.
const PRINTER = `import os, sys, time
rate = ${RATE}
with open('printer.pid', 'w') as p:
    p.write(str(os.getpid()))
with open('printed.log', 'a', buffering=1) as f:
    i, start = 0, time.monotonic()
    while True:
        i += 1
        print(f'line {i}', flush=True)
        f.write(f'{i} {time.time_ns()}\\n')
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
`;

async function round(kind: Kind): Promise<Round> {
  const procs: ChildProcess[] = [];
  const spawnNode = (name: string, env: Record<string, string>) => {
    const p = spawn(process.execPath, ['--import', 'tsx', `services/${name}/main.ts`], {
      env: { PATH: process.env.PATH!, HOME: process.env.HOME!, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    procs.push(p);
    return p;
  };
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-durability-'));
  const dbName = `durability_${Date.now()}`;
  const admin = createPool(base!, { poolSize: 1 });
  const url = new URL(base!);
  url.pathname = `/${dbName}`;
  const db = createPool(url.toString(), { poolSize: 2 });
  try {
    await admin.query(sql`CREATE DATABASE ${sql.ident(dbName)}`);
    await migrate(db);
    writeFileSync(join(dir, 'printer.py'), PRINTER);
    writeFileSync(
      join(dir, 'master.yaml'),
      `protocols: { msgpack_experimental_v7: { port: 0 } }
log_compression: none
workers: [{ name: dw, password: pw }]
builders:
  - { name: count, workers: [dw], steps: [{ type: shell, name: count, command: ['/usr/bin/python3', '${join(dir, 'printer.py')}'] }] }
force_schedulers: [{ name: count, builders: [count] }]
`,
    );
    const [apiPort, workerPort, msgpackPort, probe] = [
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
    spawnNode('api', { ...common, PORT: String(apiPort) });
    const master = spawnNode('master', {
      ...common,
      MASTER_NAME: 'durability',
      WORKER_PORT: String(workerPort),
      MSGPACK_WORKER_PORT: String(msgpackPort),
      PROBE_PORT: String(probe),
    });
    const wdir = join(dir, 'dw');
    if (kind === 'flotilla') {
      // A worker reads its password from a file (or standard input), never its environment.
      writeFileSync(join(dir, 'dw.password'), 'pw\n', { mode: 0o600 });
      spawnNode('worker', {
        MASTER_URL: `ws://127.0.0.1:${workerPort}/worker`,
        WORKER_NAME: 'dw',
        WORKER_PASSWORD_FILE: join(dir, 'dw.password'),
        WORKER_DIR: wdir,
        PROBE_PORT: String(await freePort()),
      });
    } else {
      execFileSync('buildbot-worker', [
        'create-worker',
        '--protocol=msgpack_experimental_v7',
        wdir,
        `127.0.0.1:${msgpackPort}`,
        'dw',
        'pw',
      ]);
      procs.push(
        spawn('buildbot-worker', ['start', '--nodaemon', wdir], {
          env: { PATH: '/usr/bin:/bin', HOME: wdir, LANG: 'C.UTF-8' },
          stdio: 'ignore',
        }),
      );
    }
    const api = `http://127.0.0.1:${apiPort}/api/v2`;
    const get = async (p: string) =>
      (await (await fetch(api + p, { headers: { accept: 'application/json' } })).json()) as any;
    await waitFor('the API', async () => (await fetch(`${api}/workers`)).ok);
    await waitFor('the worker', async () => (await get('/workers')).workers[0]?.connected_to.length > 0);
    await forceChecked(api, 'count', 1);
    const logid = async () => {
      const [r] = await db.query(
        sql`SELECT l.id FROM logs l JOIN steps s ON s.id = l.stepid WHERE s.name = 'count'`,
      );
      return r?.id as number | undefined;
    };
    // Well into the step: a few thousand lines stored.
    await waitFor('output stored', async () => {
      const id = await logid();
      if (id === undefined) return false;
      const [r] = await db.query(sql`SELECT num_lines FROM logs WHERE id = ${id}`);
      return r.num_lines > RATE * 2;
    });
    const killedAt = BigInt(Date.now()) * 1_000_000n;
    master.kill('SIGKILL');
    await new Promise((r) => master.once('exit', r));
    // Stored: the highest `line N` in the log.
    const rows = await db.query(sql`
      SELECT content, compressed FROM logchunks WHERE logid = ${(await logid())!} ORDER BY first_line DESC LIMIT 3`);
    let stored = 0;
    for (const r of rows) {
      if (r.compressed !== 0)
        throw new Error('expected uncompressed chunks (log_compression would change that)');
      const nums = [...r.content.toString().matchAll(/^oline (\d+)$/gm)].map((m: RegExpMatchArray) =>
        Number(m[1]),
      );
      if (nums.length) {
        stored = Math.max(...nums);
        break;
      }
    }
    // Printed before the kill: printed.log in the builder's build directory.
    const printedLog = readFileSync(join(wdir, 'count', 'build', 'printed.log'), 'utf8');
    let printed = 0;
    let storedAtNs = 0n;
    for (const line of printedLog.split('\n')) {
      const [n, ns] = line.split(' ');
      if (!n || !ns) continue;
      if (BigInt(ns) <= killedAt) printed = Number(n);
      if (Number(n) === stored) storedAtNs = BigInt(ns);
    }
    return { printed, stored, gapMs: Number((killedAt - storedAtNs) / 1_000_000n) };
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    // The command outlives a killed buildbot-worker: stopped by the pid it wrote.
    try {
      process.kill(Number(readFileSync(join(dir, 'dw', 'count', 'build', 'printer.pid'), 'utf8')), 'SIGKILL');
    } catch {}
    await db.dispose();
    await admin.query(sql`DROP DATABASE IF EXISTS ${sql.ident(dbName)} WITH (FORCE)`).catch(() => {});
    await admin.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `| worker | round | lines printed before the kill | lines in PostgreSQL | lost | last stored line printed before the kill by |`,
);
console.log('|---|---|---|---|---|---|');
for (const kind of ['flotilla', 'buildbot-worker'] as const) {
  for (let i = 1; i <= ROUNDS; i++) {
    const r = await round(kind);
    console.log(`| ${kind} | ${i} | ${r.printed} | ${r.stored} | ${r.printed - r.stored} | ${r.gapMs} ms |`);
  }
}
