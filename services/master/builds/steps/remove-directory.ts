// A remove_directory step (Buildbot's RemoveDirectory): `dir`, relative to the builder's
// directory, removed with all it holds (worker-directory.ts); "Deleted", or
// "Delete failed. (failure)".
import type { StepConfig } from '../../../core/config/master-config.js';
import { Results } from '../../../core/results.js';
import { done } from './step-end.js';
import { directoryStep, quietly } from './worker-directory.js';

export const removeDirectory = directoryStep<Extract<StepConfig, { type: 'remove_directory' }>>(
  'RemoveDirectory',
  async (c, signal) => {
    const dir = c.render(c.step.dir);
    const limits = { timeout: 120 };
    let ran = await quietly(c, ['rm', '-rf', dir], signal, limits);
    // As buildbot-worker: a directory left without write permission is made writable, then removed.
    if ('rc' in ran && ran.rc !== 0) {
      const chmod = await quietly(c, ['chmod', '-Rf', 'u+rwx', dir], signal, limits);
      ran = 'ended' in chmod ? chmod : await quietly(c, ['rm', '-rf', dir], signal, limits);
    }
    if ('ended' in ran) return ran.ended;
    return ran.rc === 0 ? done(c, Results.SUCCESS) : done(c, Results.FAILURE, 'Delete failed.');
  },
);
