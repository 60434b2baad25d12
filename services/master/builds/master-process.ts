// A command run on the master itself (a master_shell step), bounded as a worker bounds the
// commands it runs: `timeout` seconds without output and `maxTime` seconds in all end it,
// and an interrupt ends it, each by interruptSignal to its whole process group, then SIGKILL
// if the group outlives KILL_GRACE_MS. Its output is read one piece at a time, the next only
// once the previous is stored, so a command that prints without end waits on its pipe
// instead of filling the master's memory. Buildbot's MasterShellCommand has no time limit
// ("TODO add a timeout?"); a master is shared by every build it runs, so here it has one.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';

export const KILL_GRACE_MS = 5000;

export interface MasterProcessSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Seconds without output. */
  timeout: number;
  /** Seconds in all. */
  maxTime?: number;
  /** Without SIG (KILL, TERM...). */
  interruptSignal: string;
}

export type MasterProcessEnd =
  | { rc: number | null; signal: number | null; stopped?: 'timeout' | 'maxTime' | 'interrupt' }
  | { spawnError: string };

export type Write = (stream: 'o' | 'e' | 'h', text: string) => Promise<void>;

/** Run the command; rejects (its group killed) when its output cannot be stored. */
export function runOnMaster(
  spec: MasterProcessSpec,
  write: Write,
  abort: AbortSignal,
): Promise<MasterProcessEnd> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = spec.argv;
    const child = spawn(file!, args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stopped: 'timeout' | 'maxTime' | 'interrupt' | undefined;
    let exited = false;
    let settled = false;
    let writeError: unknown;
    let writes: Promise<void> = Promise.resolve();
    const timers: NodeJS.Timeout[] = [];
    const killGroup = (sig: NodeJS.Signals) => {
      if (exited || child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // already gone
      }
    };
    const stop = (why: 'timeout' | 'maxTime' | 'interrupt', message: string) => {
      if (stopped) return;
      stopped = why;
      writes = writes.then(() => write('h', `${message}\n`)).catch(() => {});
      killGroup(`SIG${spec.interruptSignal}` as NodeJS.Signals);
      timers.push(setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref());
    };
    let silence: NodeJS.Timeout | undefined;
    const quiet = () => {
      if (silence) clearTimeout(silence);
      silence = setTimeout(
        () =>
          stop('timeout', `command timed out: ${spec.timeout} seconds without output, attempting to kill`),
        spec.timeout * 1000,
      );
    };
    quiet();
    if (spec.maxTime !== undefined)
      timers.push(
        setTimeout(
          () => stop('maxTime', `command timed out: ${spec.maxTime} seconds elapsed, attempting to kill`),
          spec.maxTime * 1000,
        ),
      );
    const onAbort = () => stop('interrupt', 'interrupted: killing the command');
    if (abort.aborted) onAbort();
    else abort.addEventListener('abort', onAbort, { once: true });
    // One piece at a time from each stream, stored in the order read.
    const pump = (stream: Readable, name: 'o' | 'e') => {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => {
        quiet();
        stream.pause();
        writes = writes
          .then(() => (writeError === undefined ? write(name, text) : undefined))
          .catch((err) => {
            writeError ??= err;
            killGroup('SIGKILL');
          })
          .finally(() => stream.resume());
      });
    };
    pump(child.stdout!, 'o');
    pump(child.stderr!, 'e');
    const finish = (end: MasterProcessEnd) => {
      if (settled) return;
      settled = true;
      exited = true;
      if (silence) clearTimeout(silence);
      for (const t of timers) clearTimeout(t);
      abort.removeEventListener('abort', onAbort);
      void writes.then(() => (writeError === undefined ? resolve(end) : reject(writeError)));
    };
    child.on('error', (err) => finish({ spawnError: err.message }));
    child.on('close', (code, sig) =>
      finish({
        rc: code,
        signal: sig ? (constants.signals[sig] ?? null) : null,
        ...(stopped ? { stopped } : {}),
      }),
    );
  });
}
