// Steps on the worker's directories: Buildbot's RemoveDirectory, MakeDirectory and
// CopyDirectory (buildbot/steps/worker.py), with its names and defaults. Their paths are
// relative to the builder's directory on the worker (`build` is the default workdir), as
// Buildbot's rmdir, mkdir and cpdir worker commands take them; each halts the build on failure.
import { z } from 'zod';
import { renderable, stepCommon } from './step-common.js';

// Buildbot's words for each: while it runs, and once done.
const workerStepCommon = (running: string, done: string) => ({
  ...stepCommon,
  haltOnFailure: z.boolean().default(true),
  description: z.string().default(running),
  descriptionDone: z.string().default(done),
});

export const removeDirectoryStep = z
  .object({
    type: z.literal('remove_directory'),
    dir: renderable,
    ...workerStepCommon('Deleting', 'Deleted'),
  })
  .strict();

export const makeDirectoryStep = z
  .object({ type: z.literal('make_directory'), dir: renderable, ...workerStepCommon('Creating', 'Created') })
  .strict();

export const copyDirectoryStep = z
  .object({
    type: z.literal('copy_directory'),
    src: renderable,
    dest: renderable,
    ...workerStepCommon('Copying', 'Copied'),
    // Buildbot's CopyDirectory: 120 s without output, and maxTime at all.
    timeout: z.number().positive().default(120),
    maxTime: z.number().positive().optional(),
  })
  .strict();
