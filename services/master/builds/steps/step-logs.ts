// The logs of one step's commands, by name: each added once, when first written or asked
// for, and finished together when the step ends. A step that runs several commands into the
// same log (a shell_sequence's commands all write `stdio` unless given a logname) finds it
// again by name, as Buildbot's makeRemoteShellCommand reuses a log it already has. A log is
// added in the step's next transaction (step-writes.ts: with its `running` state string) and
// finished in the step's end.
import { addLog } from '../../../core/data/index.js';
import { LogWriter } from '../log-writer.js';
import type { StepContext } from './step.js';

export type LogType = 's' | 't' | 'h';

export class StepLogs {
  private readonly logs = new Map<string, Promise<LogWriter>>();

  constructor(private readonly c: Pick<StepContext, 'stepid' | 'deps' | 'build' | 'writes'>) {}

  /** The step's log of this name, added (with this type) if it has none yet. */
  open(name: string, type: LogType): Promise<LogWriter> {
    let w = this.logs.get(name);
    if (!w) {
      const { ctx, redis, codec, metrics } = this.c.deps;
      const stored = metrics ? (n: number) => metrics.linesStored(n) : undefined;
      w = this.c.writes
        .transact((tx) => addLog(tx, this.c.stepid, name, type))
        .then((logid) => new LogWriter(ctx, redis, logid, type, codec, stored, this.c.build.redactor));
      this.logs.set(name, w);
    }
    return w;
  }

  /**
   * What is left of each log's lines stored and the logs finished, in the order they were
   * added, by the step's next transaction: its end, unless the step writes something first.
   */
  async finish(): Promise<void> {
    for (const w of this.logs.values()) {
      const lw = await w;
      const c = lw.closing();
      this.c.writes.fold(c.write, () => {
        c.after();
        this.c.deps.onLogFinished?.(lw.logid);
      });
    }
  }
}
