// Every npm script, and every process `npm start` starts, runs on the project's Node (the
// npm registry's `node` package, a dev dependency), whatever Node the system has: here the
// system's PATH comes first, as on a fresh Debian where only its own node and npm exist.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { forceBuildSet } from '../../load/force.js';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { freePort } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const want: string = pkg.devDependencies.node;
const major = want.split('.')[0]!;
// The system's directories only: no node_modules/.bin, as a shell on a fresh machine has.
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const systemEnv = (extra: Record<string, string> = {}) => {
  const env: Record<string, string> = {
    PATH: SYSTEM_PATH,
    HOME: process.env.HOME ?? '/root',
    LANG: 'C.UTF-8',
  };
  return { ...env, ...extra };
};

describe('the Node every script runs on', () => {
  it('is pinned exactly, and matches engines, @types/node, the image and the README', () => {
    expect(want).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.engines.node).toBe(`>=${major}.0.0`);
    expect(pkg.devDependencies['@types/node'].split('.')[0]).toBe(major);
    // Every stage of the image starts from this one (dockerfile.test.ts).
    expect(readFileSync('deploy/Dockerfile', 'utf8')).toMatch(
      new RegExp(`^ARG NODE_IMAGE=node:${want}-`, 'm'),
    );
    expect(readFileSync('README.md', 'utf8')).toContain(`Node ${major}`);
    // npm would skip the package's preinstall (which fetches its binary) unless allowed.
    expect(pkg.allowScripts.node).toBe(true);
  });

  it('is what `npm exec` gives with the system Node first on PATH, and what `npm test` runs on', () => {
    const exec = execFileSync('npm', ['exec', '-c', 'node -p process.version'], {
      env: systemEnv(),
      encoding: 'utf8',
    });
    expect(exec.trim()).toBe(`v${want}`);
    // This file runs under `npm test`: vitest itself is on it.
    expect(process.version).toBe(`v${want}`);
  });

  it("is the one deploy/local/lib.sh puts on its processes' PATH", () => {
    const out = execFileSync(
      'bash',
      [
        '-c',
        'source deploy/local/lib.sh && ensure_node_modules && node -p process.version && command -v node',
      ],
      { env: systemEnv(), encoding: 'utf8' },
    );
    const [version, where] = out.trim().split('\n');
    expect(version).toBe(`v${want}`);
    expect(where).toBe(path.resolve('node_modules/.bin/node'));
  });
});

describe('npm start', () => {
  const data = mkdtempSync(path.resolve('.data/start-test-'));
  afterAll(() => {
    // stop.sh stops each process by the pid start.sh recorded, then removes nothing else.
    spawnSync('bash', ['deploy/local/stop.sh'], { env: systemEnv({ FLOTILLA_DATA: data }), stdio: 'ignore' });
    rmSync(data, { recursive: true, force: true });
  });

  it("starts api, master, worker and the report receiver on the project's Node, ready, from a shell with the system's PATH, passing OTEL_* on", async () => {
    const otlp = await OtlpReceiver.start();
    onTestFinished(() => otlp.close());
    const ports = {
      FLOTILLA_PG_PORT: await freePort(),
      FLOTILLA_REDIS_PORT: await freePort(),
      PORT: await freePort(),
      MASTER_PROBE_PORT: await freePort(),
      WORKER_PROBE_PORT: await freePort(),
      API_PROBE_PORT: await freePort(),
      WORKER_PORT: await freePort(),
      REPORTS_PORT: await freePort(),
    };
    const env = systemEnv({
      ...otlp.env(),
      LOG_LEVEL: 'warn',
      FLOTILLA_DATA: data,
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    });
    const started = spawnSync('bash', ['deploy/local/start.sh'], { env, encoding: 'utf8', timeout: 400_000 });
    expect(started.status, `${started.stdout}\n${started.stderr}`).toBe(0);
    expect(started.stdout).toContain(`http://127.0.0.1:${ports.PORT}/api/v2`);
    // The configuration it runs is the user's copy, made now, with its retention said.
    const rel = path.relative(process.cwd(), data);
    expect(started.stdout).toContain(
      `The configuration is ${rel}/master.yaml, a copy of deploy/example/master.yaml made now`,
    );
    expect(started.stdout).toMatch(/^Retention \(docs\/retention\.md\) deletes .* every 300 s: /m);

    const pids = readdirSync(path.join(data, 'run')).sort();
    expect(pids).toEqual(['api.pid', 'master.pid', 'reports.pid', 'worker.pid']);
    for (const f of pids) {
      const pid = readFileSync(path.join(data, 'run', f), 'utf8').trim();
      const exe = readlinkSync(`/proc/${pid}/exe`);
      expect(execFileSync(exe, ['-p', 'process.version'], { encoding: 'utf8' }).trim(), f).toBe(`v${want}`);
    }
    const res = await fetch(`http://127.0.0.1:${ports.PORT}/api/v2/builders`);
    expect(res.status).toBe(200);

    // The example's login: reads open to everyone, control for the admin it printed, whose
    // password and hash only this user can read.
    const password = /log in as admin with password (\S+)/.exec(started.stdout)?.[1];
    expect(password, started.stdout).toBeDefined();
    for (const f of ['admin-password', 'users.yaml'])
      expect(statSync(path.join(data, f)).mode & 0o777, f).toBe(0o600);
    const api = `http://127.0.0.1:${ports.PORT}`;
    // A refused force throws with its status and answer (load/force.ts).
    const force = (cookie?: string) =>
      forceBuildSet(`${api}/api/v2`, 'force-hello', {}, cookie ? { headers: { cookie } } : {});
    const login = (pw: string) =>
      fetch(`${api}/auth/login`, {
        headers: { authorization: `Basic ${Buffer.from(`admin:${pw}`).toString('base64')}` },
        redirect: 'manual',
      });
    await expect(force()).rejects.toThrow(/^force force-hello \{\}: 403 /);
    expect((await login('wrong')).status).toBe(401);
    const session = await login(password!);
    expect(session.status).toBe(302);
    const cookie = session.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    expect(Object.keys(await force(cookie))).toHaveLength(1);
    const reports = `http://127.0.0.1:${ports.REPORTS_PORT}/builds`;
    await waitFor('the receiver to hear the build end', async () => {
      const builds = (await (await fetch(reports)).json()) as {
        builder: string;
        complete: boolean;
        results: number;
      }[];
      return builds.some((b) => b.builder === 'hello' && b.complete && b.results === 0);
    });
    expect(
      ((await (await fetch(reports)).json()) as { url: string }[]).every((b) =>
        b.url.startsWith(`http://127.0.0.1:${ports.PORT}/#/builders/`),
      ),
    ).toBe(true);
    // OTEL_TRACES_EXPORTER=otlp reached the processes (start.sh clears the environment).
    await waitFor('spans from the api', async () => otlp.spans.some((s) => s.service === 'flotilla-api'));
    expect(readFileSync(path.join(data, 'logs/api.log'), 'utf8')).not.toContain('"level":30');

    const stopped = spawnSync('bash', ['deploy/local/stop.sh'], { env, encoding: 'utf8' });
    expect(stopped.status, stopped.stderr).toBe(0);
    expect(readdirSync(path.join(data, 'run'))).toEqual([]);
    // start.sh creates a PostgreSQL cluster and waits for four processes (180 s each at most,
    // side by side).
  }, 480_000);
});
