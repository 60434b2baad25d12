// A shell_sequence step (Buildbot's ShellSequence): its commands run one after the other on
// the worker, each into the log its `logname` names (the same name, the same log; no name,
// no log, as Buildbot 3.7 passes stdioLogName=None), each one's results combined into the
// step's by its own rules (Buildbot's computeResultAndTermination, summary.ts combine); one
// that halts, or ends EXCEPTION, RETRY or CANCELLED, ends the sequence. The summary is
// Buildbot's ShellMixin's: descriptionDone, else the last command run, as a shell step's.
import type { StepConfig } from '../../../core/config/master-config.js';
import { Results } from '../../../core/results.js';
import { combine, commandSummary, stepSummary } from '../summary.js';
import { renderCommand, runCommand } from './command.js';
import type { StepKind } from './step.js';
import { StepLogs } from './step-logs.js';

type ShellSequenceStep = Extract<StepConfig, { type: 'shell_sequence' }>;

export const shellSequence: StepKind<ShellSequenceStep> = {
  defaultName: 'generic',
  describe: () => null,
  async run(c, signal) {
    const logs = new StepLogs(c);
    let results: number = Results.SUCCESS;
    let last: string | string[] | null = null;
    try {
      for (const arg of c.step.commands) {
        const command = renderCommand(arg.command, c.render);
        // Buildbot runs no command that renders empty.
        if (command.length === 0) continue;
        last = command;
        const r = await runCommand(c, signal, command, { logs, stdioLog: arg.logname ?? null });
        if (r.workerLost)
          return { results: r.results, summary: stepSummary(c.text, r.results), workerLost: r.workerLost };
        const combined = combine(arg, r.results, results);
        results = combined.results;
        if (combined.terminate) break;
      }
    } finally {
      await logs.finish();
    }
    const text = c.step.descriptionDone === undefined && last !== null ? commandSummary(last) : c.text;
    return { results, summary: stepSummary(text, results) };
  },
};
