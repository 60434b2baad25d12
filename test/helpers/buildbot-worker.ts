// A real buildbot-worker (Debian's 3.7, installed by deploy/local/lib.sh) for tests: created
// with `buildbot-worker create-worker --protocol=msgpack_experimental_v7`, as a team would,
// and run in the foreground so that the test holds its pid and stops it by that pid.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Running, start } from './processes.js';

export interface BuildbotWorkerOptions {
  /** The worker's base directory (created here). */
  dir: string;
  port: number;
  name: string;
  password: string;
  admin?: string;
  host?: string;
  deleteLeftoverDirs?: boolean;
  /** Passed as --use-tls (the master's listener must then speak TLS). */
  tls?: boolean;
  /**
   * The masters' worker_silence_seconds: buildbot.tac gets Flotilla's silence guard
   * (deploy/buildbot-worker/silence-guard.py), as the migration guide tells a team to add it.
   */
  silenceGuard?: number;
  /**
   * The worker's protocol: msgpack unless a test asks for PB, which is `create-worker`'s own
   * default: the worker is then created without --protocol, as a team's plain workers are.
   */
  protocol?: 'pb' | 'msgpack_experimental_v7';
}

const GUARD = 'deploy/buildbot-worker/silence-guard.py';

export function createBuildbotWorker(o: BuildbotWorkerOptions): void {
  mkdirSync(o.dir, { recursive: true });
  execFileSync(
    'buildbot-worker',
    [
      'create-worker',
      ...(o.protocol === 'pb' ? [] : [`--protocol=${o.protocol ?? 'msgpack_experimental_v7'}`]),
      ...(o.deleteLeftoverDirs ? ['--delete-leftover-dirs'] : []),
      ...(o.tls ? ['--use-tls'] : []),
      o.dir,
      `127.0.0.1:${o.port}`,
      o.name,
      o.password,
    ],
    { stdio: 'ignore' },
  );
  if (o.admin !== undefined) writeFileSync(join(o.dir, 'info', 'admin'), o.admin);
  if (o.host !== undefined) writeFileSync(join(o.dir, 'info', 'host'), o.host);
  if (o.silenceGuard !== undefined)
    appendFileSync(
      join(o.dir, 'buildbot.tac'),
      `\n${readFileSync(GUARD, 'utf8')}\nflotilla_silence_guard(s, silence_seconds=${o.silenceGuard})\n`,
    );
}

/**
 * Start a created worker in the foreground with a small environment of its own (env execs it,
 * so the pid is the worker's); stop() sends SIGTERM, as `buildbot-worker stop` does.
 */
export function startBuildbotWorker(dir: string, env: Record<string, string> = {}): Running {
  const vars = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8', ...env };
  return start(
    'env',
    [
      '-i',
      ...Object.entries(vars).map(([k, v]) => `${k}=${v}`),
      'buildbot-worker',
      'start',
      '--nodaemon',
      dir,
    ],
    {},
  );
}
