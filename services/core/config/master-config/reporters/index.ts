// The `reporters` section: where build results are reported (Buildbot's c['services'] of
// reporters), one entry per reporter. Keys are Buildbot 3.7's argument names
// (buildbot/reporters/*.py); `type` names the kind, one file each beside this one, listed in
// KINDS. What kinds share (generators, formatters): generators.ts; credentials and checks:
// kind.ts. A new kind: its file here, its line in KINDS, and its file in
// services/master/reporters/kinds/, which the compiler then asks for.
import { z } from 'zod';
import { github } from './github.js';
import { gitlab } from './gitlab.js';
import { http } from './http.js';
import { checksOf } from './kind.js';
import { mail } from './mail.js';

const KINDS = [github, gitlab, http, mail] as const;

type Kind = (typeof KINDS)[number];
const KIND_NAMES = KINDS.map((k) => k.schema.shape.type.value);

export const reporter = z
  .discriminatedUnion('type', KINDS.map((k) => k.schema) as [Kind['schema'], ...Kind['schema'][]], {
    errorMap: (issue, ctx) =>
      issue.code === 'invalid_union_discriminator'
        ? { message: `expected type to be one of ${KIND_NAMES.join(', ')}` }
        : { message: ctx.defaultError },
  })
  .superRefine((r, ctx) => {
    const kind = KINDS.find((k) => k.schema.shape.type.value === r.type);
    // The kind's own check, of its own shape: `r` is that shape once its type is known.
    kind?.check?.(r as never, checksOf(r, ctx));
  });

export type ReporterConfig = z.infer<typeof reporter>;
export type { FormatterConfig, GeneratorConfig, ReportMode } from './generators.js';
