// A force scheduler: its form's parameters and codebases.
import { z } from 'zod';
import { identifier } from './identifiers.js';

// Force-form parameters, after Buildbot's ForceScheduler parameter classes: the same kinds,
// the same options and defaults, so that /forceschedulers answers what Buildbot answers.
const paramBase = {
  name: z.string(),
  label: z.string().optional(),
  tablabel: z.string().optional(),
  required: z.boolean().optional(),
  multiple: z.boolean().optional(),
  regex: z.string().optional(),
  hide: z.boolean().optional(),
  maxsize: z.number().int().positive().optional(),
  autopopulate: z.record(z.unknown()).optional(),
};
const sized = { size: z.number().int().positive().optional() };

export type ForceParameterConfig =
  | ({ type: 'fixed' | 'string' | 'text' | 'int' | 'boolean' | 'username' | 'choice' } & Record<
      string,
      unknown
    >)
  | ({ type: 'nested'; name: string; fields: ForceParameterConfig[] } & Record<string, unknown>);

const forceParameter: z.ZodType<ForceParameterConfig> = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('fixed'), default: z.unknown().optional(), ...paramBase }).strict(),
    z.object({ type: z.literal('string'), default: z.string().optional(), ...sized, ...paramBase }).strict(),
    z
      .object({
        type: z.literal('text'),
        default: z.string().optional(),
        cols: z.number().int().positive().optional(),
        rows: z.number().int().positive().optional(),
        ...sized,
        ...paramBase,
      })
      .strict(),
    z
      .object({ type: z.literal('int'), default: z.number().int().optional(), ...sized, ...paramBase })
      .strict(),
    z.object({ type: z.literal('boolean'), default: z.boolean().optional(), ...paramBase }).strict(),
    z
      .object({
        type: z.literal('username'),
        default: z.string().optional(),
        need_email: z.boolean().optional(),
        ...sized,
        ...paramBase,
        name: z.string().optional(),
      })
      .strict(),
    z
      .object({
        type: z.literal('choice'),
        choices: z.array(z.string()),
        default: z.union([z.string(), z.array(z.string())]).optional(),
        strict: z.boolean().optional(),
        ...paramBase,
      })
      .strict(),
    z
      .object({
        type: z.literal('nested'),
        fields: z.array(forceParameter),
        layout: z.enum(['vertical', 'tabs']).optional(),
        columns: z.number().int().min(1).max(4).optional(),
        ...paramBase,
      })
      .strict(),
  ]),
) as z.ZodType<ForceParameterConfig>;

// A codebase's branch/revision/repository/project: a form field (default), a fixed value
// (a string), or absent (null).
const codebaseSubfield = z.union([z.null(), z.string(), forceParameter]);
const codebaseField = z.union([
  z.string(),
  z
    .object({
      codebase: z.string().default(''),
      label: z.string().optional(),
      branch: codebaseSubfield.optional(),
      revision: codebaseSubfield.optional(),
      repository: codebaseSubfield.optional(),
      project: codebaseSubfield.optional(),
      hide: z.boolean().optional(),
      columns: z.number().int().min(1).max(4).optional(),
    })
    .strict(),
]);

export const forceScheduler = z
  .object({
    name: identifier,
    builders: z.array(identifier).min(1),
    label: z.string().optional(),
    button_name: z.string().optional(),
    reason: forceParameter.optional(),
    username: forceParameter.optional(),
    reason_string: z.string().optional(),
    codebases: z.array(codebaseField).min(1).optional(),
    properties: z.array(forceParameter).default([]),
  })
  .strict();
