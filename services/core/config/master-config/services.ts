// Buildbot's c['services'] that are not reporters: today its util.OldBuildCanceller
// (buildbot/schedulers/canceller.py), which cancels the unfinished work of a branch when a
// newer change arrives on it. Each filter names builders and a source-stamp filter in
// Buildbot's SourceStampFilter names (project, repository, branch, codebase, each with its
// `_not_eq`, `_re` and `_not_re` forms, as a change_filter writes them without category).
// Buildbot's `branch_key` (a Python callable) has no form here; its default is applied.
import { z } from 'zod';
import { changeFilter } from './change-filter.js';

const builderNames = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
  errorMap: () => ({ message: 'expected a builder name or a list of builder names' }),
});

export const oldBuildCancellerFilter = changeFilter
  .omit({ category: true, category_not_eq: true, category_re: true, category_not_re: true })
  .extend({ builders: builderNames })
  .strict();

export const service = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('old_build_canceller'),
      name: z.string().min(1).max(100),
      filters: z.array(oldBuildCancellerFilter).min(1),
    })
    .strict(),
]);

export type ServiceConfig = z.infer<typeof service>;
export type OldBuildCancellerFilterConfig = z.infer<typeof oldBuildCancellerFilter>;
