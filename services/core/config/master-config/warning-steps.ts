// The steps that count warnings in their output: Buildbot's WarningCountingShellCommand and
// its Compile and Test (buildbot/steps/shell.py), with its names, defaults and meaning. Each
// line of the command's `stdio` log that warningPattern matches at its start (Python's
// re.match) is a warning, unless a suppression says otherwise; the step then ends WARNINGS,
// or FAILURE past maxWarnCount. The patterns are Python's as Buildbot takes them
// (core/python-regex.ts says what is translated); one with no JavaScript form is refused here.
import { z } from 'zod';
import { pythonRegExp } from '../../python-regex.js';
import { shellCommon } from './shell-common.js';
import { renderable, stepCommon } from './step-common.js';

const pattern = z.string().superRefine((s, ctx) => {
  try {
    pythonRegExp(s);
  } catch (err) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: `expected a regular expression: ${(err as Error).message}`,
    });
  }
});

// Buildbot's defaults (GNU make's directory lines).
export const DEFAULT_WARNING_PATTERN = '(?i).*warning[: ].*';
const DIRECTORY_ENTER = 'make.*: Entering directory [\u2019"`\'](.*)[\u2019\'`"]';
const DIRECTORY_LEAVE = 'make.*: Leaving directory';

const line = z.number().int().min(0).nullable();

const warningCounting = {
  warningPattern: pattern.default(DEFAULT_WARNING_PATTERN),
  // What a suppression is matched against: the whole line (Buildbot's warnExtractWholeLine),
  // or the file, line number and text in groups 1, 2 and 3 of warningPattern
  // (warnExtractFromRegexpGroups).
  warningExtractor: z.enum(['whole_line', 'regexp_groups']).default('whole_line'),
  // More warnings than this and the step fails.
  maxWarnCount: z.number().int().min(0).optional(),
  directoryEnterPattern: pattern.default(DIRECTORY_ENTER),
  directoryLeavePattern: pattern.default(DIRECTORY_LEAVE),
  // A file in the step's workdir on the worker, each line `FILE-RE : WARN-RE [: START[-END]]`.
  suppressionFile: renderable.optional(),
  // [FILE-RE, WARN-RE, START, END]: null matches any file, any warning, any line.
  suppressionList: z.array(z.tuple([pattern.nullable(), pattern.nullable(), line, line])).optional(),
};

export const warningCountingShellStep = z
  .object({ type: z.literal('warning_counting_shell'), ...shellCommon, ...warningCounting, ...stepCommon })
  .strict();

// Buildbot's Compile and Test: a warning-counting command with a default, and their words
// while running and once done.
const makeStep = <T extends string>(type: T, target: string, running: string, done: string) => ({
  type: z.literal(type),
  ...shellCommon,
  command: shellCommon.command.default(['make', target]),
  ...warningCounting,
  ...stepCommon,
  description: z.string().default(running),
  descriptionDone: z.string().default(done),
});

// Compile: `make all`, halting the build on failure; "compiling", then "compile".
export const compileStep = z
  .object({ ...makeStep('compile', 'all', 'compiling', 'compile'), haltOnFailure: z.boolean().default(true) })
  .strict();

// Test: `make test`, a failure a warning of the build as well; "testing", then "test".
export const testStep = z
  .object({ ...makeStep('test', 'test', 'testing', 'test'), warnOnFailure: z.boolean().default(true) })
  .strict();
