// What the steps that run a command on the worker share: Buildbot's ShellMixin parameters
// (the command, its workdir, env, logfiles, limits, signals and decodeRC), with its names.
import { z } from 'zod';
import { renderable, result } from './step-common.js';

export const command = z.union([renderable, z.array(renderable).min(1)], {
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
export const SIGNALS = ['KILL', 'TERM', 'INT', 'HUP', 'QUIT', 'USR1', 'USR2'] as const;

/** Buildbot's ShellMixin parameters but the command (a shell_sequence has commands). */
export const shellParameters = {
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

/** Buildbot's ShellMixin parameters: a command on the worker. */
export const shellCommon = { command, ...shellParameters };
