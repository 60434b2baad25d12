// A source stamp's patch applied after a source step's checkout (Buildbot's Source.patch with
// Git.applyPatch, buildbot/steps/source/base.py and git.py): the patch and a
// `.buildbot-patched` marker downloaded into the workdir (or the patch's subdir, when it
// stays inside the workdir: Buildbot ignores one outside it), `git update-index --refresh`,
// `git apply --index -p LEVEL .buildbot-diff` (Buildbot feeds the patch on stdin; a command
// here has none, so git reads the downloaded file), and the file removed. Each download's rc
// line goes into the step's log, as Buildbot's downloadFileContentToWorker writes it.
import { posix } from 'node:path';
import type { PatchFacts } from '../../../core/data/index.js';
import { Results } from '../../../core/results.js';
import { type RemoteCommands, StepFailed } from './remote.js';
import type { StepContext } from './step.js';
import { transferResults } from './transfer.js';

/** The files Buildbot's Source.patch writes into the workdir: the patch, and the marker it leaves. */
const DIFF = '.buildbot-diff';
export const PATCHED = '.buildbot-patched';

/** `git ARGS` in a directory (relative to the worker's base), failing the step on a non-zero exit. */
type Git = (args: string[], workdir: string) => Promise<unknown>;

export async function applyPatch(
  c: StepContext,
  cmd: RemoteCommands,
  signal: AbortSignal,
  workdir: string,
  patch: PatchFacts,
  git: Git,
): Promise<void> {
  const inside = patch.subdir ? posix.normalize(patch.subdir) : '.';
  const outside = inside === '..' || inside.startsWith('../') || posix.isAbsolute(inside);
  const dir = outside ? workdir : posix.join(workdir, inside);
  await download(c, cmd, signal, posix.join(dir, DIFF), patch.body);
  await download(c, cmd, signal, posix.join(dir, PATCHED), Buffer.from('patched\n'));
  await git(['update-index', '--refresh'], dir);
  await git(['apply', '--index', '-p', String(patch.level), DIFF], dir);
  await cmd.run(['rm', '-rf', DIFF], { workdir: dir });
}

/** A file to the worker (Buildbot's downloadFileContentToWorker). */
async function download(
  c: StepContext,
  cmd: RemoteCommands,
  signal: AbortSignal,
  path: string,
  data: Buffer,
): Promise<void> {
  let at = 0;
  const read = async (n: number) => {
    const block = data.subarray(at, at + n);
    at += block.length;
    return block;
  };
  const end = await c.build.worker.download({ path, blocksize: 32 * 1024 }, read, signal);
  if ((await transferResults(end, cmd, signal)) !== Results.SUCCESS)
    throw new StepFailed(`could not download ${path}`);
}
