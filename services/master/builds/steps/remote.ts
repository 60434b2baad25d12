// Several commands on the worker as parts of one step (a source step's git commands, its
// directory checks), all writing to the step's one `stdio` log, as Buildbot's
// runCommand(RemoteShellCommand) does for composite steps. A command that fails where the
// step cannot go on throws StepFailed (Buildbot's BuildStepFailed: the step ends FAILURE);
// an interrupt or a lost worker throws StepEnded with the results the step ends with.
import type { StepConfig } from '../../../core/config/master-config.js';
import { addLog, transact } from '../../../core/data/index.js';
import { Results } from '../../../core/results.js';
import { interruptedResults } from '../interruption.js';
import { LogWriter } from '../log-writer.js';
import { keeper } from './kept-stdout.js';
import type { StepContext } from './step.js';

/**
 * The most of a command's stdout kept for the step (`collectStdout`); past it the step fails.
 * The longest answer a step collects is multiple_file_upload's glob, one matched path a line:
 * 1 MiB holds over 10,000 paths of 100 bytes, each then uploaded one by one. git's answers
 * (`--version`, `rev-parse`, `describe`, the workdir's `ls -A`) are far shorter. A worker
 * that writes more is not answering the question; keeping all of it would let it fill the
 * master's memory.
 */
export const MAX_COLLECTED_STDOUT = 1024 * 1024;

export class StepFailed extends Error {
  override name = 'StepFailed';
}

export class StepEnded extends Error {
  override name = 'StepEnded';
  constructor(
    readonly results: number,
    readonly workerLost?: string,
  ) {
    super(`step ended: ${results}`);
  }
}

export interface RunOptions {
  /** Relative to the worker's base directory. */
  workdir: string;
  env?: Record<string, string>;
  collectStdout?: boolean;
  /** Throw StepFailed unless the exit code is 0 (default true). */
  abandonOnFailure?: boolean;
  sigtermTime?: number;
  /** Keep the command's output out of the log (a question the step asks the worker). */
  quiet?: boolean;
}

export class RemoteCommands {
  private constructor(
    private readonly c: StepContext<StepConfig>,
    private readonly signal: AbortSignal,
    private readonly stdio: LogWriter,
  ) {}

  static async open(c: StepContext<StepConfig>, signal: AbortSignal): Promise<RemoteCommands> {
    const { ctx, redis, codec, metrics } = c.deps;
    const logid = await transact(ctx, (tx) => addLog(tx, c.stepid, 'stdio', 's'));
    const stored = metrics ? (n: number) => metrics.linesStored(n) : undefined;
    return new RemoteCommands(
      c,
      signal,
      new LogWriter(ctx, redis, logid, 's', codec, stored, c.build.redactor),
    );
  }

  /** Run one command; its exit code and (when asked) what it wrote to stdout. */
  async run(argv: string[], o: RunOptions): Promise<{ rc: number; stdout: string }> {
    if (this.signal.aborted) throw new StepEnded(interruptedResults(this.signal));
    const kept = keeper(o.collectStdout ? MAX_COLLECTED_STDOUT : undefined);
    const end = await this.c.build.worker.run(
      {
        command: argv,
        workdir: o.workdir,
        env: o.env ?? {},
        timeout: this.c.step.timeout,
        interruptSignal: 'KILL',
        ...(o.sigtermTime !== undefined ? { sigtermTime: o.sigtermTime } : {}),
      },
      async (stream, text, log) => {
        if (log !== undefined) return;
        if (stream === 'o') kept.add(text);
        if (!o.quiet) await this.stdio.write(stream, text);
      },
      this.signal,
    );
    if ('lost' in end) throw new StepEnded(Results.RETRY, end.reason);
    if (end.interrupted)
      throw new StepEnded(this.signal.aborted ? interruptedResults(this.signal) : Results.RETRY);
    if (kept.tooLong) {
      await this.header(`stdout of ${argv[0]} not kept: over ${MAX_COLLECTED_STDOUT} bytes; the step fails`);
      throw new StepFailed(`${argv.join(' ')} wrote over ${MAX_COLLECTED_STDOUT} bytes to stdout`);
    }
    const rc = end.rc ?? -1;
    if (rc !== 0 && (o.abandonOnFailure ?? true)) throw new StepFailed(`${argv.join(' ')} exited with ${rc}`);
    return { rc, stdout: kept.text() };
  }

  /** A line of the master's own in the log (Buildbot's addHeader). */
  header(text: string): Promise<void> {
    return this.stdio.write('h', `${text}\n`);
  }

  /** Text the worker said about a transfer (its errors go to stderr, as buildbot-worker's). */
  stderr(text: string): Promise<void> {
    return this.stdio.write('e', text.endsWith('\n') ? text : `${text}\n`);
  }

  async finish(): Promise<void> {
    await this.stdio.finish();
    this.c.deps.onLogFinished?.(this.stdio.logid);
  }
}
