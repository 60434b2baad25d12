// A shell step (Buildbot's ShellCommand): run the command; exit code 0 is SUCCESS, any
// other FAILURE. Files named in `logfiles` come back as logs of their own.
import type { StepConfig } from '../../../core/config/master-config.js';
import { commandSummary, stepSummary } from '../summary.js';
import { renderCommand, runCommand } from './command.js';
import type { StepKind } from './step.js';

type ShellStep = Extract<StepConfig, { type: 'shell' }>;

export const shell: StepKind<ShellStep> = {
  defaultName: 'shell',
  // Buildbot summarizes the command as rendered, properties filled in.
  describe: (step, props) => commandSummary(renderCommand(step.command, props)),
  async run(c, signal) {
    const r = await runCommand(c, signal, { logfiles: c.step.logfiles });
    return {
      results: r.results,
      summary: stepSummary(c.text, r.results),
      ...(r.workerLost ? { workerLost: r.workerLost } : {}),
    };
  },
};
