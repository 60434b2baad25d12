// Running one command on the build's worker, for the step kinds that do (shell,
// set_property): its output goes into the step's `stdio` log as it comes (and a shell step's
// logfiles into logs of their own once their text arrives), and its end becomes results.
import type { StepConfig } from '../../../core/config/master-config.js';
import { addLog, transact } from '../../../core/data/index.js';
import type { OutputStream } from '../../../core/protocol/messages.js';
import { Results } from '../../../core/results.js';
import { interpolate, type Properties } from '../interpolate.js';
import { interruptedResults } from '../interruption.js';
import { LogWriter } from '../log-writer.js';
import type { StepContext } from './step.js';

type CommandStep = Extract<StepConfig, { command: unknown }>;

export interface CommandResult {
  results: number;
  /** What the command wrote to stdout, when asked to keep it. */
  stdout: string;
  /** Why the worker can no longer be trusted with the build, if it cannot. */
  workerLost?: string;
}

/** The command with the build's properties filled in. */
export function renderCommand(command: string | readonly string[], props: Properties): string | string[] {
  return typeof command === 'string'
    ? interpolate(command, props)
    : command.map((a) => interpolate(a, props));
}

/** Logs named *.html are HTML ('h'); any other logfile is text ('t'). */
const logType = (name: string): 't' | 'h' => (/\.html?$/i.test(name) ? 'h' : 't');

export async function runCommand(
  c: StepContext<CommandStep>,
  signal: AbortSignal,
  opts: { keepStdout?: boolean; logfiles?: Record<string, string> } = {},
): Promise<CommandResult> {
  const { ctx, redis, codec, metrics, onLogFinished } = c.deps;
  const { step, props, stepid } = c;
  const stored = metrics ? (n: number) => metrics.linesStored(n) : undefined;
  const writer = (logid: number, type: 's' | 't' | 'h') =>
    new LogWriter(ctx, redis, logid, type, codec, stored);
  const stdio = writer(await transact(ctx, (tx) => addLog(tx, stepid, 'stdio', 's')), 's');
  const logfiles = opts.logfiles ?? {};
  const extra = new Map<string, Promise<LogWriter>>();
  const extraLog = (name: string) => {
    let w = extra.get(name);
    if (!w) {
      const type = logType(name);
      w = transact(ctx, (tx) => addLog(tx, stepid, name, type)).then((id) => writer(id, type));
      extra.set(name, w);
    }
    return w;
  };
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
  let stdout = '';
  const end = await c.build.worker.run(
    {
      command: renderCommand(step.command, props),
      workdir: `${c.build.builder.name}/${step.workdir ?? 'build'}`,
      env: Object.fromEntries(Object.entries(step.env).map(([k, v]) => [k, interpolate(v, props)])),
      timeout: step.timeout,
      ...(Object.keys(logfiles).length ? { logfiles } : {}),
    },
    async (stream: OutputStream, chunk: string, log?: string) => {
      if (log !== undefined) {
        if (Object.hasOwn(logfiles, log)) await (await extraLog(log)).write(stream, chunk);
        return;
      }
      if (opts.keepStdout && stream === 'o') stdout += chunk;
      await stdio.write(stream, chunk);
    },
    signal,
  );
  await finishLogs();

  if ('lost' in end) return { results: Results.RETRY, stdout, workerLost: end.reason };
  // Interrupted by its signal: the interruption's results; by anything else (the worker
  // going down): RETRY.
  if (end.interrupted)
    return { results: signal.aborted ? interruptedResults(signal) : Results.RETRY, stdout };
  return { results: end.rc === 0 ? Results.SUCCESS : Results.FAILURE, stdout };
}
