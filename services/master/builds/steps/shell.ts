// A shell step (Buildbot's ShellCommand): run the command; its exit code becomes results
// through decodeRC (0 SUCCESS, any other FAILURE by default). Files named in `logfiles` come
// back as logs of their own.
import type { StepConfig } from '../../../core/config/master-config.js';
import { commandSummary, stepSummary } from '../summary.js';
import { renderCommand, runCommand } from './command.js';
import type { StepKind } from './step.js';

type ShellStep = Extract<StepConfig, { type: 'shell' }>;

export const shell: StepKind<ShellStep> = {
  defaultName: 'shell',
  // Buildbot summarizes the command as rendered, properties filled in.
  describe: (step, render) => commandSummary(renderCommand(step.command, render)),
  logFirst: true,
  async run(c, signal) {
    const r = await runCommand(c, signal, renderCommand(c.step.command, c.render));
    return {
      results: r.results,
      summary: stepSummary(c.text, r.results),
      ...(r.workerLost ? { workerLost: r.workerLost } : {}),
    };
  },
};
