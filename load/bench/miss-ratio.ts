// A page read from PostgreSQL (page cache off) against the floor server (floor.ts: Fastify
// and one prepared `SELECT 1` per request), in the same run, alternating: on a machine shared
// with other work, figures minutes apart differ by more than the change measured, while two
// runs seconds apart see the same load. Prints each round's pair, the ratios, their median,
// and the load average over the run.
//
//   node --import tsx load/bench/miss-ratio.ts "$(load/bench/cluster.sh url bench)" \
//     '/builds?order=-buildid&limit=50' [--rounds 5] [--duration 5] [--connections 1] \
//     [--port 24050] [--redis redis://127.0.0.1:24379] [--src "$(load/bench/cluster.sh src REV)"]...
//     [--pgdata .data/bench/pg] [--floor-bytes 1000]
//
// The floor answers 1,000 bytes (the goal's floor); --floor-bytes as many as the page has
// shows what the page's size alone costs.
//
// Beside each rate, the CPU time each request cost: the server process's, and PostgreSQL's
// (every process of the cluster in --pgdata, including backends that exited during the run,
// through the postmaster's children's times; autovacuum and anything else the cluster does
// meanwhile counts too). A rate at c=1 is a latency, which a loaded machine stretches by
// whatever else it runs; CPU per request stretches far less, so its ratio (floor / API) says
// what the rates would on a quiet machine, where the generator's share is the same for both.
//
// The API is this checkout's services/api/main.ts (load/bench/api-nocache.yaml), or each
// snapshot given with --src (a commit before and after a change, measured in the same
// rounds); every server runs in a child process, stopped by its pid. Redis must be up (the
// API wants one; nothing on this path touches it).
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hammerWrk } from '../wrk.js';

const { values: args, positionals } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '1' },
    port: { type: 'string', default: '24050' },
    redis: { type: 'string', default: 'redis://127.0.0.1:24379' },
    src: { type: 'string', multiple: true },
    pgdata: { type: 'string', default: '.data/bench/pg' },
    'floor-bytes': { type: 'string', default: '1000' },
  },
  allowPositionals: true,
});
const [dbUrl, target] = positionals;
if (!dbUrl || !target?.startsWith('/'))
  throw new Error('usage: miss-ratio.ts DATABASE_URL /path?query [options]');
const root = fileURLToPath(new URL('../..', import.meta.url));
const floorPort = Number(args.port);
const sources = args.src?.length ? args.src : [root];

/** utime + stime of a process (and, with children, of its waited-for children), in ticks. */
function ticks(pid: number, children = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields from the state (3rd) on: utime is the 14th of the line, stime 15th, cutime 16th, cstime 17th
    const n = (i: number) => Number(f[i - 3]);
    return n(14) + n(15) + (children ? n(16) + n(17) : 0);
  } catch {
    return 0; // exited
  }
}

/** CPU ticks the PostgreSQL cluster has used so far: the postmaster, its children, the children gone. */
function pgTicks(): number {
  const postmaster = Number(readFileSync(`${args.pgdata}/postmaster.pid`, 'utf8').split('\n')[0]);
  let sum = ticks(postmaster, true);
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) sum += ticks(Number(d));
    } catch {}
  }
  return sum;
}

const TICK_US = 1e6 / 100; // USER_HZ

function start(argv: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', ...argv], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function ready(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: its server exited (${child.exitCode})`);
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer`);
}

const floor = start([
  'load/bench/floor.ts',
  dbUrl,
  '--serve',
  '--port',
  String(floorPort),
  '--bytes',
  args['floor-bytes']!,
]);
const apis = sources.map((src, i) => {
  const port = floorPort + 1 + 2 * i;
  const child = start([`${src.replace(/\/$/, '')}/services/api/main.ts`], {
    DATABASE_URL: dbUrl,
    REDIS_URL: args.redis!,
    PORT: String(port),
    PROBE_PORT: String(port + 1),
    PUBLIC_URL: `http://127.0.0.1:${port}/`,
    LOG_LEVEL: 'warn',
    MASTER_CONFIG: `${root}load/bench/api-nocache.yaml`,
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  });
  return { src, child, base: `http://127.0.0.1:${port}/api/v2` };
});
try {
  const floorBase = `http://127.0.0.1:${floorPort}`;
  await ready(`${floorBase}/static`, floor);
  for (const a of apis) await ready(`${a.base}/builders`, a.child);
  const connections = Number(args.connections);
  const durationSeconds = Number(args.duration);
  const headers = { Accept: 'application/json' };
  const hammer = (base: string, path: string, seconds: number) =>
    hammerWrk({ base, paths: [path], connections, durationSeconds: seconds, timeoutSeconds: 10, headers });
  /** A run, with the CPU µs per request of the server (pid) and of PostgreSQL. */
  const once = async (base: string, path: string, seconds: number, pid = 0) => {
    const [s0, p0] = [ticks(pid), pgTicks()];
    const run = await hammer(base, path, seconds);
    const per = (t: number) => (t * TICK_US) / Math.max(1, run.responses);
    return { ...run, serverUs: per(ticks(pid) - s0), pgUs: per(pgTicks() - p0) };
  };
  // Warm every server: prepared statements, JIT, caches.
  await hammer(floorBase, '/select1', 2);
  for (const a of apis) await hammer(a.base, target, 2);
  const ratios: number[][] = apis.map(() => []);
  const cpuRatios: number[][] = apis.map(() => []);
  // CPU µs per request, server and PostgreSQL, of each round: the floor's, then each API's.
  const cpus: { server: number[]; pg: number[] }[] = [...apis, floor].map(() => ({ server: [], pg: [] }));
  const keep = (k: number, r: { serverUs: number; pgUs: number }) => {
    cpus[k]!.server.push(r.serverUs);
    cpus[k]!.pg.push(r.pgUs);
  };
  const loads: number[] = [];
  console.log(`${target} against the floor's /select1, c=${connections}, ${durationSeconds} s runs`);
  for (const [j, a] of apis.entries()) console.log(`api ${j + 1}: ${a.src}`);
  for (let i = 0; i < Number(args.rounds); i++) {
    const f = await once(floorBase, '/select1', durationSeconds, floor.pid);
    const cpu = (r: { serverUs: number; pgUs: number }) =>
      `cpu ${r.serverUs.toFixed(0)}+${r.pgUs.toFixed(0)} µs`;
    keep(apis.length, f);
    let line = `round ${i + 1}: floor ${f.rps.toFixed(0)} req/s (p50 ${f.p50?.toFixed(2)} ms, ${cpu(f)})`;
    for (const [j, api] of apis.entries()) {
      const a = await once(api.base, target, durationSeconds, api.child.pid);
      if (a.failed || f.failed) throw new Error(`failed requests: api ${a.failed}, floor ${f.failed}`);
      ratios[j]!.push(a.rps / f.rps);
      cpuRatios[j]!.push((f.serverUs + f.pgUs) / (a.serverUs + a.pgUs));
      keep(j, a);
      line += `; api ${j + 1} ${a.rps.toFixed(0)} req/s (p50 ${a.p50?.toFixed(2)} ms, ${cpu(a)}), ratio ${(a.rps / f.rps).toFixed(2)}`;
    }
    loads.push(loadavg()[0]!);
    console.log(`${line}; load average ${loadavg()[0]!.toFixed(1)}`);
  }
  const summary = (rs: number[]) => {
    const sorted = [...rs].sort((x, y) => x - y);
    return `${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} (min ${sorted[0]!.toFixed(2)}, max ${sorted[sorted.length - 1]!.toFixed(2)})`;
  };
  for (const [j, rs] of ratios.entries()) {
    console.log(
      `api ${j + 1}: median ratio of rates ${summary(rs)}; of CPU per request (floor / api) ${summary(cpuRatios[j]!)}`,
    );
  }
  // The least CPU a request took over the rounds: what a round slowed by other work inflates least.
  const least = (xs: number[]) => Math.min(...xs).toFixed(0);
  for (const [k, c] of cpus.entries()) {
    const who = k === apis.length ? 'floor' : `api ${k + 1}`;
    console.log(
      `${who}: least CPU per request over the rounds ${least(c.server)} µs server, ${least(c.pg)} µs PostgreSQL`,
    );
  }
  console.log(`load average (1 min) ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
} finally {
  floor.kill('SIGTERM');
  for (const a of apis) a.child.kill('SIGTERM');
}
