// A set_property_value step (Buildbot's SetProperty): set a build property to a value, its
// templates rendered as the step runs, on the master: no command, no log; "Setting", then
// "Set". The property's source is the step's name, as Buildbot's.
import type { Renderable, StepConfig } from '../../../core/config/master-config.js';
import { setBuildProperty, transact } from '../../../core/data/index.js';
import { Results } from '../../../core/results.js';
import type { StepKind } from './step.js';

type SetPropertyValueStep = Extract<StepConfig, { type: 'set_property_value' }>;

const isRenderable = (v: unknown): v is Renderable =>
  typeof v === 'string' ||
  (typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    typeof (v as { interpolate?: unknown }).interpolate === 'string');

export const setPropertyValue: StepKind<SetPropertyValueStep> = {
  defaultName: 'SetProperty',
  describe: () => null,
  async run(c) {
    const { value } = c.step;
    // Stored redacted, as every property a step sets: properties are shown and reported.
    const rendered = isRenderable(value) ? c.build.redactor.clean(c.render(value)) : value;
    await transact(c.deps.ctx, (tx) =>
      setBuildProperty(tx, c.build.buildid, c.step.property, rendered, c.step.name ?? 'SetProperty'),
    );
    return { results: Results.SUCCESS, summary: c.text ?? 'finished' };
  },
};
