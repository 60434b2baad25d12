// A make_directory step (Buildbot's MakeDirectory): `dir`, relative to the builder's
// directory, created with its parents (worker-directory.ts); "Created", or
// "Create failed. (failure)".
import type { StepConfig } from '../../../core/config/master-config.js';
import { Results } from '../../../core/results.js';
import { done } from './step-end.js';
import { directoryStep, quietly } from './worker-directory.js';

export const makeDirectory = directoryStep<Extract<StepConfig, { type: 'make_directory' }>>(
  'MakeDirectory',
  async (c, signal) => {
    const ran = await quietly(c, ['mkdir', '-p', c.render(c.step.dir)], signal, { timeout: c.step.timeout });
    if ('ended' in ran) return ran.ended;
    return ran.rc === 0 ? done(c, Results.SUCCESS) : done(c, Results.FAILURE, 'Create failed.');
  },
);
