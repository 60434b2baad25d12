// A change source: a repository a master polls for changes, or one only owned and shown.
import { z } from 'zod';

// A change source runs on exactly one master. Without a type it is only owned and shown
// (changes then come through the change hooks); `git` polls a repository (Buildbot's GitPoller).
export const changeSource = z
  .object({
    name: z.string().min(1),
    type: z.literal('git').optional(),
    repourl: z.string().min(1).optional(),
    branches: z.array(z.string().min(1)).min(1).default(['main']),
    poll_interval: z.number().int().positive().default(600),
    project: z.string().default(''),
    category: z.string().optional(),
    codebase: z.string().default(''),
  })
  .strict()
  .refine((c) => c.type === undefined || c.repourl !== undefined, {
    message: 'a git change source needs repourl',
    path: ['repourl'],
  });
export type ChangeSourceConfig = z.infer<typeof changeSource>;
