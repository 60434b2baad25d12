// The steps of a builder: one schema per step kind, and the union of them, which the
// master's step kinds (services/master/builds/steps/) mirror one to one. A new kind: its
// schema here, its line in STEP_KINDS, and its file beside the others in the master.
// What every kind shares (conditions, templates, results): step-common.ts.
import { z } from 'zod';
import { identifier } from './identifiers.js';
import { gitStep } from './source-steps.js';
import { renderable, result, stepCommon } from './step-common.js';
import {
  directoryUploadStep,
  fileDownloadStep,
  fileUploadStep,
  multipleFileUploadStep,
  stringDownloadStep,
} from './transfer-steps.js';

const command = z.union([renderable, z.array(renderable).min(1)], {
  errorMap: () => ({ message: 'expected a shell string or a list of arguments' }),
});

// A file on the worker followed as a log of its own while the command runs (Buildbot's
// logfiles): `name: path`, or `name: {filename: path, follow: true}` to send only what is
// written after the command starts.
const logfile = z.union([
  z
    .string()
    .min(1)
    .transform((filename) => ({ filename, follow: false })),
  z.object({ filename: z.string().min(1), follow: z.boolean().default(false) }).strict(),
]);

// Signals a command may be interrupted with (Buildbot's interruptSignal, without SIG).
const SIGNALS = ['KILL', 'TERM', 'INT', 'HUP', 'QUIT', 'USR1', 'USR2'] as const;

/** Buildbot's ShellMixin parameters: a command on the worker. */
const shellCommon = {
  command,
  workdir: z.string().optional(),
  env: z.record(renderable).default({}),
  logfiles: z.record(logfile).default({}),
  // Logs of `logfiles` created only once their file has something (Buildbot's lazylogfiles).
  lazylogfiles: z.boolean().default(false),
  // Seconds the command may run at all, output or not (Buildbot's maxTime).
  maxTime: z.number().positive().optional(),
  interruptSignal: z.enum(SIGNALS).default('KILL'),
  // Seconds between SIGTERM and interruptSignal when interrupting (Buildbot's sigtermTime).
  sigtermTime: z.number().positive().optional(),
  // Exit code -> result (Buildbot's decodeRC, default {0: success}): `{0: success, 1: warnings}`.
  decodeRC: z.record(z.string().regex(/^-?\d+$/, 'expected an exit code'), result).default({ '0': 0 }),
};

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
  triggerStep,
  gitStep,
  fileUploadStep,
  directoryUploadStep,
  multipleFileUploadStep,
  fileDownloadStep,
  stringDownloadStep,
] as const;

const KIND_NAMES = STEP_KINDS.map((k) => k.shape.type.value);

export const step = z.discriminatedUnion('type', [...STEP_KINDS], {
  errorMap: (issue, ctx) =>
    issue.code === 'invalid_union_discriminator'
      ? { message: `expected type to be one of ${KIND_NAMES.join(', ')}` }
      : { message: ctx.defaultError },
});
