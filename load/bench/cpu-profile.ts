// Where the API's own CPU goes on one URL: the API (page cache off, api-nocache.yaml) runs
// under `node --cpu-prof` while wrk asks it the URL, and the samples taken during the run
// (start-up and warm-up left out, by their time stamps) are summed by function, as CPU µs
// per request. What the profile cannot see (PostgreSQL, the kernel's side of a socket write
// beyond the call that made it) is not here; miss-ratio.ts measures that whole.
//
//   node --import tsx load/bench/cpu-profile.ts "$(load/bench/cluster.sh url bench)" \
//     '/builds?order=-buildid&limit=50' [--duration 15] [--connections 1] [--top 30] \
//     [--modules] [--port 24060] [--redis redis://127.0.0.1:24379] [--src "$(load/bench/cluster.sh src REV)"]
//
// The API runs in a child process, stopped by its pid (SIGTERM: it exits cleanly, and node
// writes the profile then).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hammerWrk } from '../wrk.js';

const { values: args, positionals } = parseArgs({
  options: {
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '1' },
    top: { type: 'string', default: '30' },
    // Also sum the samples by module: a package, a services/ file, node's own, or native.
    modules: { type: 'boolean', default: false },
    port: { type: 'string', default: '24060' },
    redis: { type: 'string', default: 'redis://127.0.0.1:24379' },
    src: { type: 'string' },
  },
  allowPositionals: true,
});
const [dbUrl, target] = positionals;
if (!dbUrl || !target?.startsWith('/'))
  throw new Error('usage: cpu-profile.ts DATABASE_URL /path?query [options]');
const root = fileURLToPath(new URL('../..', import.meta.url));
const src = (args.src ?? root).replace(/\/$/, '');
const port = Number(args.port);
const dir = mkdtempSync(join(tmpdir(), 'flotilla-cpu-'));

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: Node[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const child = spawn(
  process.execPath,
  ['--cpu-prof', '--cpu-prof-dir', dir, '--import', 'tsx', `${src}/services/api/main.ts`],
  {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: dbUrl,
      REDIS_URL: args.redis!,
      PORT: String(port),
      PROBE_PORT: String(port + 1),
      PUBLIC_URL: `http://127.0.0.1:${port}/`,
      LOG_LEVEL: 'warn',
      MASTER_CONFIG: `${root}load/bench/api-nocache.yaml`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  },
);
const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
try {
  const base = `http://127.0.0.1:${port}/api/v2`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the API exited (${child.exitCode})`);
    if (
      await fetch(`${base}/builders`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 600) throw new Error('the API did not answer');
    await new Promise((r) => setTimeout(r, 100));
  }
  const opts = {
    base,
    paths: [target],
    connections: Number(args.connections),
    timeoutSeconds: 10,
    headers: { Accept: 'application/json' },
  };
  await hammerWrk({ ...opts, durationSeconds: 3 });
  // CLOCK_MONOTONIC in µs, the clock of the profile's time stamps.
  const from = Number(process.hrtime.bigint() / 1000n);
  const run = await hammerWrk({ ...opts, durationSeconds: Number(args.duration) });
  const to = Number(process.hrtime.bigint() / 1000n);
  child.kill('SIGTERM');
  await exited;
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no profile written');
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const modules = new Map<string, number>();
  let t = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i]!;
    t += dt;
    if (t < from || t > to) continue;
    const f = byId.get(profile.samples[i]!)!.callFrame;
    const where = f.url
      ? ` ${f.url.replace(/^file:\/\/.*?node_modules\//, '').replace(/^file:\/\/.*\/services\//, 'services/')}:${f.lineNumber + 1}`
      : '';
    const name = `${f.functionName || '(anonymous)'}${where}`;
    self.set(name, (self.get(name) ?? 0) + dt);
    const module =
      f.url.match(/node_modules\/((@[^/]+\/)?[^/]+)/)?.[1] ??
      f.url.match(/services\/.*?\.ts/)?.[0] ??
      (f.url.startsWith('node:') ? 'node' : f.url ? f.url : `(${f.functionName || 'native'})`);
    modules.set(module, (modules.get(module) ?? 0) + dt);
    total += dt;
  }
  const per = (us: number) => (us / Math.max(1, run.responses)).toFixed(1);
  const busy = total - (self.get('(idle)') ?? 0);
  console.log(
    `${target}: ${run.rps.toFixed(0)} req/s over ${args.duration} s at c=${args.connections} (${run.responses} responses); ` +
      `the API's samples ${per(total)} µs a request, ${per(busy)} µs not idle`,
  );
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(args.top));
  for (const [name, us] of top) console.log(`${per(us).padStart(7)} µs  ${name}`);
  if (args.modules) {
    console.log('by module:');
    const byModule = [...modules.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(args.top));
    for (const [name, us] of byModule) console.log(`${per(us).padStart(7)} µs  ${name}`);
  }
} finally {
  if (child.exitCode === null) child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
