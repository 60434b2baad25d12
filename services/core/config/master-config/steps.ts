// The steps of a builder: one schema per step kind, and the union of them, which the
// master's step kinds (services/master/build/steps/) mirror one to one. A new kind: its
// schema here, its line in STEP_KINDS, and its file beside the others in the master.
import { z } from 'zod';
import { identifier } from './identifiers.js';

const command = z.union([z.string().min(1), z.array(z.string()).min(1)], {
  errorMap: () => ({ message: 'expected a shell string or a list of arguments' }),
});

const stepCommon = {
  name: identifier.optional(),
  description: z.string().optional(),
  descriptionDone: z.string().optional(),
  haltOnFailure: z.boolean().default(false),
  flunkOnFailure: z.boolean().default(true),
  warnOnFailure: z.boolean().default(false),
  alwaysRun: z.boolean().default(false),
  // Conditions on build properties: run (or hide) the step only when the property is truthy,
  // or equals the given value.
  doStepIf: z
    .union([z.boolean(), z.object({ property: z.string(), equals: z.unknown().optional() }).strict()])
    .optional(),
  hideStepIf: z
    .union([z.boolean(), z.object({ results: z.array(z.number().int().min(0).max(6)) }).strict()])
    .optional(),
  // Links shown with the step (Buildbot's addStepURL), with properties filled in when the
  // step starts: `{ name: coverage, url: "https://cov.example/%(prop:buildnumber)s" }`.
  urls: z.array(z.object({ name: z.string().min(1), url: z.string().min(1) }).strict()).default([]),
  timeout: z.number().positive().default(1200),
};

const shellStep = z
  .object({
    type: z.literal('shell'),
    command,
    workdir: z.string().optional(),
    env: z.record(z.string()).default({}),
    logfiles: z.record(z.string()).default({}),
    ...stepCommon,
  })
  .strict();

const setPropertyStep = z
  .object({
    type: z.literal('set_property'),
    command,
    property: z.string().min(1),
    strip: z.boolean().default(true),
    workdir: z.string().optional(),
    env: z.record(z.string()).default({}),
    ...stepCommon,
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

const STEP_KINDS = [shellStep, setPropertyStep, triggerStep] as const;

export const step = z.discriminatedUnion('type', [...STEP_KINDS], {
  errorMap: (issue, ctx) =>
    issue.code === 'invalid_union_discriminator'
      ? { message: `expected type to be one of ${STEP_KINDS.map((k) => k.shape.type.value).join(', ')}` }
      : { message: ctx.defaultError },
});
