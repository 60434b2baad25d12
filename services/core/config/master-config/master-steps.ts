// Steps that run on the master: Buildbot's MasterShellCommand (buildbot/steps/master.py) as
// `master_shell`. Whoever writes the master's configuration already runs code as the master
// (docs/security.md); what is refused here is what would let others: a shell string (run by
// /bin/sh) may take no value that builds receive from users and workers, so `%(prop:...)s`,
// `%(src:...)s` and `%(worker:...)s` are refused in it (a force form's property or a
// change's branch would otherwise become shell code on the master). In the list form each
// element is one argument, passed to the program as it is, and any template is allowed.
import { z } from 'zod';
import { InterpolationError, type Part, parse } from '../../interpolate.js';
import { command, SIGNALS } from './shell-common.js';
import { renderable, stepCommon } from './step-common.js';

/** The selectors a template uses, nested ones included. */
function selectors(parts: Part[], out = new Set<string>()): Set<string> {
  for (const p of parts) {
    if (typeof p === 'string') continue;
    out.add(p.selector);
    selectors(p.arg, out);
    selectors(p.otherwise, out);
  }
  return out;
}

const UNTRUSTED = ['prop', 'src', 'worker'];

export const masterShellStep = z
  .object({
    type: z.literal('master_shell'),
    command,
    // The environment the command gets, on top of PATH, HOME and LANG (not the master's own:
    // that holds its database and Redis credentials).
    env: z.record(renderable).default({}),
    // Relative to the master's working directory (Buildbot's: the master's base directory).
    workdir: z.string().optional(),
    interruptSignal: z.enum(SIGNALS).default('KILL'),
    // Seconds the command may run at all (Buildbot's MasterShellCommand has no limit).
    maxTime: z.number().positive().optional(),
    ...stepCommon,
    haltOnFailure: z.boolean().default(true),
    description: z.string().default('Running'),
    descriptionDone: z.string().default('Ran'),
  })
  .strict();

/** What the schema alone cannot say of a master_shell step: the templates its shell string takes. */
export function masterShellProblems(step: z.infer<typeof masterShellStep>): string[] {
  if (Array.isArray(step.command)) return [];
  const text = typeof step.command === 'string' ? step.command : step.command.interpolate;
  const kw = typeof step.command === 'string' ? null : new Set(Object.keys(step.command.kw));
  let used: Set<string>;
  try {
    used = selectors(parse(text, kw));
  } catch (err) {
    if (err instanceof InterpolationError) return []; // the command's own schema said so
    throw err;
  }
  const bad = UNTRUSTED.filter((s) => used.has(s));
  return bad.length
    ? [
        `command: a shell string run on the master may not take ${bad.map((s) => `%(${s}:...)s`).join(', ')}: give the command as a list, each value one argument`,
      ]
    : [];
}
