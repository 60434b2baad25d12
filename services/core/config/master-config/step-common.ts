// What every step kind's schema shares: templates (renderables), conditions on properties,
// result names, and the keys of Buildbot's BuildStep that every step takes.
import { z } from 'zod';
import { InterpolationError, parse } from '../../interpolate.js';
import { RESULT_NAMES } from '../../results.js';
import { stepName } from './identifiers.js';
import { lockAccess } from './locks.js';

// A plain string has no keywords: a `%(kw:...)s` in it can never render.
const NO_KEYWORDS: ReadonlySet<string> = new Set();

function checkTemplate(template: string, ctx: z.RefinementCtx, kw: ReadonlySet<string> = NO_KEYWORDS): void {
  try {
    parse(template, kw);
  } catch (err) {
    if (!(err instanceof InterpolationError)) throw err;
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: err.message });
  }
}

/** Text with Buildbot's Interpolate substitutions (core/interpolate.ts), checked when loaded. */
export const template = z.string().superRefine((s, ctx) => checkTemplate(s, ctx));

/**
 * A renderable value: a template, or Buildbot's Interpolate with keywords,
 * `{ interpolate: "%(kw:x)s-%(prop:y)s", kw: { x: 1 } }`.
 */
export const renderable = z.union([
  template,
  z
    .object({ interpolate: z.string(), kw: z.record(z.unknown()).default({}) })
    .strict()
    .superRefine((r, ctx) => checkTemplate(r.interpolate, ctx, new Set(Object.keys(r.kw)))),
]);

/** A result by name (`success`, `warnings`...) or by code (0-6). */
export const result = z.union(
  [z.number().int().min(0).max(6), z.enum(RESULT_NAMES).transform((n) => RESULT_NAMES.indexOf(n))],
  { errorMap: () => ({ message: `expected a result code 0-6 or one of ${RESULT_NAMES.join(', ')}` }) },
);

export type Condition =
  | boolean
  | { property: string; equals?: unknown; in?: unknown[]; exists?: boolean }
  | { results: number[] }
  | { not: Condition }
  | { all: Condition[] }
  | { any: Condition[] };

/**
 * A condition on the build's properties as the step starts, standing where Buildbot takes a
 * callable (doStepIf=lambda step: ...): `{property: p}` (p is true in Python's sense),
 * `{property: p, equals: v}`, `{property: p, in: [v, w]}`, `{property: p, exists: true}`,
 * combined with `{not: c}`, `{all: [...]}`, `{any: [...]}`. hideStepIf may also name
 * `{results: [skipped, failure]}`, the step's own results.
 */
//
// zod's lazy calls its function at every parse, and this one builds six schemas: three
// conditions on each of a thousand builders' steps made the fleet's configuration cost a
// master 323 ms of CPU at its start, 222 ms once built once (load/fleet/config-cpu.ts, the
// median of 9 parses, issue 35).
let conditionSchema: z.ZodType<Condition, z.ZodTypeDef, unknown> | undefined;
export const condition: z.ZodType<Condition, z.ZodTypeDef, unknown> = z.lazy(() => {
  conditionSchema ??= z.union([
    z.boolean(),
    z
      .object({
        property: z.string().min(1),
        equals: z.unknown().optional(),
        in: z.array(z.unknown()).optional(),
        exists: z.boolean().optional(),
      })
      .strict()
      .refine((c) => [c.equals, c.in, c.exists].filter((v) => v !== undefined).length <= 1, {
        message: 'expected at most one of equals, in, exists',
      }),
    z.object({ results: z.array(result).min(1) }).strict(),
    z.object({ not: condition }).strict(),
    z.object({ all: z.array(condition).min(1) }).strict(),
    z.object({ any: z.array(condition).min(1) }).strict(),
  ]);
  return conditionSchema;
});

/** Buildbot's BuildStep parameters, which every kind takes. */
export const stepCommon = {
  name: stepName.optional(),
  description: z.string().optional(),
  descriptionDone: z.string().optional(),
  descriptionSuffix: z.string().optional(),
  haltOnFailure: z.boolean().default(false),
  flunkOnFailure: z.boolean().default(true),
  warnOnFailure: z.boolean().default(false),
  flunkOnWarnings: z.boolean().default(false),
  warnOnWarnings: z.boolean().default(false),
  alwaysRun: condition.default(false),
  doStepIf: condition.default(true),
  hideStepIf: condition.default(false),
  // Links shown with the step (Buildbot's addStepURL), with properties filled in when the
  // step starts: `{ name: coverage, url: "https://cov.example/%(prop:buildnumber)s" }`.
  urls: z.array(z.object({ name: renderable, url: renderable }).strict()).default([]),
  locks: z.array(lockAccess).default([]),
  timeout: z.number().positive().default(1200),
};
