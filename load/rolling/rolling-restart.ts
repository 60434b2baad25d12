// The rolling restart of load/rolling/run.sh: 2 API processes behind HAProxy, wrk sending
// GETs through it the whole time, and each process replaced in turn the way a Deployment
// with maxSurge 1 and maxUnavailable 0 replaces pods:
//
//   1. start a new process, wait for its /readyz, add it to the proxy's backend;
//   2. terminate the old one. Kubernetes removes its endpoint and runs its preStop hook at
//      the same moment; the proxy learns of the removal `lag` ms later (an ingress
//      controller watching endpoints). Meanwhile the pod waits `prestop` seconds (mode
//      `prestop`) or gets SIGTERM at once (mode `none`), then closes gracefully.
//
// The proxy changes its backend servers through HAProxy's runtime API, without a reload, as
// ingress controllers apply endpoint changes (a reload of nginx closes the clients'
// keep-alive connections itself, which wrk counts as errors whatever the API does). It
// does not retry another server (`retries 0`, no redispatch): so does a load balancer in
// front of a Service, and ingress-nginx for any non-idempotent request (a JSON-RPC POST). A
// request sent to a process that is gone is then a failed request, as it is for the user.
// wrk counts them: non-2xx answers and socket errors.
//
// It drives processes and HTTP only (services/api/main.ts, as `npm run api` starts it).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    modes: { type: 'string', default: 'none,prestop' },
    duration: { type: 'string', default: '40' },
    connections: { type: 'string', default: '32' },
    prestop: { type: 'string', default: '5' },
    lag: { type: 'string', default: '1000' },
    'proxy-port': { type: 'string', default: '20180' },
    dir: { type: 'string', default: '.data/rolling' },
  },
});
const DIR = resolve(args.dir!);
const DURATION = Number(args.duration);
const PRESTOP_S = Number(args.prestop);
const LAG_MS = Number(args.lag);
const PROXY_PORT = Number(args['proxy-port']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

interface Api {
  port: number;
  child: ChildProcess;
  exited: Promise<number | string>;
}

async function startApi(): Promise<Api> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/api/main.ts'], {
    // The benchmarks' configuration: one client, far past the per-client rate limit.
    env: {
      ...process.env,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      OTEL_TRACES_EXPORTER: 'none',
      MASTER_CONFIG: 'load/bench/api.yaml',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | string>((r) => child.once('exit', (c, s) => r(c ?? s ?? -1)));
  for (const end = Date.now() + 60_000; Date.now() < end; await sleep(100)) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return { port, child, exited };
    } catch {
      // not yet
    }
    if (child.exitCode !== null) break;
  }
  child.kill('SIGKILL');
  throw new Error(`api on ${port} did not become ready`);
}

const PROXY_DIR = join(DIR, 'haproxy');
const SOCKET = join(PROXY_DIR, 'admin.sock');
const SLOTS = 4;
let proxy: ChildProcess | null = null;

async function startProxy(): Promise<void> {
  mkdirSync(PROXY_DIR, { recursive: true });
  const conf = `global
  stats socket ${SOCKET} mode 600 level admin
  maxconn 4096
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  retries 0
frontend web
  bind 127.0.0.1:${PROXY_PORT}
  default_backend api
backend api
  balance roundrobin
  server-template s 1-${SLOTS} 127.0.0.1:1 disabled
`;
  writeFileSync(join(PROXY_DIR, 'haproxy.cfg'), conf);
  proxy = spawn('haproxy', ['-db', '-f', join(PROXY_DIR, 'haproxy.cfg')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (const end = Date.now() + 10_000; Date.now() < end; await sleep(50)) {
    try {
      await admin('show info');
      return;
    } catch {
      // not yet
    }
  }
  throw new Error('haproxy did not start');
}

async function stopProxy(): Promise<void> {
  if (!proxy) return;
  const p = proxy;
  proxy = null;
  const gone = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  await gone;
}

/** One command on HAProxy's runtime API (its admin socket). */
function admin(command: string): Promise<string> {
  return new Promise((ok, fail) => {
    const c = connect(SOCKET);
    let out = '';
    c.on('data', (d) => {
      out += d;
    });
    c.on('error', fail);
    c.on('end', () => ok(out));
    c.end(`${command}\n`);
  });
}

// Which backend slot each API port has.
const slots = new Map<number, number>();
async function addServer(port: number): Promise<void> {
  const used = new Set(slots.values());
  const slot = [...Array(SLOTS).keys()].map((i) => i + 1).find((i) => !used.has(i))!;
  slots.set(port, slot);
  await admin(`set server api/s${slot} addr 127.0.0.1 port ${port}`);
  await admin(`set server api/s${slot} state ready`);
}
async function removeServer(port: number): Promise<void> {
  await admin(`set server api/s${slots.get(port)} state maint`);
  slots.delete(port);
}

interface WrkResult {
  requests: number;
  non2xx: number;
  socketErrors: number;
}

function runWrk(): { done: Promise<WrkResult>; child: ChildProcess } {
  const child = spawn(
    'wrk',
    [
      '-t2',
      `-c${args.connections}`,
      `-d${DURATION}s`,
      '--timeout',
      '10s',
      `http://127.0.0.1:${PROXY_PORT}/api/v2/builders`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  const done = new Promise<WrkResult>((ok) =>
    child.once('exit', () => {
      const n = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
      const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      if (process.env.SHOW_WRK) console.log(out);
      ok({
        requests: n(/(\d+) requests in/),
        non2xx: n(/Non-2xx or 3xx responses: (\d+)/),
        socketErrors: socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
      });
    }),
  );
  return { done, child };
}

async function terminate(old: Api, mode: string): Promise<void> {
  // The endpoint leaves: the proxy hears of it after the lag...
  const removal = sleep(LAG_MS).then(() => removeServer(old.port));
  // ...while the pod runs its preStop hook, then gets SIGTERM.
  if (mode === 'prestop') await sleep(PRESTOP_S * 1000);
  old.child.kill('SIGTERM');
  const code = await old.exited;
  await removal;
  if (code !== 0) throw new Error(`api on ${old.port} exited ${code}`);
}

async function measure(mode: string): Promise<WrkResult & { mode: string; restarts: number }> {
  let apis = [await startApi(), await startApi()];
  await startProxy();
  for (const a of apis) await addServer(a.port);
  try {
    const wrk = runWrk();
    await sleep(3000);
    let restarts = 0;
    // Roll both, one at a time, and again while the load lasts.
    const end = Date.now() + (DURATION - 3) * 1000 - (PRESTOP_S * 1000 + LAG_MS + 8000);
    do {
      for (let i = 0; i < 2; i++) {
        const fresh = await startApi();
        const old = apis[0]!;
        apis = [...apis.slice(1), fresh];
        await addServer(fresh.port);
        await sleep(500);
        await terminate(old, mode);
        restarts++;
      }
    } while (Date.now() < end);
    const result = await wrk.done;
    return { mode, restarts, ...result };
  } finally {
    await stopProxy();
    slots.clear();
    for (const a of apis) a.child.kill('SIGTERM');
    await Promise.all(apis.map((a) => a.exited));
  }
}

const results = [];
for (const mode of args.modes!.split(',')) results.push(await measure(mode));
console.log(
  `\nrolling restarts of 2 API processes behind HAProxy (no retries), ${DURATION} s of wrk -c${args.connections}, ` +
    `proxy lag ${LAG_MS} ms, preStop ${PRESTOP_S} s:\n`,
);
console.log('| mode | processes replaced | requests | failed (non-2xx) | failed (socket errors) |');
console.log('|---|---|---|---|---|');
for (const r of results)
  console.log(
    `| ${r.mode === 'prestop' ? `preStop ${PRESTOP_S} s` : 'SIGTERM at once'} | ${r.restarts} | ${r.requests} | ${r.non2xx} | ${r.socketErrors} |`,
  );
