// The schedulers (single-branch, periodic, nightly, triggerable) and how they pick changes.
import { z } from 'zod';
import { identifier } from './identifiers.js';

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

const valueOrList = z.union([z.string(), z.array(z.string()).min(1)]);

const regularExpression = z.string().refine(
  (s) => {
    try {
      new RegExp(s);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'expected a regular expression' },
);

// How a scheduler that watches changes picks and weighs them (Buildbot's change_filter,
// fileIsImportant and onlyImportant). A change is considered only if each field named in
// change_filter equals the value (or one of the values) given. With file_pattern (a
// JavaScript regular expression, searched in each file name), a change is important only if
// one of its files matches (a change that names no file counts as important); with
// only_important, unimportant changes are ignored instead of riding along in the next build.
const changeConsumption = {
  change_filter: z
    .object({
      repository: valueOrList.optional(),
      project: valueOrList.optional(),
      category: valueOrList.optional(),
    })
    .strict()
    .optional(),
  file_pattern: regularExpression.optional(),
  only_important: z.boolean().default(false),
};

export const scheduler = z.discriminatedUnion('type', [
  // Builds the changes of one branch (null: the default branch); with a tree-stable timer,
  // once no change has come for that many seconds, one build set for all of them.
  z
    .object({
      type: z.literal('single-branch'),
      branch: z.string().nullable().default(null),
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
]);
