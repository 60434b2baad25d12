// A set_property step (Buildbot's SetPropertyFromCommand): run the command and, if it
// succeeds, set a build property to what it wrote to stdout (stripped unless `strip: false`).
// Buildbot keeps all of stdout, however long; a command that writes without end would fill
// the master's memory. Past MAX_OUTPUT bytes the step fails and sets nothing: a property cut
// short would be a wrong value, used silently by the steps after it. A property set is
// listed in a `property changes` log (`name: repr(value)`), as Buildbot 3.7's step adds it.
import type { StepConfig } from '../../../core/config/master-config.js';
import { setBuildProperty, transact } from '../../../core/data/index.js';
import { pyRepr } from '../../../core/python.js';
import { Results } from '../../../core/results.js';
import { commandSummary, stepSummary } from '../summary.js';
import { renderCommand, runCommand } from './command.js';
import { completeLog } from './complete-log.js';
import type { StepKind } from './step.js';

type SetPropertyStep = Extract<StepConfig, { type: 'set_property' }>;

// Far beyond what a property serves: Linux takes at most 128 KiB in one argument of a command
// (MAX_ARG_STRLEN), where properties mostly go.
export const MAX_OUTPUT = 1024 * 1024;

export const setProperty: StepKind<SetPropertyStep> = {
  defaultName: 'setproperty',
  describe: (step, render) => commandSummary(renderCommand(step.command, render)),
  logFirst: true,
  async run(c, signal) {
    const r = await runCommand(c, signal, renderCommand(c.step.command, c.render), {
      keepStdout: MAX_OUTPUT,
    });
    const lost = r.workerLost ? { workerLost: r.workerLost } : {};
    if (r.results !== Results.SUCCESS)
      return { results: r.results, summary: stepSummary(c.text, r.results), ...lost };
    if (r.stdoutTooLong)
      return {
        results: Results.FAILURE,
        summary: `property '${c.step.property}' not set: output over ${MAX_OUTPUT} bytes`,
      };
    // Stored redacted: properties are shown to whoever sees the build, and sent in reports.
    const value = c.build.redactor.clean(c.step.strip ? r.stdout.trim() : r.stdout);
    await transact(c.deps.ctx, (tx) =>
      setBuildProperty(tx, c.build.buildid, c.step.property, value, 'SetPropertyFromCommand Step'),
    );
    await completeLog(c, 'property changes', `${c.step.property}: ${pyRepr(value)}`);
    return { results: r.results, summary: c.step.descriptionDone ?? `property '${c.step.property}' set` };
  },
};
