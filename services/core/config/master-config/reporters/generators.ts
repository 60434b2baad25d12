// What every reporter kind shares: the generators that decide which events become reports
// (Buildbot's reporters/generators/*.py: build_status is BuildStatusGenerator, build_start_end
// BuildStartEndStatusGenerator, build_request BuildRequestGenerator) and the formatters that
// write them (reporters/message.py: message is MessageFormatter, a Jinja template; renderable
// is MessageFormatterRenderable, an Interpolate template; json is the build's data, as
// HttpStatusPush's default sends it). A reporter without `generators` gets its kind's
// defaults (services/master/reporters/kinds/).
import { z } from 'zod';

// Buildbot's BuildStatusGeneratorMixin.possible_modes, and the two shortcuts it expands.
export const REPORT_MODES = [
  'change',
  'failing',
  'passing',
  'problem',
  'warnings',
  'exception',
  'cancelled',
] as const;
export type ReportMode = (typeof REPORT_MODES)[number];

const mode = z
  .union([z.enum([...REPORT_MODES, 'all']), z.array(z.enum(REPORT_MODES)).min(1)], {
    errorMap: () => ({
      message: `expected "all" or one of ${REPORT_MODES.join(', ')}, or a list of them ("all" only alone)`,
    }),
  })
  .transform((m): ReportMode[] => {
    if (m === 'all') return ['failing', 'passing', 'warnings', 'exception', 'cancelled'];
    if (m === 'warnings') return ['failing', 'warnings'];
    return typeof m === 'string' ? [m] : m;
  });

const names = z.array(z.string().min(1)).min(1).optional();
// Buildbot's subjects are one line; a newline in one is its config error too.
const subject = z.string().refine((s) => !s.includes('\n'), 'newlines are not allowed in message subjects');

const messageFormatter = z
  .object({
    type: z.literal('message'),
    template: z.string().optional(),
    subject: subject.optional(),
    template_type: z.enum(['plain', 'html']).default('plain'),
    want_properties: z.boolean().default(true),
    want_steps: z.boolean().default(false),
    want_logs: z.boolean().default(false),
  })
  .strict();

const renderableFormatter = z
  .object({
    type: z.literal('renderable'),
    template: z.string().nullable(),
    subject: subject.optional(),
  })
  .strict();

// The build's own data as the body (HttpStatusPush's default, a MessageFormatterFunction there).
const jsonFormatter = z.object({ type: z.literal('json') }).strict();

export const formatter = z.discriminatedUnion('type', [messageFormatter, renderableFormatter, jsonFormatter]);
export type FormatterConfig = z.infer<typeof formatter>;

const filters = {
  builders: names,
  tags: names,
  schedulers: names,
  branches: names,
  add_patch: z.boolean().default(false),
};

const buildStatus = z
  .object({
    type: z.literal('build_status'),
    mode: mode.default(['failing', 'passing', 'warnings']),
    report_new: z.boolean().default(false),
    message_formatter: formatter.optional(),
    ...filters,
  })
  .strict();

const buildStartEnd = z
  .object({
    type: z.literal('build_start_end'),
    start_formatter: formatter.optional(),
    end_formatter: formatter.optional(),
    ...filters,
  })
  .strict();

const buildRequest = z
  .object({
    type: z.literal('build_request'),
    formatter: formatter.optional(),
    ...filters,
  })
  .strict();

export const generator = z
  .discriminatedUnion('type', [buildStatus, buildStartEnd, buildRequest])
  .refine((g) => g.builders === undefined || g.tags === undefined, {
    message: 'specify only builders or tags to include, not both',
  });
export type GeneratorConfig = z.infer<typeof generator>;
