// Source steps: Buildbot's Git (buildbot/steps/source/git.py), with its names and defaults.
import { z } from 'zod';
import { renderable, stepCommon } from './step-common.js';

export const gitStep = z
  .object({
    type: z.literal('git'),
    // Left out: the repository of the build's source stamp for `codebase` (what a change or
    // the force form gave). Buildbot requires it; most configurations set it to that.
    repourl: renderable.optional(),
    // Used when the source stamp has no branch (Buildbot's default HEAD: the remote's).
    branch: renderable.default('HEAD'),
    codebase: z.string().default(''),
    mode: z.enum(['incremental', 'full']).default('incremental'),
    method: z.enum(['clean', 'fresh', 'clobber', 'copy']).optional(),
    submodules: z.boolean().default(false),
    remoteSubmodules: z.boolean().default(false),
    // A clone of this depth (true: 1); only with mode full, method clobber, as Buildbot.
    shallow: z.union([z.boolean(), z.number().int().positive()]).default(false),
    retryFetch: z.boolean().default(false),
    clobberOnFailure: z.boolean().default(false),
    // [delay seconds, repeats]: a failed clone is clobbered and tried again (Buildbot's retry).
    retry: z.tuple([z.number().min(0), z.number().int().min(0)]).optional(),
    getDescription: z.boolean().default(false),
    progress: z.boolean().default(true),
    reference: z.string().optional(),
    origin: z.string().optional(),
    // `git -c name=value` before every command.
    config: z.record(z.string()).default({}),
    alwaysUseLatest: z.boolean().default(false),
    workdir: z.string().default('build'),
    env: z.record(renderable).default({}),
    ...stepCommon,
  })
  .strict();

/** Buildbot's Git config.error checks between keys (the master runs them with the references). */
export function gitStepProblems(s: z.infer<typeof gitStep>): string[] {
  const problems: string[] = [];
  if (s.method !== undefined && s.mode !== 'full') problems.push(`method: a method is for mode 'full'`);
  if (s.shallow !== false && (s.mode !== 'full' || s.method !== 'clobber'))
    problems.push(`shallow: shallow only possible with mode 'full' and method 'clobber'`);
  return problems;
}
