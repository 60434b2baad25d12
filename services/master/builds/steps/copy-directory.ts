// A copy_directory step (Buildbot's CopyDirectory): `src` copied to `dest`, both relative to
// the builder's directory, dest's parent made first (worker-directory.ts); "Copied SRC to
// DEST", or "Copying SRC to DEST failed. (failure)". timeout (120 s) and maxTime bound the copy.
import { posix } from 'node:path';
import type { StepConfig } from '../../../core/config/master-config.js';
import { Results } from '../../../core/results.js';
import { done } from './step-end.js';
import { directoryStep, quietly } from './worker-directory.js';

export const copyDirectory = directoryStep<Extract<StepConfig, { type: 'copy_directory' }>>(
  'CopyDirectory',
  async (c, signal) => {
    const src = c.render(c.step.src);
    const dest = c.render(c.step.dest);
    const limits = {
      timeout: c.step.timeout,
      ...(c.step.maxTime !== undefined ? { maxTime: c.step.maxTime } : {}),
    };
    const parent = await quietly(c, ['mkdir', '-p', posix.dirname(dest)], signal, limits);
    if ('ended' in parent) return parent.ended;
    const ran =
      parent.rc === 0 ? await quietly(c, ['cp', '-R', '-P', '-p', '-v', src, dest], signal, limits) : parent;
    if ('ended' in ran) return ran.ended;
    return ran.rc === 0
      ? done(c, Results.SUCCESS, `Copied ${src} to ${dest}`)
      : done(c, Results.FAILURE, `Copying ${src} to ${dest} failed.`);
  },
);
