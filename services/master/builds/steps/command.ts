// Running one command on the build's worker, for the step kinds that do (shell,
// set_property, the warning-counting kinds, shell_sequence): its output goes into the step's
// `stdio` log (or the log a shell_sequence's command names) as it comes, the files of its
// `logfiles` into logs of their own (created up front, or only once they have text with
// `lazylogfiles`), each line with the build's secrets redacted; its end becomes results
// through decodeRC, as Buildbot's RemoteCommand.results(): an exit code the map does not
// name is FAILURE, and a command killed by a signal counts as exit code -1.
import { builderDir, type StepConfig } from '../../../core/config/master-config.js';
import type { CommandRequest, OutputStream } from '../../../core/protocol/messages.js';
import { Results } from '../../../core/results.js';
import { interruptedResults } from '../interruption.js';
import { keeper } from './kept-stdout.js';
import type { StepContext } from './step.js';
import { StepLogs } from './step-logs.js';

/** The steps with Buildbot's ShellMixin parameters (master-config/shell-common.ts). */
type ShellMixinStep = Extract<StepConfig, { decodeRC: unknown }>;
type CommandStep = Extract<ShellMixinStep, { command: unknown }>;

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

/** What the worker is asked to run for this step: `command` (rendered) with the step's parameters. */
export function commandRequest(c: StepContext<ShellMixinStep>, command: string | string[]): CommandRequest {
  const { step } = c;
  return {
    command,
    workdir: `${builderDir(c.build.builder)}/${step.workdir ?? 'build'}`,
    // Buildbot's makeRemoteShellCommand: the builder's env, then the step's over it.
    env: Object.fromEntries(
      Object.entries({ ...c.build.builder.env, ...step.env }).map(([k, v]) => [k, c.render(v)]),
    ),
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

export interface RunOptions {
  /** Keep what the command writes to stdout, up to this many bytes (UTF-8). */
  keepStdout?: number;
  /** The logs to write into, left open for the caller to finish (default: the command's own). */
  logs?: StepLogs;
  /** The log of its output (default `stdio`; null: none, the output is dropped). */
  stdioLog?: string | null;
  /** Told each line of that log as it is stored (secrets redacted). */
  observe?: (stream: OutputStream, line: string) => void;
}

/** Run `command` (rendered: renderCommand) with the step's parameters. */
export async function runCommand(
  c: StepContext<ShellMixinStep>,
  signal: AbortSignal,
  command: string | string[],
  opts: RunOptions = {},
): Promise<CommandResult> {
  const { step } = c;
  const request = commandRequest(c, command);
  const logs = opts.logs ?? new StepLogs(c);
  const stdio = opts.stdioLog === null ? null : await logs.open(opts.stdioLog ?? 'stdio', 's');
  if (opts.observe) stdio?.observe(opts.observe);
  const extraLog = (name: string) => logs.open(name, LOGFILE_TYPE);
  // Buildbot adds every logfile's log before the command starts, unless lazylogfiles.
  if (!step.lazylogfiles) for (const name of Object.keys(step.logfiles)) await extraLog(name);
  const finishLogs = () => (opts.logs ? Promise.resolve() : logs.finish());

  // Interrupted while the step was being set up: the command never starts, or it would run
  // to its end with nobody left to interrupt it.
  if (signal.aborted) {
    await finishLogs();
    return { results: interruptedResults(signal), stdout: '' };
  }
  const kept = keeper(opts.keepStdout);
  // The command is on its way: the start gate's place goes to the next build (start-gate.ts).
  c.build.leaveStartGate();
  const end = await c.build.worker.run(
    request,
    async (stream: OutputStream, chunk: string, log?: string) => {
      if (log !== undefined) {
        if (Object.hasOwn(step.logfiles, log)) await (await extraLog(log)).write(stream, chunk);
        return;
      }
      if (stream === 'o') kept.add(chunk);
      await stdio?.write(stream, chunk);
    },
    signal,
  );
  if (kept.tooLong) await stdio?.write('h', `stdout not kept: over ${opts.keepStdout} bytes\n`);
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
