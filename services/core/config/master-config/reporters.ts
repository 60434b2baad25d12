// The `reporters` section: where build results are reported (Buildbot's c['services'] of
// reporters), one entry per reporter, each with the generators that decide which events
// become reports and the formatters that write them. Keys are Buildbot 3.7's argument names
// (buildbot/reporters/*.py, reporters/generators/*.py, reporters/message.py); `type` names the
// class: github (GitHubStatusPush), gitlab (GitLabStatusPush), http (HttpStatusPush), mail
// (MailNotifier); generators build_status (BuildStatusGenerator), build_start_end
// (BuildStartEndStatusGenerator), build_request (BuildRequestGenerator); formatters message
// (MessageFormatter: a Jinja template), renderable (MessageFormatterRenderable: an
// Interpolate template) and json (the build's data, as HttpStatusPush's default sends it). A reporter without `generators` gets Buildbot's defaults for its
// class. Credentials come from the value itself, an environment variable (`<key>_env`) or a
// file (`<key>_file`), as a worker's password does.
import { z } from 'zod';
import { identifier } from './identifiers.js';

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

/** `key`, `key_env` and `key_file`: at most one of them (the caller says if one is required). */
function secret<K extends string>(key: K) {
  return {
    [key]: z.string().min(1).optional(),
    [`${key}_env`]: z.string().min(1).optional(),
    [`${key}_file`]: z.string().min(1).optional(),
  } as Record<K | `${K}_env` | `${K}_file`, z.ZodOptional<z.ZodString>>;
}

function given(r: Record<string, unknown>, key: string): number {
  return [key, `${key}_env`, `${key}_file`].filter((k) => r[k] !== undefined).length;
}

const common = {
  // The reporter's name: its queue and its label in /metrics (default: its type).
  name: identifier.optional(),
  generators: z.array(generator).min(1).optional(),
};

const statusPush = {
  ...common,
  ...secret('token'),
  context: z.string().min(1).optional(),
  baseURL: z.string().url().optional(),
  verbose: z.boolean().default(false),
};

const github = z.object({ type: z.literal('github'), ...statusPush }).strict();
const gitlab = z.object({ type: z.literal('gitlab'), ...statusPush }).strict();

const http = z
  .object({
    type: z.literal('http'),
    ...common,
    serverUrl: z.string().url(),
    headers: z.record(z.string()).default({}),
    auth: z
      .object({ user: z.string().min(1), ...secret('password') })
      .strict()
      .optional(),
    // Ours (Buildbot has none): the body's HMAC-SHA256, hex, in X-Flotilla-Signature-256.
    ...secret('hmac_secret'),
  })
  .strict();

// Buildbot's VALID_EMAIL: `addr@domain.tld` or `Name <addr@domain.tld>`; the local part is
// anything but whitespace, the domain needs a dot.
const ADDRESS = String.raw`\S+@[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)+\.?`;
export const VALID_EMAIL = new RegExp(String.raw`^(?:${ADDRESS}|(?:.+\s+)?<${ADDRESS}>\s*)$`);

const email = z.string().regex(VALID_EMAIL, { message: 'expected an email address' });

const mail = z
  .object({
    type: z.literal('mail'),
    ...common,
    fromaddr: email,
    relayhost: z.string().min(1).default('localhost'),
    smtpPort: z.number().int().min(1).max(65535).default(25),
    useTls: z.boolean().default(false),
    useSmtps: z.boolean().default(false),
    smtpUser: z.string().min(1).optional(),
    ...secret('smtpPassword'),
    // Ours: a PEM authority the relay's certificate is checked against (else the system's).
    smtpCaFile: z.string().min(1).optional(),
    lookup: z
      .string()
      .regex(/^[^@\s]+$/, 'expected a domain')
      .optional(),
    extraRecipients: z.array(email).default([]),
    sendToInterestedUsers: z.boolean().default(true),
    extraHeaders: z.record(z.string()).default({}),
  })
  .strict();

export const reporter = z
  .discriminatedUnion('type', [github, gitlab, http, mail], {
    errorMap: (issue, ctx) =>
      issue.code === 'invalid_union_discriminator'
        ? { message: 'expected type to be one of github, gitlab, http, mail' }
        : { message: ctx.defaultError },
  })
  .superRefine((r, ctx) => {
    const rec = r as Record<string, unknown>;
    const once = (key: string, required: boolean, at: (string | number)[] = []) => {
      const n = given(at.length ? (rec[at[0] as string] as Record<string, unknown>) : rec, key);
      if (n > 1 || (required && n === 0))
        ctx.addIssue({
          code: 'custom',
          path: at,
          message: `expected ${required ? 'exactly' : 'at most'} one of ${key}, ${key}_env, ${key}_file`,
        });
    };
    if (r.type === 'github' || r.type === 'gitlab') once('token', true);
    if (r.type === 'http') {
      once('hmac_secret', false);
      if (r.auth) once('password', true, ['auth']);
    }
    if (r.type === 'mail') {
      once('smtpPassword', false);
      if ((r.smtpUser === undefined) !== (given(rec, 'smtpPassword') === 0))
        ctx.addIssue({
          code: 'custom',
          path: ['smtpUser'],
          message: 'expected smtpUser and smtpPassword together',
        });
    }
  });

export type ReporterConfig = z.infer<typeof reporter>;
