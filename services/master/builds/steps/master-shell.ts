// A master_shell step (Buildbot's MasterShellCommand): the command runs on the master that
// runs the build (any master of the cluster: what it uses must be on each), in the master's
// working directory or `workdir` under it, bounded in time and output (master-process.ts).
// Its environment is PATH, HOME and LANG and the step's `env`, never the master's own, which
// holds the database's and Redis's credentials (Buildbot passes its whole environment).
// The `stdio` log starts with Buildbot's headers (the command, "** RUNNING ON BUILDMASTER **",
// the directory, argv, the step's env); "Running", then "Ran", or "failed (RC)" and
// "killed (SIGNAL)" (FAILURE), as Buildbot's; a command that cannot start is "failed (1)". Who may write such a step: docs/security.md.
import { resolve } from 'node:path';
import type { StepConfig } from '../../../core/config/master-config.js';
import { pyRepr } from '../../../core/python.js';
import { Results } from '../../../core/results.js';
import { interruptedResults } from '../interruption.js';
import { runOnMaster } from '../master-process.js';
import { renderCommand } from './command.js';
import type { StepKind } from './step.js';
import { done } from './step-end.js';
import { StepLogs } from './step-logs.js';

type MasterShellStep = Extract<StepConfig, { type: 'master_shell' }>;

/** What of the master's environment a command on it gets. */
const PASSED = ['PATH', 'HOME', 'LANG'];

export const masterShell: StepKind<MasterShellStep> = {
  defaultName: 'MasterShellCommand',
  describe: () => null,
  async run(c, signal) {
    const { step } = c;
    const command = renderCommand(step.command, c.render);
    const argv = typeof command === 'string' ? ['/bin/sh', '-c', command] : command;
    const own = Object.fromEntries(Object.entries(step.env).map(([k, v]) => [k, c.render(v)]));
    const env: Record<string, string> = {};
    for (const k of PASSED) if (process.env[k] !== undefined) env[k] = process.env[k]!;
    Object.assign(env, own);
    const cwd = resolve(step.workdir ?? '.');
    const logs = new StepLogs(c);
    const stdio = await logs.open('stdio', 's');
    let end: Awaited<ReturnType<typeof runOnMaster>>;
    try {
      const shown = typeof command === 'string' ? command.trim() : command.join(' ');
      await stdio.write(
        'h',
        `${shown}\n\n** RUNNING ON BUILDMASTER **\n in dir ${cwd}\n argv: ${pyRepr(argv)}\n env: ${pyRepr(own)}\n`,
      );
      end = await runOnMaster(
        {
          argv,
          cwd,
          env,
          timeout: step.timeout,
          ...(step.maxTime !== undefined ? { maxTime: step.maxTime } : {}),
          interruptSignal: step.interruptSignal,
        },
        (stream, text) => stdio.write(stream, text),
        signal,
      );
      // A command that cannot start fails as Buildbot's does: Twisted's child reports the
      // failed exec on stderr and exits 1, so the step ends "failed (1)" (FAILURE), not EXCEPTION.
      if ('spawnError' in end) {
        await stdio.write('e', `cannot start the command: ${end.spawnError}\n`);
        await stdio.write('h', 'exit status 1\n');
      } else if (end.signal !== null) await stdio.write('h', `signal ${end.signal}\n`);
      else if (end.rc !== 0) await stdio.write('h', `exit status ${end.rc}\n`);
    } finally {
      await logs.finish();
    }
    if (signal.aborted) return done(c, interruptedResults(signal));
    if ('spawnError' in end) return done(c, Results.FAILURE, 'failed (1)');
    if (end.signal !== null) return done(c, Results.FAILURE, `killed (${end.signal})`);
    if (end.rc !== 0) return done(c, Results.FAILURE, `failed (${end.rc})`);
    return done(c, Results.SUCCESS);
  },
};
