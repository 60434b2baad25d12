// A change source: a repository a master polls for changes, or one only owned and shown.
import { z } from 'zod';

// A change source runs on exactly one master. Without a type it is only owned and shown
// (changes then come through the change hooks); `git` polls a repository (Buildbot's GitPoller):
// `branches` (a list; `true`: every branch; default [main]) or `only_tags` (every tag, its
// changes on branch `refs/tags/NAME`, as Buildbot's), into a mirror kept in `workdir`
// (relative to MASTER_WORKDIR; default one of its own). Buildbot 3.7 refuses fetch_refspec.
export const changeSource = z
  .object({
    name: z.string().min(1),
    type: z.literal('git').optional(),
    repourl: z.string().min(1).optional(),
    branches: z.union([z.literal(true), z.array(z.string().min(1)).min(1)]).optional(),
    only_tags: z.boolean().default(false),
    workdir: z.string().min(1).optional(),
    poll_interval: z.number().int().positive().default(600),
    project: z.string().default(''),
    category: z.string().optional(),
    codebase: z.string().default(''),
  })
  .strict()
  .refine((c) => c.type === undefined || c.repourl !== undefined, {
    message: 'a git change source needs repourl',
    path: ['repourl'],
  })
  .refine((c) => !(c.only_tags && c.branches !== undefined), {
    message: 'give branches or only_tags, not both (Buildbot refuses both)',
    path: ['only_tags'],
  });
export type ChangeSourceConfig = z.infer<typeof changeSource>;
