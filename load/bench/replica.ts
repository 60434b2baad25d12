// Reads from a real streaming replica against reads from the primary (issue 20 §2): req/s and
// p99 of a few route classes, page cache off (every request read from PostgreSQL), served by
//   primary   one API pod reading from the primary (no DATABASE_READ_URL);
//   replica   one API pod reading from the replica (DATABASE_READ_URL);
//   2 pods    two API pods reading from the replica, the same connections split between them
//             (two wrk processes at once; req/s summed, p99 the worse of the two);
//   cached    one API pod with its page cache on (the primary; a kept page is read from memory).
// The three alternate route by route, round by round, so that each ratio compares runs
// seconds apart (on this shared machine figures minutes apart differ by more than a ratio).
//
//   load/bench/cluster.sh up
//   node --import tsx load/bench/replica.ts "$(load/bench/cluster.sh url bench_small)" \
//     [--rounds 3] [--duration 5] [--connections 8] [--port 20100]
//
// The replica is made here: pg_basebackup (Debian's, the bench cluster's major) of the bench
// cluster through its socket folder into .data/bench/replica, started on --port as the
// postgres OS user, stopped by its pid and removed at the end; a Redis for the APIs on
// --port + 1, the APIs on the ports after. Needs root (as cluster.sh). Each replica-reading
// pod's probe /readyz is read after the runs: the reads it sent to the replica are printed,
// so a figure cannot come from a pod that quietly fell back to the primary.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { basebackupArgs } from '../../test/helpers/pg-replica.js';
import { waitFor } from '../../test/helpers/wait.js';
import type { Run } from '../measure.js';
import { hammerWrk } from '../wrk.js';

const { values: args, positionals } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '8' },
    port: { type: 'string', default: '20100' },
  },
  allowPositionals: true,
});
const [primaryUrl] = positionals;
if (!primaryUrl) throw new Error('usage: replica.ts DATABASE_URL [options]');
const root = fileURLToPath(new URL('../..', import.meta.url));
const base = Number(args.port);
const [replicaPort, redisPort, ...apiPorts] = Array.from({ length: 8 }, (_, i) => base + i) as number[];
const benchDir = join(root, '.data/bench/pg');
const replicaDir = join(root, '.data/bench/replica');
const children: ChildProcess[] = [];

function sh(cmd: string, argv: string[]): string {
  return execFileSync(cmd, argv, { encoding: 'utf8' }).trim();
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text)).rows;
  } finally {
    await c.end();
  }
}

function spawnChild(
  cmd: string,
  argv: string[],
  opts: { env?: Record<string, string>; uid?: number; gid?: number; quiet?: boolean } = {},
) {
  const child = spawn(cmd, argv, {
    cwd: root,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'ignore', opts.quiet ? 'ignore' : 'inherit'],
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.gid } : {}),
  });
  children.push(child);
  return child;
}

/** Waits (up to 120 s) until `check` holds, failing at once if `child` exits meanwhile. */
function until(what: string, child: ChildProcess, check: () => Promise<boolean>): Promise<void> {
  // Its output goes to this process's own stderr (stdio above), so there is none to add.
  return waitFor(what, check, { timeoutMs: 120_000, everyMs: 100, proc: { child, output: () => '' } });
}

/** CPU seconds (user + system) a process has used, from /proc (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

const ok = (url: string) =>
  fetch(url).then(
    (r) => r.ok,
    () => false,
  );

/** A hot standby of the bench cluster on replicaPort, streaming from it. */
async function startReplica(): Promise<string> {
  const major = (
    await query<{ server_version_num: string }>(primaryUrl!, 'SHOW server_version_num')
  )[0]!.server_version_num.slice(0, 2);
  const bin = `/usr/lib/postgresql/${major}/bin`;
  const uid = Number(sh('id', ['-u', 'postgres']));
  const gid = Number(sh('id', ['-g', 'postgres']));
  rmSync(replicaDir, { recursive: true, force: true });
  mkdirSync(replicaDir, { recursive: true });
  chownSync(replicaDir, uid, gid);
  chmodSync(replicaDir, 0o700);
  const port = new URL(primaryUrl!).port;
  const t0 = Date.now();
  execFileSync(
    'runuser',
    ['-u', 'postgres', '--', `${bin}/pg_basebackup`, ...basebackupArgs(benchDir, port, replicaDir)],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  console.log(`pg_basebackup: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const child = spawnChild(
    `${bin}/postgres`,
    [
      '-D',
      replicaDir,
      '-p',
      String(replicaPort),
      '-k',
      replicaDir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'hot_standby=on',
      '-c',
      `cluster_name=flotilla-bench-replica-${replicaPort}`,
    ],
    { uid, gid, quiet: true },
  );
  const u = new URL(primaryUrl!);
  u.port = String(replicaPort);
  const url = u.toString();
  await until('the replica', child, async () => {
    const [r] = await query<{ rec: boolean }>(url, 'SELECT pg_is_in_recovery() AS rec');
    return r!.rec;
  });
  return url;
}

interface Pod {
  base: string;
  probe: string;
  pid: number;
}

async function startApi(port: number, readUrl?: string, config = 'api-nocache.yaml'): Promise<Pod> {
  const child = spawnChild(process.execPath, ['--import', 'tsx', 'services/api/main.ts'], {
    env: {
      DATABASE_URL: primaryUrl!,
      ...(readUrl ? { DATABASE_READ_URL: readUrl } : {}),
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      PORT: String(port),
      PROBE_PORT: String(port + 100),
      PUBLIC_URL: `http://127.0.0.1:${port}/`,
      LOG_LEVEL: 'warn',
      MASTER_CONFIG: `${root}load/bench/${config}`,
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
    },
  });
  const pod = {
    base: `http://127.0.0.1:${port}/api/v2`,
    probe: `http://127.0.0.1:${port + 100}/readyz`,
    pid: child.pid!,
  };
  await until(`the API on ${port}`, child, () => ok(`${pod.base}/builders`));
  if (readUrl)
    await until(`the API on ${port} to use its replica`, child, async () =>
      JSON.stringify(await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()).includes('"up":1'),
    );
  return pod;
}

try {
  const redis = spawnChild('redis-server', [
    '--port',
    String(redisPort),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  await until('redis', redis, async () => sh('redis-cli', ['-p', String(redisPort), 'ping']) === 'PONG');
  const replicaUrl = await startReplica();
  const [build] = await query<{ id: number }>(primaryUrl, 'SELECT max(id) AS id FROM builds');
  const [log] = await query<{ id: number; n: number }>(
    primaryUrl,
    'SELECT id, num_lines AS n FROM logs ORDER BY num_lines DESC LIMIT 1',
  );
  const routes = [
    ['list', '/builds?order=-buildid&limit=50'],
    ['filtered list', '/builds?builderid=1&complete=true&order=-buildid&limit=50'],
    ['entity', `/builds/${build!.id}?property=*`],
    ['children', `/builds/${build!.id}/steps`],
    ['log lines', `/logs/${log!.id}/contents?offset=${Math.floor(log!.n / 2)}&limit=100`],
  ] as const;
  const primary = await startApi(apiPorts[0]!);
  const onReplica = await startApi(apiPorts[1]!, replicaUrl);
  const second = await startApi(apiPorts[2]!, replicaUrl);
  // With its page cache on (api.yaml), on the primary: what a kept page costs.
  const cached = await startApi(apiPorts[3]!, undefined, 'api.yaml');

  const c = Number(args.connections);
  const seconds = Number(args.duration);
  const headers = { Accept: 'application/json' };
  const wrk = (pod: Pod, path: string, connections: number, d = seconds) =>
    hammerWrk({
      base: pod.base,
      paths: [path],
      connections,
      durationSeconds: d,
      timeoutSeconds: 10,
      headers,
    });
  // One pod's run, with the CPU its API process spent per request (µs): the pod's cost on a
  // core of its own, whatever else the machine was doing meanwhile.
  const measured = async (pod: Pod, path: string) => {
    const cpu0 = cpuSeconds(pod.pid);
    const r = await wrk(pod, path, c);
    return { ...r, cpuUs: ((cpuSeconds(pod.pid) - cpu0) / r.responses) * 1e6 };
  };
  const checked = <R extends Run>(r: R): R => {
    if (r.failed) throw new Error(`${r.failed} failed requests: ${JSON.stringify(r.statusCodes)}`);
    return r;
  };
  for (const [, path] of routes)
    for (const pod of [primary, onReplica, second, cached]) await wrk(pod, path, c, 2);

  const before = loadavg()[0]!;
  console.log(
    `c=${c} in all, ${seconds} s runs, ${args.rounds} rounds; page cache off; load average before ${before.toFixed(1)}`,
  );
  console.log(
    '| route | path | primary req/s | p99 ms | replica req/s | p99 ms | replica / primary | 2 pods on the replica req/s | p99 ms | 2 pods / 1 pod | API CPU µs per request (primary, replica) | req/s per API core | page cache on: req/s | API CPU µs per request |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [name, path] of routes) {
    const rows: {
      p: Run & { cpuUs: number };
      r: Run & { cpuUs: number };
      two: { rps: number; p99: number };
      hit: Run & { cpuUs: number };
    }[] = [];
    for (let i = 0; i < Number(args.rounds); i++) {
      const p = checked(await measured(primary, path));
      const r = checked(await measured(onReplica, path));
      const [a, b] = (
        await Promise.all([wrk(onReplica, path, Math.ceil(c / 2)), wrk(second, path, Math.floor(c / 2))])
      ).map(checked);
      const hit = checked(await measured(cached, path));
      rows.push({ p, r, two: { rps: a!.rps + b!.rps, p99: Math.max(a!.p99 ?? 0, b!.p99 ?? 0) }, hit });
    }
    const m = (f: (x: (typeof rows)[number]) => number) => median(rows.map(f));
    const [pr, rr, tr] = [m((x) => x.p.rps), m((x) => x.r.rps), m((x) => x.two.rps)];
    console.log(
      `| ${name} | \`${path}\` | ${pr.toFixed(0)} | ${m((x) => x.p.p99 ?? 0).toFixed(1)} | ${rr.toFixed(0)} | ${m((x) => x.r.p99 ?? 0).toFixed(1)} | ${(m((x) => x.r.rps / x.p.rps)).toFixed(2)} | ${tr.toFixed(0)} | ${m((x) => x.two.p99).toFixed(1)} | ${m((x) => x.two.rps / x.r.rps).toFixed(2)} | ${m((x) => x.p.cpuUs).toFixed(0)}, ${m((x) => x.r.cpuUs).toFixed(0)} | ${(1e6 / m((x) => x.p.cpuUs)).toFixed(0)} | ${m((x) => x.hit.rps).toFixed(0)} | ${m((x) => x.hit.cpuUs).toFixed(0)} |`,
    );
  }
  console.log(`load average after ${loadavg()[0]!.toFixed(1)}`);
  for (const pod of [onReplica, second]) {
    const ready = await (await fetch(pod.probe)).text();
    console.log(`${pod.base}: ${ready.slice(0, 400)}`);
  }
} finally {
  // SIGINT: PostgreSQL's fast shutdown, and a clean stop for the rest.
  for (const child of children.reverse()) if (child.exitCode === null) child.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 2000));
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(replicaDir, { recursive: true, force: true });
}
