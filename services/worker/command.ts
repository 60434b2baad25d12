// Running one step command on the worker: a shell string or an argv list, in a work
// directory, with an environment and a timeout, its output streamed as it appears (o for
// stdout, e for stderr, h for the header lines Buildbot's worker writes around a command).
// The command runs in its own process group, so an interrupt or a timeout kills everything
// it started, not just the shell.
import { spawn } from 'node:child_process';
import { chownSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type StepUser, stepBaseEnvironment } from './credentials.js';

export type Stream = 'o' | 'e' | 'h';

export interface CommandSpec {
  command: string | readonly string[];
  workdir: string;
  /** Added to (or, with a null value, removed from) the worker's environment. */
  env?: Record<string, string | null>;
  /** Seconds without output before the command is killed (Buildbot's `timeout`). */
  timeout?: number;
  /** Seconds the command may run at all (Buildbot's `maxTime`). */
  maxTime?: number;
  /** Who the command runs as (the agent must be root); absent: the agent's own user. */
  user?: StepUser;
  /** The signal that ends it when interrupted or timed out, without SIG (default KILL). */
  interruptSignal?: string;
  /** Seconds between a SIGTERM and interruptSignal (Buildbot's sigtermTime); unset: no SIGTERM first. */
  sigtermTime?: number;
}

export interface CommandResult {
  /** Exit code, or null when a signal ended it. */
  rc: number | null;
  signal: string | null;
  interrupted: boolean;
  timedOut: boolean;
  elapsedSeconds: number;
}

export interface RunningCommand {
  /** The command's process group (its leader's pid); undefined if it never started. */
  pgid: number | undefined;
  result: Promise<CommandResult>;
  interrupt(reason: string): void;
  /** Kill the whole process group now, without the grace an interrupt gives. */
  kill(reason: string): void;
  /** Stop reading output until resumed (the master has not acknowledged enough yet). */
  pause(): void;
  resume(): void;
}

// After its signal, a command that is still there this long later is killed (buildbot-worker
// gives up on it after as long, and reports a fake rc).
const KILL_GRACE_MS = 5000;
const SIGNALS = new Set(['KILL', 'TERM', 'INT', 'HUP', 'QUIT', 'USR1', 'USR2']);

function environment(
  extra: CommandSpec['env'],
  cwd: string,
  user: StepUser | undefined,
): Record<string, string> {
  const env = stepBaseEnvironment();
  if (user) Object.assign(env, { HOME: user.home, USER: user.name, LOGNAME: user.name });
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (v === null) delete env[k];
    else env[k] = v;
  }
  env.PWD = cwd;
  return env;
}

/** The work directory, created; with a step user, the directories made here are theirs. */
function makeWorkdir(dir: string, user: StepUser | undefined): void {
  const first = mkdirSync(dir, { recursive: true });
  if (!user || first === undefined) return;
  for (let d = dir; ; d = dirname(d)) {
    chownSync(d, user.uid, user.gid);
    if (d === first || d === dirname(d)) break;
  }
}

/** Python's repr of a str or bytes value, as Buildbot's header shows argv. */
function pyRepr(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

export function headerLines(spec: CommandSpec, env: Record<string, string>): string[] {
  const argv = typeof spec.command === 'string' ? null : spec.command;
  const display = argv ? argv.join(' ') : (spec.command as string);
  const lines = [
    display,
    ` in dir ${spec.workdir} (timeout ${spec.timeout ?? 1200} secs)`,
    ' watching logfiles {}',
  ];
  lines.push(argv ? ` argv: [${argv.map(pyRepr).join(', ')}]` : ` argv: b${pyRepr(spec.command as string)}`);
  lines.push(' environment:');
  for (const k of Object.keys(env).sort()) lines.push(`  ${k}=${env[k]}`);
  lines.push(' using PTY: False');
  return lines;
}

export function runCommand(
  spec: CommandSpec,
  onOutput: (stream: Stream, text: string) => void,
): RunningCommand {
  makeWorkdir(spec.workdir, spec.user);
  const env = environment(spec.env, spec.workdir, spec.user);
  onOutput('h', `${headerLines(spec, env).join('\n')}\n`);
  const [file, args] =
    typeof spec.command === 'string'
      ? ['/bin/sh', ['-c', spec.command]]
      : [spec.command[0]!, spec.command.slice(1)];
  const started = process.hrtime.bigint();
  const child = spawn(file, args, {
    cwd: spec.workdir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    // libuv also drops the agent's supplementary groups when it switches.
    ...(spec.user ? { uid: spec.user.uid, gid: spec.user.gid } : {}),
  });

  let interrupted = false;
  let timedOut = false;
  let ended = false;
  const killGroup = (signal: NodeJS.Signals) => {
    if (ended || child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  const signalName = SIGNALS.has(spec.interruptSignal ?? 'KILL') ? (spec.interruptSignal ?? 'KILL') : 'KILL';
  const interruptSignal = `SIG${signalName}` as NodeJS.Signals;
  // Buildbot's order: SIGTERM first when sigtermTime is set, then interruptSignal after it.
  const stop = (why: 'interrupt' | 'timeout', message: string) => {
    if (ended || interrupted || timedOut) return;
    if (why === 'interrupt') interrupted = true;
    else timedOut = true;
    onOutput('h', `${message}\n`);
    const last = () => {
      killGroup(interruptSignal);
      setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref();
    };
    if (spec.sigtermTime) {
      killGroup('SIGTERM');
      setTimeout(last, spec.sigtermTime * 1000).unref();
    } else last();
  };

  let silence: NodeJS.Timeout | undefined;
  const armSilence = () => {
    if (!spec.timeout) return;
    clearTimeout(silence);
    silence = setTimeout(
      () =>
        stop(
          'timeout',
          `command timed out: ${spec.timeout} seconds without output running ${JSON.stringify(args)}, attempting to kill`,
        ),
      spec.timeout * 1000,
    );
  };
  armSilence();
  const maxTimer = spec.maxTime
    ? setTimeout(
        () => stop('timeout', `command timed out: ${spec.maxTime} seconds elapsed, attempting to kill`),
        spec.maxTime * 1000,
      )
    : undefined;

  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (d: string) => {
    armSilence();
    onOutput('o', d);
  });
  child.stderr!.on('data', (d: string) => {
    armSilence();
    onOutput('e', d);
  });

  const result = new Promise<CommandResult>((resolve) => {
    let spawnError: Error | null = null;
    child.once('error', (err) => {
      spawnError = err;
    });
    child.once('close', (code, signal) => {
      ended = true;
      clearTimeout(silence);
      clearTimeout(maxTimer);
      const elapsedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (spawnError) onOutput('h', `error starting command: ${spawnError.message}\n`);
      const rc = spawnError ? -1 : code;
      onOutput(
        'h',
        `${rc === null ? `program finished with signal ${signal}` : `program finished with exit code ${rc}`}\n`,
      );
      onOutput('h', `elapsedTime=${elapsedSeconds.toFixed(6)}\n`);
      resolve({ rc, signal, interrupted, timedOut, elapsedSeconds });
    });
  });

  return {
    pgid: child.pid,
    result,
    interrupt: (reason) => stop('interrupt', `killing command: ${reason}`),
    kill: (reason) => {
      if (ended) return;
      interrupted = true;
      onOutput('h', `killing command now: ${reason}\n`);
      killGroup('SIGKILL');
    },
    pause: () => {
      child.stdout!.pause();
      child.stderr!.pause();
    },
    resume: () => {
      child.stdout!.resume();
      child.stderr!.resume();
    },
  };
}
