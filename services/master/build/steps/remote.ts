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
import type { StepContext } from './step.js';

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
    let stdout = '';
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
        if (o.collectStdout && stream === 'o') stdout += text;
        if (!o.quiet) await this.stdio.write(stream, text);
      },
      this.signal,
    );
    if ('lost' in end) throw new StepEnded(Results.RETRY, end.reason);
    if (end.interrupted)
      throw new StepEnded(this.signal.aborted ? interruptedResults(this.signal) : Results.RETRY);
    const rc = end.rc ?? -1;
    if (rc !== 0 && (o.abandonOnFailure ?? true)) throw new StepFailed(`${argv.join(' ')} exited with ${rc}`);
    return { rc, stdout };
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
