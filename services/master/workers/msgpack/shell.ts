// The shell command on a buildbot-worker (buildbot_worker/commands/shell.py), asked and
// answered as a Flotilla agent's command is (../connection.ts): the worker sends only the
// exit code, so the lines Buildbot's master writes (remotecommand.py) are written here, and
// a timeout or a kill is read from the worker's header lines.
import { constants } from 'node:os';
import type { CommandRequest } from '../../../core/protocol/messages.js';
import type { CommandEnd, OutputSink } from '../connection.js';
import type { CommandStarter } from './command-start.js';

/**
 * A shell command: the same request and outcome as on a Flotilla agent. An abort of `signal`
 * interrupts it on the worker; the result settles after all its output went through the sink.
 */
export function runShell(
  conn: CommandStarter,
  request: CommandRequest,
  sink: OutputSink,
  signal?: AbortSignal,
): Promise<CommandEnd> {
  let timedOut = false;
  let killedBy: string | null = null;
  let interrupted = false;
  // buildbot-worker sends the rc, then `elapsedTime=` as its last header (runprocess.py,
  // finished()); Buildbot's master writes `program finished` when the rc arrives, so its log
  // has that line first. The rc reaches this file only with the command's end, so the
  // elapsedTime line is held until then and written after it, in Buildbot's order.
  let elapsedLine = '';
  const output: OutputSink = (stream, text, log) => {
    if (stream === 'h' && log === undefined) {
      if (/^command timed out/m.test(text)) timedOut = true;
      const m = /process killed by signal (\d+)/.exec(text);
      if (m) killedBy = signalName(Number(m[1]));
      if (/^elapsedTime=[0-9.]+\n$/.test(text)) {
        elapsedLine = text;
        return Promise.resolve();
      }
    }
    return sink(stream, text, log);
  };
  const started = Date.now();
  const { id, done } = conn.start(
    'shell',
    {
      command: request.command,
      workdir: conn.path(request.workdir),
      env: request.env ?? {},
      want_stdout: true,
      want_stderr: true,
      logfiles: request.logfiles ?? {},
      timeout: request.timeout ?? null,
      maxTime: request.maxTime ?? null,
      sigtermTime: request.sigtermTime ?? null,
      usePTY: false,
      logEnviron: true,
      initial_stdin: null,
      interruptSignal: request.interruptSignal ?? 'KILL',
    },
    { output },
  );
  const interrupt = () => {
    interrupted = true;
    const r = signal?.reason;
    conn.interruptCommand(id, r instanceof Error ? r.message : String(r));
  };
  if (signal?.aborted) interrupt();
  else signal?.addEventListener('abort', interrupt, { once: true });
  return done.then(async (end): Promise<CommandEnd> => {
    signal?.removeEventListener('abort', interrupt);
    if ('lost' in end) return end;
    const value = end.values.get('rc');
    const rc = end.failure === null && typeof value === 'number' ? value : null;
    // The worker sends only the code; Buildbot's master writes this line (remotecommand.py).
    const last =
      end.failure !== null
        ? `${end.failure}\n`
        : rc !== null
          ? `program finished with exit code ${rc}\n`
          : '';
    try {
      for (const line of [last, elapsedLine]) if (line) await sink('h', line);
    } catch (err) {
      return { lost: true, reason: `output could not be stored: ${(err as Error).message}` };
    }
    const elapsed = end.values.get('elapsed');
    return {
      rc,
      signal: killedBy,
      interrupted,
      timedOut,
      elapsedSeconds: typeof elapsed === 'number' ? elapsed : (Date.now() - started) / 1000,
    };
  });
}

function signalName(n: number): string {
  return Object.entries(constants.signals).find(([, v]) => v === n)?.[0] ?? `signal ${n}`;
}
