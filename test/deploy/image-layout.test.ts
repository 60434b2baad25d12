// The images' runtime layout, built without Docker and run: each stage gets a folder for
// its root filesystem; the deps stage's `npm ci` runs as written (from npm's cache, no
// network), the build stage's output comes from the same deploy/bundle.ts, and every COPY of the server and worker targets is carried out as Docker would. Then migrate,
// api, master and worker start through the image's entrypoint, with the image's ENV, as its
// non-root user, and must become ready (the worker connected to the master).
//
// Cost (issue 14 §5; load/results/test-suite.md): this was the suite's longest file, 365 s in a
// full run on a loaded machine, 190 s alone at load 16 (tsc 56 s, npm ci 48 s, copying
// node_modules' 11,000 files into both images 49 s). A COPY --from between stages now links
// the files (the same bytes, mode and owner as a copy, nothing written), and the build stage
// bundles with esbuild where it compiled with tsc (seconds, not a minute).
//
// Why it stays, at this cost (issue 29 §5): dockerfile.test.ts checks the Dockerfile's text
// (paths, stages, users, packages); only running the layout shows that the compiled output
// starts with production packages alone, from the paths the COPY lines make, as the image's
// user, through its entrypoint. It now costs 17 user+sys CPU seconds and 33 s (vitest's
// Duration), harness included: `/usr/bin/time -f '%U %S' env FOCUS=1 npm test --
// test/deploy/image-layout.test.ts` (10.4 + 6.4), on the shared 2-core machine at load 12-16.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, posix, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleServices } from '../../deploy/bundle.js';
import { sql } from '../../services/core/db/pool.js';
import { buildWebUi } from '../../services/web/build.js';
import { createDatabase, type TestDatabase } from '../helpers/databases.js';
import { freePort, type Running, start, startRedis, status } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { copies, type Dockerfile, effective, lineage, readDockerfile, stageEnv } from './dockerfile.js';

const df = readDockerfile();
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const work = mkdtempSync(resolve('.data/image-layout-'));
const rootOf = (stage: string) => join(work, stage);
const inRoot = (stage: string, p: string) => join(rootOf(stage), p);

const [uid, gid] = effective(df, 'server', 'USER').at(-1)!.split(':').map(Number) as [number, number];
const running: Running[] = [];
let db: TestDatabase;
let redis: Awaited<ReturnType<typeof startRedis>>;

/** The build stage's product: /src/dist, bundled as its RUN line bundles it. */
async function buildStage(): Promise<void> {
  const s = df.stage('build');
  const workdir = s.instructions.find((i) => i.op === 'WORKDIR')!.args;
  const runs = s.instructions.filter((i) => i.op === 'RUN').map((i) => i.args);
  expect(runs.at(-2)).toMatch(/deploy\/bundle\.ts$/);
  await bundleServices(inRoot('build', join(workdir, 'dist')));
  expect(runs.at(-1)).toMatch(/services\/web\/build\.ts$/);
  await buildWebUi(inRoot('build', join(workdir, 'services/web/dist')));
}

/**
 * A COPY --from: `from` (a file or a folder) put at `to` as hard links, over what is there.
 * Stages' folders are on one filesystem; the files are nobody's to change (root's, and the
 * images' processes run as another user).
 */
function linkTree(from: string, to: string): void {
  const st = lstatSync(from);
  if (st.isDirectory()) {
    mkdirSync(to, { recursive: true });
    chmodSync(to, st.mode & 0o7777);
    for (const name of readdirSync(from)) linkTree(join(from, name), join(to, name));
    return;
  }
  rmSync(to, { force: true });
  if (st.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
  else linkSync(from, to);
}

/** Carries out a stage's WORKDIRs, COPYs and (when asked) RUNs into its folder. */
function materialize(d: Dockerfile, target: string, opts: { run?: boolean } = {}): void {
  let workdir = '/';
  for (const s of lineage(d, target)) {
    const cs = copies(s);
    let ci = 0;
    for (const i of s.instructions) {
      if (i.op === 'WORKDIR') {
        workdir = posix.resolve(workdir, i.args);
        mkdirSync(inRoot(target, workdir), { recursive: true });
      } else if (i.op === 'COPY') {
        const c = cs[ci++]!;
        const dest = posix.resolve(workdir, c.dest);
        for (const src of c.sources) {
          const from = c.from ? inRoot(c.from, src) : resolve(src);
          const isDir = statSync(from).isDirectory();
          const to =
            isDir || !(c.dest.endsWith('/') || c.sources.length > 1) ? dest : posix.join(dest, basename(src));
          mkdirSync(dirname(inRoot(target, to)), { recursive: true });
          if (c.from) linkTree(from, inRoot(target, to));
          else cpSync(from, inRoot(target, to), { recursive: true });
        }
      } else if (i.op === 'RUN' && opts.run) {
        // npm from its cache only: a test sends nothing beyond this machine.
        const r = spawnSync('sh', ['-c', i.args], {
          cwd: inRoot(target, workdir),
          env: { ...process.env, npm_config_offline: 'true', npm_config_loglevel: 'error' },
          encoding: 'utf8',
        });
        expect(r.status, `${target}: RUN ${i.args}\n${r.stderr}`).toBe(0);
      }
    }
  }
}

/** A process of an image, started through its entrypoint with its ENV and user. */
function run(target: 'server' | 'worker', command: string | string[], env: Record<string, string>): Running {
  const image = stageEnv(df, target);
  const home = join(work, `home-${target}`);
  const p = start(
    inRoot(target, '/usr/local/bin/flotilla'),
    typeof command === 'string' ? [command] : command,
    {
      // The image's node is /usr/local/bin/node; here, the same Node as these tests.
      PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: home,
      TMPDIR: home,
      ...image,
      FLOTILLA_HOME: inRoot(target, '/app'),
      // Tests listen on loopback only.
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...env,
    },
    { cleanEnv: true, uid, gid, cwd: home },
  );
  running.push(p);
  return p;
}

function uidOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Uid:'))!;
  return Number(line.split(/\s+/)[1]);
}

function healthy(target: 'server' | 'worker', env: Record<string, string>): number {
  const r = spawnSync(inRoot(target, '/usr/local/bin/flotilla'), ['healthcheck'], {
    env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, ...stageEnv(df, target), ...env },
    uid,
    gid,
  });
  return r.status ?? -1;
}

beforeAll(async () => {
  chmodSync(work, 0o755);
  await buildStage();
  materialize(df, 'deps', { run: true });
  materialize(df, 'server');
  materialize(df, 'worker');
  for (const t of ['server', 'worker']) {
    mkdirSync(join(work, `home-${t}`));
    chownSync(join(work, `home-${t}`), uid, gid);
  }
  db = await createDatabase('empty');
  redis = await startRedis();
}, 300_000);

afterAll(async () => {
  await Promise.all(running.map((p) => p.stop('SIGKILL')));
  await redis?.proc.stop('SIGKILL');
  await db?.drop();
  rmSync(work, { recursive: true, force: true });
});

describe('the server image', () => {
  it('holds the production packages and nothing of the development ones', () => {
    const modules = inRoot('server', '/app/node_modules');
    for (const name of Object.keys(pkg.dependencies))
      expect(existsSync(join(modules, name)), name).toBe(true);
    // What npm installed there, by the lock: no package only development needs.
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')).packages;
    const installed = Object.keys(
      JSON.parse(readFileSync(join(modules, '.package-lock.json'), 'utf8')).packages,
    );
    expect(installed.length).toBeGreaterThan(50);
    expect(installed.filter((p) => lock[p]?.dev === true)).toEqual([]);
    // (TypeScript is there all the same: cosmiconfig, under @databases/pg, names it as an
    // optional peer, and npm installs those. It is never loaded.)
    for (const name of [
      'vitest',
      'tsx',
      'node',
      '@biomejs/biome',
      'fast-check',
      'kubernetes-models',
      'autocannon',
    ])
      expect(existsSync(join(modules, name)), name).toBe(false);
    // ...and no TypeScript sources, only the bundles.
    expect(existsSync(inRoot('server', '/app/dist/services/api/main.js'))).toBe(true);
    expect(existsSync(inRoot('server', '/app/services'))).toBe(false);
  });

  it('migrates, then runs api and master from the compiled output, as its non-root user, ready', async () => {
    const migrate = run('server', 'migrate', { DATABASE_URL: db.url });
    expect(await migrate.exited, migrate.output()).toBe(0);
    const [row] = await db.pool.query(sql`SELECT to_regclass('public.builds') IS NOT NULL AS ok`);
    expect(row.ok).toBe(true);
    // The operator's login command (docs/security.md, "Login throttling"), against the Redis.
    const unblock = run('server', ['auth', 'unblock', '192.0.2.1'], { REDIS_URL: redis.url });
    expect(await unblock.exited, unblock.output()).toBe(0);
    expect(unblock.output()).toContain('address 192.0.2.1: 0 throttle bucket(s) cleared');

    const config = join(work, 'master.yaml');
    writeFileSync(
      config,
      `title: image layout
workers:
  - { name: img-worker, password_env: IMG_WORKER_PASSWORD }
builders:
  - { name: hello, workers: [img-worker], steps: [{ type: shell, name: greet, command: "echo hello" }] }
`,
    );
    const stores = { DATABASE_URL: db.url, REDIS_URL: redis.url, MASTER_CONFIG: config };
    const apiPort = String(await freePort());
    const api = run('server', 'api', { ...stores, PORT: apiPort });
    const ports = { PROBE_PORT: String(await freePort()), WORKER_PORT: String(await freePort()) };
    const master = run('server', 'master', {
      ...stores,
      ...ports,
      MASTER_NAME: 'image-layout',
      IMG_WORKER_PASSWORD: 'pw',
    });
    await waitFor('api ready', async () => (await status(`http://127.0.0.1:${apiPort}/readyz`)) === 200, {
      proc: api,
    });
    await waitFor(
      'master ready',
      async () => (await status(`http://127.0.0.1:${ports.PROBE_PORT}/readyz`)) === 200,
      { proc: master },
    );
    expect(await status(`http://127.0.0.1:${apiPort}/api/v2/builders`)).toBe(200);
    // The web UI's build, found beside the API's code (dist/services/web/dist).
    expect(await status(`http://127.0.0.1:${apiPort}/`)).toBe(200);
    for (const p of [api, master]) expect(uidOf(p.pid)).toBe(uid);
    expect(healthy('server', { PORT: apiPort, PROBE_PORT: String(await freePort()) })).toBe(0);
    expect(healthy('server', { ...ports, PORT: String(await freePort()) })).toBe(0);
    // Nothing listening: unhealthy.
    expect(healthy('server', { PORT: String(await freePort()), PROBE_PORT: String(await freePort()) })).toBe(
      1,
    );

    // The worker image: its own layout, no server code, and it connects.
    expect(existsSync(inRoot('worker', '/app/dist/services/worker/main.js'))).toBe(true);
    for (const p of [
      '/app/dist/services/api',
      '/app/dist/services/master',
      '/app/dist/services/core/db/migrations',
    ])
      expect(existsSync(inRoot('worker', p)), p).toBe(false);
    const workerWork = join(work, 'worker-dir');
    mkdirSync(workerWork);
    chownSync(workerWork, uid, gid);
    const probe = String(await freePort());
    // As the chart gives it: a file the worker's user can read, never its environment.
    const passwordFile = join(work, 'worker-password');
    writeFileSync(passwordFile, 'pw\n', { mode: 0o600 });
    chownSync(passwordFile, uid, gid);
    const worker = run('worker', 'worker', {
      WORKER_NAME: 'img-worker',
      WORKER_PASSWORD_FILE: passwordFile,
      MASTER_URL: `ws://127.0.0.1:${ports.WORKER_PORT}/worker`,
      WORKER_DIR: workerWork,
      PROBE_PORT: probe,
    });
    await waitFor(
      'worker connected',
      async () => (await status(`http://127.0.0.1:${probe}/readyz`)) === 200,
      { proc: worker },
    );
    expect(uidOf(worker.pid)).toBe(uid);
    expect(healthy('worker', { PROBE_PORT: probe })).toBe(0);

    for (const p of [worker, master, api]) expect(await p.stop('SIGTERM'), p.output()).toBe(0);
  }, 180_000);
});
