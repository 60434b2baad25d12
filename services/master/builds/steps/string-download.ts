// A string_download step (Buildbot's StringDownload): the rendered string `s` written to the
// worker at workerdest under the step's workdir, with its mode. Secrets in it reach the file
// (that is what they are for) and stay out of the logs.
import { posix } from 'node:path';
import type { StepConfig } from '../../../core/config/master-config.js';
import { stepSummary } from '../summary.js';
import type { StepKind } from './step.js';
import { transferResults, transferStep, workerPath } from './transfer.js';

type StringDownloadStep = Extract<StepConfig, { type: 'string_download' }>;

export const stringDownload: StepKind<StringDownloadStep> = {
  defaultName: 'string_download',
  describe: (step, render) => `downloading to ${posix.basename(render(step.workerdest))}`,
  run: (c, signal) =>
    transferStep(
      c,
      signal,
      async (cmd) => {
        const data = Buffer.from(c.render(c.step.s), 'utf8');
        let at = 0;
        const read = async (n: number) => {
          const block = data.subarray(at, at + n);
          at += block.length;
          return block;
        };
        const end = await c.build.worker.download(
          {
            path: workerPath(c, c.render(c.step.workerdest)),
            maxsize: c.step.maxsize ?? null,
            blocksize: c.step.blocksize,
            mode: c.step.mode ?? null,
          },
          read,
          signal,
        );
        return transferResults(end, cmd, signal);
      },
      (results) => stepSummary(c.text, results),
    ),
};
