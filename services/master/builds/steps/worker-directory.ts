// What remove_directory, make_directory and copy_directory share (Buildbot's RemoveDirectory,
// MakeDirectory, CopyDirectory): their paths are relative to the builder's directory on the
// worker, and the work is done by the commands buildbot-worker itself runs for its rmdir,
// mkdir and cpdir on POSIX (`rm -rf`, retried after `chmod -Rf u+rwx`; `mkdir -p`;
// `cp -R -P -p -v`), run through the worker's connection as any command is, so that a
// Flotilla agent and a buildbot-worker do the same. Buildbot gives these steps no log (their
// RemoteCommand has none): what the commands print is not kept. Results: SUCCESS when the
// command exits 0, else FAILURE; an interrupt's or a lost worker's results as every step's.
import { builderDir, type StepConfig } from '../../../core/config/master-config.js';
import { Results } from '../../../core/results.js';
import { interruptedResults } from '../interruption.js';
import type { StepContext, StepKind, StepOutcome } from './step.js';
import { done } from './step-end.js';

type DirectoryStep = Extract<StepConfig, { type: 'remove_directory' | 'make_directory' | 'copy_directory' }>;

/** How a command ended: its exit code, or the outcome the step ends with at once. */
export type Ran = { rc: number } | { ended: StepOutcome };

/** Run argv in the builder's directory on the worker, its output dropped. */
export async function quietly(
  c: StepContext<DirectoryStep>,
  argv: string[],
  signal: AbortSignal,
  limits: { timeout: number; maxTime?: number },
): Promise<Ran> {
  if (signal.aborted) return { ended: done(c, interruptedResults(signal)) };
  const end = await c.build.worker.run(
    {
      command: argv,
      workdir: builderDir(c.build.builder),
      env: {},
      timeout: limits.timeout,
      ...(limits.maxTime !== undefined ? { maxTime: limits.maxTime } : {}),
      interruptSignal: 'KILL',
    },
    async () => {},
    signal,
  );
  if ('lost' in end) return { ended: { ...done(c, Results.RETRY), workerLost: end.reason } };
  if (end.interrupted) return { ended: done(c, signal.aborted ? interruptedResults(signal) : Results.RETRY) };
  return { rc: end.rc ?? -1 };
}

/** A directory step's kind: Buildbot's name for it, and its work. */
export function directoryStep<C extends DirectoryStep>(
  defaultName: string,
  run: (c: StepContext<C>, signal: AbortSignal) => Promise<StepOutcome>,
): StepKind<C> {
  // Its words are its description and descriptionDone (Buildbot's, by default), or those its
  // work ends with.
  return { defaultName, describe: () => null, run };
}
