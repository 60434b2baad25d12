// The steps of a builder: one schema per step kind, and the union of them, which the
// master's step kinds (services/master/builds/steps/) mirror one to one. A new kind: its
// schema here, its line in STEP_KINDS, and its file beside the others in the master.
// What every kind shares (conditions, templates, results): step-common.ts.
import { z } from 'zod';
import { identifier } from './identifiers.js';
import { masterShellStep } from './master-steps.js';
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

const triggerStep = z
  .object({
    type: z.literal('trigger'),
    schedulers: z.array(identifier).min(1),
    waitForFinish: z.boolean().default(false),
    set_properties: z.record(z.unknown()).default({}),
    ...stepCommon,
  })
  .strict();

const STEP_KINDS = [
  shellStep,
  setPropertyStep,
  setPropertyValueStep,
  shellSequenceStep,
  triggerStep,
  gitStep,
  fileUploadStep,
  directoryUploadStep,
  multipleFileUploadStep,
  fileDownloadStep,
  stringDownloadStep,
  warningCountingShellStep,
  compileStep,
  testStep,
  removeDirectoryStep,
  makeDirectoryStep,
  copyDirectoryStep,
  masterShellStep,
] as const;

const KIND_NAMES = STEP_KINDS.map((k) => k.shape.type.value);

export const step = z.discriminatedUnion('type', [...STEP_KINDS], {
  errorMap: (issue, ctx) =>
    issue.code === 'invalid_union_discriminator'
      ? { message: `expected type to be one of ${KIND_NAMES.join(', ')}` }
      : { message: ctx.defaultError },
});
