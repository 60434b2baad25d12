// A set_property step (Buildbot's SetPropertyFromCommand): run the command and, if it
// succeeds, set a build property to what it wrote to stdout (stripped unless `strip: false`).
import type { StepConfig } from '../../../core/config/master-config.js';
import { setBuildProperty, transact } from '../../../core/data/index.js';
import { Results } from '../../../core/results.js';
import { commandSummary, stepSummary } from '../summary.js';
import { renderCommand, runCommand } from './command.js';
import type { StepKind } from './step.js';

type SetPropertyStep = Extract<StepConfig, { type: 'set_property' }>;

export const setProperty: StepKind<SetPropertyStep> = {
  defaultName: 'setproperty',
  describe: (step, render) => commandSummary(renderCommand(step.command, render)),
  async run(c, signal) {
    const r = await runCommand(c, signal, { keepStdout: true });
    const lost = r.workerLost ? { workerLost: r.workerLost } : {};
    if (r.results !== Results.SUCCESS)
      return { results: r.results, summary: stepSummary(c.text, r.results), ...lost };
    // Stored redacted: properties are shown to whoever sees the build, and sent in reports.
    const value = c.build.redactor.clean(c.step.strip ? r.stdout.trim() : r.stdout);
    await transact(c.deps.ctx, (tx) =>
      setBuildProperty(tx, c.build.buildid, c.step.property, value, 'SetPropertyFromCommand Step'),
    );
    return { results: r.results, summary: c.step.descriptionDone ?? `property '${c.step.property}' set` };
  },
};
