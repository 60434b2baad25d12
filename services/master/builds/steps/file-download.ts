// A file_download step (Buildbot's FileDownload): a file to the worker, at workerdest under
// the step's workdir, its parent directories made and its mode set. The file is mastersrc,
// a file on the master as Buildbot's (with several masters, it must be on each), or the
// artifact named `artifact` that an earlier step of this build uploaded. One that is not
// there fails the step with a `stderr` log saying so, as Buildbot's. An artifact is read from
// PostgreSQL or, once moved, from the object store (services/core/artifacts/read.ts).
import { open } from 'node:fs/promises';
import { posix } from 'node:path';
import { readArtifactRange } from '../../../core/artifacts/read.js';
import type { StepConfig } from '../../../core/config/master-config.js';
import { completeArtifactByName } from '../../../core/data/index.js';
import { Results } from '../../../core/results.js';
import { stepSummary } from '../summary.js';
import { completeLog } from './complete-log.js';
import type { StepKind } from './step.js';
import { transferResults, transferStep, workerPath } from './transfer.js';

type FileDownloadStep = Extract<StepConfig, { type: 'file_download' }>;

type Reader = { read: (n: number) => Promise<Uint8Array>; close: () => Promise<void> };

export const fileDownload: StepKind<FileDownloadStep> = {
  defaultName: 'download',
  describe: (step, render) => `downloading to ${posix.basename(render(step.workerdest))}`,
  run: (c, signal) =>
    transferStep(
      c,
      signal,
      async (cmd) => {
        const source = await openSource(c);
        if ('missing' in source) {
          await completeLog(c, 'stderr', source.missing);
          return Results.FAILURE;
        }
        try {
          const end = await c.build.worker.download(
            {
              path: workerPath(c, c.render(c.step.workerdest)),
              maxsize: c.step.maxsize ?? null,
              blocksize: c.step.blocksize,
              mode: c.step.mode ?? null,
            },
            source.read,
            signal,
          );
          return await transferResults(end, cmd, signal);
        } finally {
          await source.close();
        }
      },
      (results) => stepSummary(c.text, results),
    ),
};

async function openSource(c: Parameters<typeof fileDownload.run>[0]): Promise<Reader | { missing: string }> {
  if (c.step.artifact !== undefined) {
    const name = c.render(c.step.artifact);
    const a = await completeArtifactByName(c.deps.ctx.db, c.build.buildid, name);
    if (!a) return { missing: `Artifact ${JSON.stringify(name)} not available in build ${c.build.buildid}` };
    let at = 0;
    return {
      read: async (n) => {
        const block = await readArtifactRange(c.deps.ctx.db, c.deps.objectStore ?? null, a.id, at, n);
        at += block.length;
        return block;
      },
      close: async () => {},
    };
  }
  const path = c.render(c.step.mastersrc ?? '');
  try {
    const fh = await open(path, 'r');
    return {
      read: async (n) => {
        const buf = Buffer.alloc(n);
        const { bytesRead } = await fh.read(buf, 0, n, null);
        return buf.subarray(0, bytesRead);
      },
      close: () => fh.close(),
    };
  } catch {
    return { missing: `File '${path}' not available at master` };
  }
}
