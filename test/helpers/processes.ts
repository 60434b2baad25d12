// Real processes for tests: started with their own environment, waited for, and always
// stopped by the pid the test holds.
import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../../deploy/local/free-port.js';
import { serviceCommand } from './service-build.js';
import { waitFor } from './wait.js';

// Ports: deploy/local/free-port.ts (drawn below the ephemeral range, reserved machine-wide).
export { freePort };

export interface Running {
  child: ChildProcess;
  pid: number;
  output: () => string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | string>;
}

export interface StartOptions {
  /** Only `env`, not this process's environment too (a container's view). */
  cleanEnv?: boolean;
  uid?: number;
  gid?: number;
  cwd?: string;
  /** Written to the process's standard input, which is then closed (a worker's password). */
  input?: string;
}

// Every child still running when the test process ends is killed by its pid. A test that
// timed out can leave its afterAll waiting on a client before the stop of what it started
// (a redelivery run at load 15 left a sentinel deployment's redis-server running so). The
// runner ends its worker processes with SIGTERM, whose default leaves no 'exit' event: the
// children are killed first, and the signal then has its default effect.
const running = new Set<ChildProcess>();
const killRunning = () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
};
const onTerm = () => {
  killRunning();
  process.removeListener('SIGTERM', onTerm);
  if (process.listenerCount('SIGTERM') === 0) process.kill(process.pid, 'SIGTERM');
};
process.once('exit', killRunning);
process.on('SIGTERM', onTerm);

export function start(
  command: string,
  args: string[],
  env: Record<string, string>,
  opts: StartOptions = {},
): Running {
  const child = spawn(command, args, {
    env: opts.cleanEnv ? env : { ...process.env, ...env },
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    ...(opts.uid !== undefined ? { uid: opts.uid } : {}),
    ...(opts.gid !== undefined ? { gid: opts.gid } : {}),
    ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
  });
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  running.add(child);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, sig) => {
      running.delete(child);
      resolve(code ?? sig ?? -1);
    }),
  );
  return {
    child,
    pid: child.pid!,
    output: () => out,
    exited,
    async stop(signal = 'SIGTERM', graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      process.kill(child.pid!, signal);
      const timer = setTimeout(() => {
        if (child.exitCode === null) process.kill(child.pid!, 'SIGKILL');
      }, graceMs);
      const res = await exited;
      clearTimeout(timer);
      return res;
    },
  };
}

/** A Flotilla service, run as `npm run <name>` runs it (from the suite's build of it: serviceCommand). */
export function startService(
  name: 'api' | 'master' | 'worker',
  env: Record<string, string>,
  opts: StartOptions = {},
): Running {
  return start(
    process.execPath,
    serviceCommand(`services/${name}/main.ts`),
    { LOG_LEVEL: 'info', ...env },
    opts,
  );
}

export async function status(url: string): Promise<number> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  await res.arrayBuffer();
  return res.status;
}

/** A private Redis on a free port, without persistence. */
export async function startRedis(port?: number): Promise<{ port: number; url: string; proc: Running }> {
  const p = port ?? (await freePort());
  const proc = start(
    'redis-server',
    ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {},
  );
  await waitFor('redis', async () => proc.output().includes('Ready to accept connections'), { proc });
  return { port: p, url: `redis://127.0.0.1:${p}`, proc };
}
