// The steps of a builder: one schema per step kind, and the union of them, which the
// master's step kinds (services/master/builds/steps/) mirror one to one. A new kind: its
// schema here, its line in STEP_KINDS, and its file beside the others in the master.
// What every kind shares (conditions, templates, results): step-common.ts.
import { z } from 'zod';
import { identifier } from './identifiers.js';
import { masterShellStep } from './master-steps.js';
import { ReadOnce } from './read-once.js';
import { command, shellCommon, shellParameters } from './shell-common.js';
import { gitStep } from './source-steps.js';
import { renderable, stepCommon } from './step-common.js';
import {
  directoryUploadStep,
  fileDownloadStep,
  fileUploadStep,
  multipleFileUploadStep,
  stringDownloadStep,
} from './transfer-steps.js';
import { compileStep, testStep, warningCountingShellStep } from './warning-steps.js';
import { copyDirectoryStep, makeDirectoryStep, removeDirectoryStep } from './worker-steps.js';

const shellStep = z.object({ type: z.literal('shell'), ...shellCommon, ...stepCommon }).strict();

const setPropertyStep = z
  .object({
    type: z.literal('set_property'),
    ...shellCommon,
    property: z.string().min(1),
    strip: z.boolean().default(true),
    ...stepCommon,
  })
  .strict();

// Buildbot's ShellSequence: commands run one after the other in one step, each with its own
// result rules (ShellArg's, Buildbot's defaults) and the log it names (`logname`; without
// one, as in Buildbot 3.7, its output is kept in no log). The step's results combine the
// commands' as a build combines its steps'; one that halts ends the sequence.
const { haltOnFailure, flunkOnFailure, warnOnFailure, flunkOnWarnings, warnOnWarnings } = stepCommon;
const shellArg = z
  .object({
    command,
    logname: z.string().min(1).optional(),
    // ShellArg's result rules, with a step's defaults (Buildbot's ResultComputingConfigMixin).
    ...{ haltOnFailure, flunkOnFailure, warnOnFailure, flunkOnWarnings, warnOnWarnings },
  })
  .strict();

const shellSequenceStep = z
  .object({
    type: z.literal('shell_sequence'),
    commands: z.array(shellArg).min(1),
    ...shellParameters,
    ...stepCommon,
  })
  .strict();

// Buildbot's SetProperty: a property set to a value (a template, or any YAML value) as the
// step runs, on the master; `set_property` is SetPropertyFromCommand.
const setPropertyValueStep = z
  .object({
    type: z.literal('set_property_value'),
    property: z.string().min(1),
    value: z.union([
      renderable,
      z.number(),
      z.boolean(),
      z.null(),
      z.array(z.unknown()),
      z.record(z.unknown()),
    ]),
    ...stepCommon,
    description: z.string().default('Setting'),
    descriptionDone: z.string().default('Set'),
  })
  .strict();

// A source stamp a trigger step gives (Buildbot's sourceStamps): each key a template; those
// left out are the triggered scheduler's codebase's.
const triggerStamp = z
  .object({
    codebase: z.string().default(''),
    repository: renderable.optional(),
    branch: renderable.nullable().optional(),
    revision: renderable.nullable().optional(),
    project: renderable.optional(),
  })
  .strict();

// Buildbot's Trigger. Which source stamps the triggered build sets get: `sourceStamps` as
// given; with alwaysUseLatest none (each scheduler's codebases, at no revision); else this
// build's, each at its got_revision with updateSourceStamp (the default when neither).
// copy_properties: this build's properties of these names, as set_properties would.
const triggerStep = z
  .object({
    type: z.literal('trigger'),
    schedulers: z.array(identifier).min(1),
    waitForFinish: z.boolean().default(false),
    set_properties: z.record(z.unknown()).default({}),
    copy_properties: z.array(z.string().min(1)).default([]),
    updateSourceStamp: z.boolean().optional(),
    alwaysUseLatest: z.boolean().default(false),
    sourceStamps: z.array(triggerStamp).min(1).optional(),
    ...stepCommon,
  })
  .strict();

/** What Buildbot's Trigger refuses to be given together. */
export function triggerProblems(s: z.infer<typeof triggerStep>): string[] {
  const problems: string[] = [];
  if (s.sourceStamps && s.updateSourceStamp !== undefined)
    problems.push('updateSourceStamp: not with sourceStamps (Buildbot refuses both)');
  if (s.sourceStamps && s.alwaysUseLatest)
    problems.push('alwaysUseLatest: not with sourceStamps (Buildbot refuses both)');
  if (s.alwaysUseLatest && s.updateSourceStamp !== undefined)
    problems.push('updateSourceStamp: not with alwaysUseLatest (Buildbot refuses both)');
  const codebases = (s.sourceStamps ?? []).map((ss) => ss.codebase);
  codebases.forEach((cb, i) => {
    if (codebases.indexOf(cb) !== i)
      problems.push(`sourceStamps[${i}].codebase: codebase ${JSON.stringify(cb)} given twice`);
  });
  return problems;
}

const STEP_KINDS = [
  shellStep,
  setPropertyStep,
  triggerStep,
  gitStep,
  fileUploadStep,
  directoryUploadStep,
  multipleFileUploadStep,
  fileDownloadStep,
  stringDownloadStep,
  setPropertyValueStep,
  shellSequenceStep,
  warningCountingShellStep,
  compileStep,
  testStep,
  removeDirectoryStep,
  makeDirectoryStep,
  copyDirectoryStep,
  masterShellStep,
] as const;

const KIND_NAMES = STEP_KINDS.map((k) => k.shape.type.value);

// Read once per distinct step (read-once.ts): a large configuration repeats its steps.
export const step = new ReadOnce(
  z.discriminatedUnion('type', [...STEP_KINDS], {
    errorMap: (issue, ctx) =>
      issue.code === 'invalid_union_discriminator'
        ? { message: `expected type to be one of ${KIND_NAMES.join(', ')}` }
        : { message: ctx.defaultError },
  }),
);
