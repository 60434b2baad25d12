// The schedulers (single-branch, any-branch, periodic, nightly, triggerable, try_jobdir, try_userpass, dependent) and how they pick changes.
import { z } from 'zod';
import { changeFilter, filtersBranch } from './change-filter.js';
import { identifier } from './identifiers.js';
import { listenPort } from './protocols.js';
import { regularExpression } from './regular-expression.js';

const schedulerCommon = {
  name: identifier,
  builders: z.array(identifier).min(1),
  properties: z.record(z.unknown()).default({}),
  // The priority of the build requests it creates (higher first).
  priority: z.number().int().default(0),
  // Buildbot's codebases: the codebases a scheduler builds, each with the repository and
  // branch of its source stamp when no change names them. Default: one codebase, "".
  codebases: z
    .record(z.object({ repository: z.string().default(''), branch: z.string().nullable().default(null) }))
    .optional(),
};

// How a scheduler that watches changes picks and weighs them (Buildbot's change_filter,
// fileIsImportant and onlyImportant). A change is considered only if it passes change_filter
// (Buildbot's ChangeFilter keys: change-filter.ts). With file_pattern (a JavaScript regular
// expression, searched in each file name), a change is important only if one of its files
// matches (a change that names no file counts as important); with only_important,
// unimportant changes are ignored instead of riding along in the next build.
const changeConsumption = {
  change_filter: changeFilter.optional(),
  file_pattern: regularExpression.optional(),
  only_important: z.boolean().default(false),
};

const schedulerKinds = z.discriminatedUnion('type', [
  // Builds the changes of one branch (null: the default branch); with a tree-stable timer,
  // once no change has come for that many seconds, one build set for all of them. As in
  // Buildbot, `branch` or change_filter is what picks the changes: without either, the
  // default branch; with change_filter alone, whatever it lets through (any branch unless it
  // names one); a branch in both is refused, as Buildbot refuses branch with change_filter.
  z
    .object({
      type: z.literal('single-branch'),
      branch: z.string().nullable().optional(),
      tree_stable_timer: z.number().min(0).default(0),
      ...changeConsumption,
      ...schedulerCommon,
    })
    .strict(),
  // Buildbot's AnyBranchScheduler: the changes of every branch change_filter lets through,
  // each (codebase, project, repository, branch) with a tree-stable timer of its own, so a
  // branch's build set holds only that branch's changes.
  z
    .object({
      type: z.literal('any-branch'),
      tree_stable_timer: z.number().min(0).default(0),
      ...changeConsumption,
      ...schedulerCommon,
    })
    .strict(),
  // A build set when it starts, then every `period` seconds.
  z.object({ type: z.literal('periodic'), period: z.number().positive(), ...schedulerCommon }).strict(),
  // A build set at the times of a five-field cron expression (minute hour day-of-month month
  // day-of-week, in the master's local time); with only_if_changed, only when an important
  // change came since the last one. `branch` limits the changes it counts (absent: any branch;
  // null: the default branch).
  z
    .object({
      type: z.literal('nightly'),
      cron: z.string().regex(/^(\S+\s+){4}\S+$/, 'expected a five-field cron expression'),
      branch: z.string().nullable().optional(),
      only_if_changed: z.boolean().default(false),
      ...changeConsumption,
      ...schedulerCommon,
    })
    .strict(),
  // Build sets made by the trigger steps that name it.
  z.object({ type: z.literal('triggerable'), ...schedulerCommon }).strict(),
  // Buildbot's Try_Jobdir: a build set for each try job file `buildbot try --connect=ssh`
  // (through `buildbot tryserver`) delivers into the maildir `jobdir` (its new/, cur/ and
  // tmp/ made if missing; relative to the master's working directory), on the builders the
  // job names among `builders` (all of them when it names none), with the job's patch.
  z.object({ type: z.literal('try_jobdir'), jobdir: z.string().min(1), ...schedulerCommon }).strict(),
  // Buildbot's Try_Userpass: each [user, password] of `userpass` logs in on the workers' PB
  // port (`protocols.pb`; a `port` must be that one) of every master, and `buildbot try
  // --connect=pb` sends its patch there: a build set on the builders it names among `builders`.
  z
    .object({
      type: z.literal('try_userpass'),
      userpass: z.array(z.tuple([z.string().min(1), z.string().min(1)])).min(1),
      port: listenPort.optional(),
      ...schedulerCommon,
    })
    .strict(),
  // Buildbot's Dependent: when a build set of the scheduler named `upstream` completes with
  // SUCCESS or WARNINGS, a build set for its builders on that build set's source stamps
  // (`upstream` must name another scheduler: checked with the other references).
  z.object({ type: z.literal('dependent'), upstream: identifier, ...schedulerCommon }).strict(),
]);

/**
 * Buildbot's spelling of a scheduler's builders, `builderNames`, taken for `builders` (a
 * configuration moved from master.cfg keeps it); both at once is refused by the schema.
 */
const buildbotSpelling = (v: unknown) => {
  if (typeof v !== 'object' || v === null || !('builderNames' in v) || 'builders' in v) return v;
  const { builderNames, ...rest } = v as Record<string, unknown>;
  return { ...rest, builders: builderNames };
};

export const scheduler = z.preprocess(buildbotSpelling, schedulerKinds).superRefine((s, ctx) => {
  if (
    (s.type === 'single-branch' || s.type === 'nightly') &&
    s.branch !== undefined &&
    filtersBranch(s.change_filter)
  )
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ['branch'],
      message: 'give the branch either here or in change_filter, not both',
    });
});
