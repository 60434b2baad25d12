// A multiple_file_upload step (Buildbot's MultipleFileUpload): each of workersrcs (with
// `glob`, each pattern's matches on the worker) is uploaded as an artifact named
// masterdest/<its base name>, a file as a file_upload does, a directory as a
// directory_upload does; the first that fails ends the step FAILURE. A source that is not
// there, or neither a file nor a directory, fails it with a `stderr` log saying so, as
// Buildbot's. No sources at all: SKIPPED.
//
// Buildbot asks its worker's `stat` and `glob` commands; they are shell commands here
// (`test -d`, the shell's own pattern expansion), so the step runs the same on a Flotilla
// agent and on buildbot-worker. The pattern reaches the shell as an argument, expanded
// unquoted with IFS empty: matched against files, never run.
import { posix } from 'node:path';
import type { StepConfig } from '../../../core/config/master-config.js';
import { Results } from '../../../core/results.js';
import { stepSummary } from '../summary.js';
import { completeLog } from './complete-log.js';
import type { RemoteCommands } from './remote.js';
import type { StepContext, StepKind } from './step.js';
import { addConfiguredUrl, transferStep, uploadArtifact, workerPath } from './transfer.js';

type MultipleFileUploadStep = Extract<StepConfig, { type: 'multiple_file_upload' }>;

const GLOB = 'IFS=; for f in $1; do [ -e "$f" ] && printf "%s\\n" "$f"; done; true';
const KIND =
  'if [ -d "$1" ]; then echo directory; elif [ -f "$1" ]; then echo file; elif [ -e "$1" ]; then echo other; else echo missing; fi';

const files = (n: number) => `${n} ${n === 1 ? 'file' : 'files'}`;

export const multipleFileUpload: StepKind<MultipleFileUploadStep> = {
  defaultName: 'upload',
  describe: (step) =>
    step.glob
      ? 'uploading'
      : `uploading ${files(Array.isArray(step.workersrcs) ? step.workersrcs.length : 1)}`,
  run: (c, signal) => {
    let count: number | null = null;
    return transferStep(
      c,
      signal,
      async (cmd) => {
        const masterdest = c.render(c.step.masterdest);
        let srcs = (Array.isArray(c.step.workersrcs) ? c.step.workersrcs : [c.step.workersrcs]).map(c.render);
        if (c.step.glob) srcs = (await Promise.all(srcs.map((p) => glob(c, cmd, p)))).flat();
        count = srcs.length;
        let results: number = srcs.length === 0 ? Results.SKIPPED : Results.SUCCESS;
        for (const src of srcs) {
          const one = await uploadOne(c, cmd, signal, src, masterdest);
          if (one === Results.FAILURE) {
            results = Results.FAILURE;
            break;
          }
        }
        await addConfiguredUrl(c, masterdest);
        return results;
      },
      (results) =>
        stepSummary(
          c.step.descriptionDone ??
            c.step.description ??
            (count !== null ? `uploading ${files(count)}` : c.text),
          results,
        ),
    );
  },
};

async function glob(
  c: StepContext<MultipleFileUploadStep>,
  cmd: RemoteCommands,
  pattern: string,
): Promise<string[]> {
  const r = await cmd.run(['sh', '-c', GLOB, 'sh', pattern], {
    workdir: workerPath(c, ''),
    collectStdout: true,
    abandonOnFailure: false,
    quiet: true,
  });
  return r.stdout.split('\n').filter((l) => l !== '');
}

async function uploadOne(
  c: StepContext<MultipleFileUploadStep>,
  cmd: RemoteCommands,
  signal: AbortSignal,
  src: string,
  masterdest: string,
): Promise<number> {
  const kind = (
    await cmd.run(['sh', '-c', KIND, 'sh', src], {
      workdir: workerPath(c, ''),
      collectStdout: true,
      abandonOnFailure: false,
      quiet: true,
    })
  ).stdout.trim();
  if (kind !== 'file' && kind !== 'directory') {
    await completeLog(
      c,
      'stderr',
      kind === 'other'
        ? `${src} is neither a regular file, nor a directory`
        : `File ${c.step.workdir}/${src} not available at worker`,
    );
    return Results.FAILURE;
  }
  const name = posix.join(masterdest, posix.basename(posix.normalize(src)));
  return uploadArtifact(
    c,
    cmd,
    signal,
    {
      path: workerPath(c, src),
      maxsize: c.step.maxsize ?? null,
      blocksize: c.step.blocksize,
      ...(kind === 'directory' ? { compress: c.step.compress ?? null } : {}),
    },
    {
      name,
      kind,
      ...(kind === 'directory' ? { compress: c.step.compress ?? null } : { mode: c.step.mode ?? null }),
    },
  );
}
