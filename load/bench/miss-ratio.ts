// A page read from PostgreSQL (page cache off) against the floor server (floor.ts: Fastify
// and one prepared `SELECT 1` per request), in the same run, alternating: on a machine shared
// with other work, figures minutes apart differ by more than the change measured, while two
// runs seconds apart see the same load. Prints each round's pair, the ratios, their median,
// and the load average over the run.
//
//   node --import tsx load/bench/miss-ratio.ts "$(load/bench/cluster.sh url bench)" \
//     '/builds?order=-buildid&limit=50' [--rounds 5] [--duration 5] [--connections 1] \
//     [--port 24050] [--redis redis://127.0.0.1:24379] [--src "$(load/bench/cluster.sh src REV)"]...
//
// The API is this checkout's services/api/main.ts (load/bench/api-nocache.yaml), or each
// snapshot given with --src (a commit before and after a change, measured in the same
// rounds); every server runs in a child process, stopped by its pid. Redis must be up (the
// API wants one; nothing on this path touches it).
import { type ChildProcess, spawn } from 'node:child_process';
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
  },
  allowPositionals: true,
});
const [dbUrl, target] = positionals;
if (!dbUrl || !target?.startsWith('/'))
  throw new Error('usage: miss-ratio.ts DATABASE_URL /path?query [options]');
const root = fileURLToPath(new URL('../..', import.meta.url));
const floorPort = Number(args.port);
const sources = args.src?.length ? args.src : [root];

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

const floor = start(['load/bench/floor.ts', dbUrl, '--serve', '--port', String(floorPort)]);
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
  const once = (base: string, path: string, seconds: number) =>
    hammerWrk({ base, paths: [path], connections, durationSeconds: seconds, timeoutSeconds: 10, headers });
  // Warm every server: prepared statements, JIT, caches.
  await once(floorBase, '/select1', 2);
  for (const a of apis) await once(a.base, target, 2);
  const ratios: number[][] = apis.map(() => []);
  const loads: number[] = [];
  console.log(`${target} against the floor's /select1, c=${connections}, ${durationSeconds} s runs`);
  for (const [j, a] of apis.entries()) console.log(`api ${j + 1}: ${a.src}`);
  for (let i = 0; i < Number(args.rounds); i++) {
    const f = await once(floorBase, '/select1', durationSeconds);
    let line = `round ${i + 1}: floor ${f.rps.toFixed(0)} req/s (p50 ${f.p50?.toFixed(2)} ms)`;
    for (const [j, api] of apis.entries()) {
      const a = await once(api.base, target, durationSeconds);
      if (a.failed || f.failed) throw new Error(`failed requests: api ${a.failed}, floor ${f.failed}`);
      ratios[j]!.push(a.rps / f.rps);
      line += `; api ${j + 1} ${a.rps.toFixed(0)} req/s (p50 ${a.p50?.toFixed(2)} ms), ratio ${(a.rps / f.rps).toFixed(2)}`;
    }
    loads.push(loadavg()[0]!);
    console.log(`${line}; load average ${loadavg()[0]!.toFixed(1)}`);
  }
  for (const [j, rs] of ratios.entries()) {
    const sorted = [...rs].sort((x, y) => x - y);
    console.log(
      `api ${j + 1}: median ratio ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} ` +
        `(min ${sorted[0]!.toFixed(2)}, max ${sorted[sorted.length - 1]!.toFixed(2)})`,
    );
  }
  console.log(`load average (1 min) ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
} finally {
  floor.kill('SIGTERM');
  for (const a of apis) a.child.kill('SIGTERM');
}
