// Running one command on the build's worker, for the step kinds that do (shell,
// set_property): its output goes into the step's `stdio` log as it comes, the files of its
// `logfiles` into logs of their own (created up front, or only once they have text with
// `lazylogfiles`), each line with the build's secrets redacted; its end becomes results
// through decodeRC, as Buildbot's RemoteCommand.results(): an exit code the map does not
// name is FAILURE, and a command killed by a signal counts as exit code -1.
import type { StepConfig } from '../../../core/config/master-config.js';
import { addLog, transact } from '../../../core/data/index.js';
import type { CommandRequest, OutputStream } from '../../../core/protocol/messages.js';
import { Results } from '../../../core/results.js';
import { interruptedResults } from '../interruption.js';
import { LogWriter } from '../log-writer.js';
import { keeper } from './kept-stdout.js';
import type { StepContext } from './step.js';

type CommandStep = Extract<StepConfig, { command: unknown }>;

export interface CommandResult {
  results: number;
  /** What the command wrote to stdout, when asked to keep it. */
  stdout: string;
  /** Its stdout was longer than asked to keep: `stdout` is empty. */
  stdoutTooLong?: true;
  /** Why the worker can no longer be trusted with the build, if it cannot. */
  workerLost?: string;
}

/** The command with the build's values filled in. */
export function renderCommand(
  command: CommandStep['command'],
  render: StepContext['render'],
): string | string[] {
  return Array.isArray(command) ? command.map(render) : render(command);
}

/**
 * A logfile's log is a stream log ('s'), whatever its name, as Buildbot 3.7's
 * (buildstep.py adds each with addLog's default type and feeds it as stdout).
 */
const LOGFILE_TYPE = 's';

/** What the worker is asked to run for this step. */
export function commandRequest(c: StepContext<CommandStep>): CommandRequest {
  const { step } = c;
  return {
    command: renderCommand(step.command, c.render),
    workdir: `${c.build.builder.name}/${step.workdir ?? 'build'}`,
    env: Object.fromEntries(Object.entries(step.env).map(([k, v]) => [k, c.render(v)])),
    timeout: step.timeout,
    ...(step.maxTime !== undefined ? { maxTime: step.maxTime } : {}),
    ...(Object.keys(step.logfiles).length ? { logfiles: step.logfiles } : {}),
    interruptSignal: step.interruptSignal,
    ...(step.sigtermTime !== undefined ? { sigtermTime: step.sigtermTime } : {}),
  };
}

/** Buildbot's decodeRC: the result the map gives the exit code, else FAILURE. */
export function decodeRC(map: Readonly<Record<string, number>>, rc: number | null): number {
  return map[String(rc ?? -1)] ?? Results.FAILURE;
}

export async function runCommand(
  c: StepContext<CommandStep>,
  signal: AbortSignal,
  /** keepStdout: keep what the command writes to stdout, up to this many bytes (UTF-8). */
  opts: { keepStdout?: number } = {},
): Promise<CommandResult> {
  const { ctx, redis, codec, metrics, onLogFinished } = c.deps;
  const { step, stepid } = c;
  const request = commandRequest(c);
  const stored = metrics ? (n: number) => metrics.linesStored(n) : undefined;
  const writer = (logid: number, type: 's' | 't' | 'h') =>
    new LogWriter(ctx, redis, logid, type, codec, stored, c.build.redactor);
  const stdio = writer(await transact(ctx, (tx) => addLog(tx, stepid, 'stdio', 's')), 's');
  const extra = new Map<string, Promise<LogWriter>>();
  const extraLog = (name: string) => {
    let w = extra.get(name);
    if (!w) {
      w = transact(ctx, (tx) => addLog(tx, stepid, name, LOGFILE_TYPE)).then((id) =>
        writer(id, LOGFILE_TYPE),
      );
      extra.set(name, w);
    }
    return w;
  };
  // Buildbot adds every logfile's log before the command starts, unless lazylogfiles.
  if (!step.lazylogfiles) for (const name of Object.keys(step.logfiles)) await extraLog(name);
  const finishLogs = async () => {
    await stdio.finish();
    onLogFinished?.(stdio.logid);
    for (const w of extra.values()) {
      const lw = await w;
      await lw.finish();
      onLogFinished?.(lw.logid);
    }
  };

  // Interrupted while the step was being set up: the command never starts, or it would run
  // to its end with nobody left to interrupt it.
  if (signal.aborted) {
    await finishLogs();
    return { results: interruptedResults(signal), stdout: '' };
  }
  const kept = keeper(opts.keepStdout);
  const end = await c.build.worker.run(
    request,
    async (stream: OutputStream, chunk: string, log?: string) => {
      if (log !== undefined) {
        if (Object.hasOwn(step.logfiles, log)) await (await extraLog(log)).write(stream, chunk);
        return;
      }
      if (stream === 'o') kept.add(chunk);
      await stdio.write(stream, chunk);
    },
    signal,
  );
  if (kept.tooLong) await stdio.write('h', `stdout not kept: over ${opts.keepStdout} bytes\n`);
  await finishLogs();
  const stdout = kept.text();

  if ('lost' in end) return { results: Results.RETRY, stdout, workerLost: end.reason };
  // Interrupted by its signal: the interruption's results; by anything else (the worker
  // going down): RETRY.
  const results = end.interrupted
    ? signal.aborted
      ? interruptedResults(signal)
      : Results.RETRY
    : decodeRC(step.decodeRC, end.rc);
  return { results, stdout, ...(kept.tooLong ? { stdoutTooLong: true } : {}) };
}
