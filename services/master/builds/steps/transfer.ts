// What the transfer steps share (file-upload.ts, directory-upload.ts, multiple-file-upload.ts,
// file-download.ts, string-download.ts), as Buildbot's _TransferBuildStep: worker paths under
// the step's workdir, the step's `stdio` log with what the worker said, results from the
// transfer's rc (0 SUCCESS, anything else FAILURE, as makeStatusRemoteCommand decodes it),
// an interrupt's or a lost worker's results as every step has them; and, for uploads, the
// artifact: stored block by block as the worker sends it (each block committed before the
// next is asked for), counted by the master and stopped at its limit (upload-limit.ts),
// linked from the step once complete, dropped if the upload fails.
import { posix } from 'node:path';
import { builderDir, type StepConfig } from '../../../core/config/master-config.js';
import {
  addStepURL,
  appendArtifact,
  completeArtifact,
  dropArtifact,
  newArtifact,
  transact,
} from '../../../core/data/index.js';
import { Results } from '../../../core/results.js';
import type { TransferEnd, TransferSpec } from '../../workers/connection.js';
import { interruptedResults } from '../interruption.js';
import { stepSummary } from '../summary.js';
import { RemoteCommands, StepEnded, StepFailed } from './remote.js';
import type { StepContext, StepKind, StepOutcome } from './step.js';
import { meteredUpload, reachedText, uploadLimit } from './upload-limit.js';

type TransferStep = Extract<StepConfig, { workdir: string; blocksize: number }>;

/** A path relative to the step's workdir as the worker's connection takes it (relative to its base). */
export function workerPath(c: StepContext<TransferStep>, rel: string): string {
  return posix.join(builderDir(c.build.builder), c.step.workdir, rel);
}

/** An artifact's download link (under the configuration's buildbotURL, where the web UI and the API are). */
export function artifactUrl(c: StepContext<TransferStep>, artifactid: number): string {
  return `${c.deps.config.buildbotURL}api/v2/artifacts/${artifactid}/raw`;
}

/**
 * A transfer's end as results (Buildbot: rc 0 or none SUCCESS, else FAILURE), its log as
 * Buildbot 3.7 writes it: the worker's header lines, then `program finished with exit code N`
 * (remotecommand.py writes it when the rc arrives, on every command with a stdio log), then
 * the worker's stderr, which buildbot-worker sends after the rc (commands/transfer.py).
 */
export async function transferResults(
  end: TransferEnd,
  cmd: RemoteCommands,
  signal: AbortSignal,
): Promise<number> {
  if ('lost' in end) throw new StepEnded(Results.RETRY, end.reason);
  if (end.header) await cmd.header(end.header.replace(/\n$/, ''));
  await cmd.header(`program finished with exit code ${end.rc}`);
  if (end.text) await cmd.stderr(end.text);
  if (signal.aborted) throw new StepEnded(interruptedResults(signal));
  return end.rc === 0 ? Results.SUCCESS : Results.FAILURE;
}

export interface UploadTarget {
  /** The artifact's name in the build (the step's masterdest). */
  name: string;
  kind: 'file' | 'directory';
  compress?: 'gz' | 'bz2' | null;
  mode?: number | null;
  /** The link's text (default: the name's last part). */
  urlText?: string;
}

/** One upload from the worker into an artifact: its results. */
export async function uploadArtifact(
  c: StepContext<TransferStep>,
  cmd: RemoteCommands,
  signal: AbortSignal,
  spec: TransferSpec,
  target: UploadTarget,
): Promise<number> {
  const { ctx } = c.deps;
  // The name may hold a secret the build rendered into masterdest, or a file the worker
  // named after one (a glob's match): what is stored is redacted.
  const name = c.build.redactor.cleanLabel(target.name);
  const id = await transact(ctx, (tx) =>
    newArtifact(tx, {
      buildid: c.build.buildid,
      stepid: c.stepid,
      name,
      kind: target.kind,
      compress: target.compress ?? null,
      mode: target.mode ?? null,
    }),
  );
  const store = (block: Uint8Array) => transact(ctx, (tx) => appendArtifact(tx, id, block));
  let results: number = Results.EXCEPTION;
  try {
    // The master counts what arrives and stops at the limit (upload-limit.ts).
    const limit = await uploadLimit(ctx.db, c.deps.config.artifacts, c.build.buildid, spec.maxsize);
    const metered = await meteredUpload(limit, store, signal, (maxsize, write, cut) =>
      target.kind === 'file'
        ? c.build.worker.upload({ ...spec, maxsize }, write, cut)
        : c.build.worker.uploadDirectory({ ...spec, maxsize }, write, cut),
    );
    if ('over' in metered) {
      await cmd.stderr(metered.over);
      results = Results.FAILURE;
    } else {
      results = await transferResults(metered.end, cmd, signal);
      if (results !== Results.SUCCESS && metered.full) await cmd.stderr(reachedText(limit));
    }
  } finally {
    if (results === Results.SUCCESS) {
      const text = c.build.redactor.cleanLabel(
        target.urlText ?? posix.basename(posix.normalize(target.name)),
      );
      await transact(ctx, async (tx) => {
        await completeArtifact(tx, id);
        await addStepURL(tx, c.stepid, text, artifactUrl(c, id));
      });
      c.deps.onArtifactComplete?.(id);
    } else await transact(ctx, (tx) => dropArtifact(tx, id));
  }
  return results;
}

/** Buildbot's `url`/`urlText` link, when the step has one. */
export async function addConfiguredUrl(
  c: StepContext<TransferStep & { url?: unknown; urlText?: unknown; masterdest: unknown }>,
  masterdest: string,
): Promise<void> {
  const step = c.step as { url?: Parameters<typeof c.render>[0]; urlText?: Parameters<typeof c.render>[0] };
  if (step.url === undefined) return;
  const text =
    step.urlText !== undefined ? c.render(step.urlText) : posix.basename(posix.normalize(masterdest));
  const url = c.render(step.url);
  await transact(c.deps.ctx, (tx) =>
    addStepURL(tx, c.stepid, c.build.redactor.cleanLabel(text), c.build.redactor.clean(url)),
  );
}

/** Run a transfer step's body with its stdio log, turning how it ended into the outcome. */
export async function transferStep(
  c: StepContext<TransferStep>,
  signal: AbortSignal,
  body: (cmd: RemoteCommands) => Promise<number>,
  summary: (results: number) => string,
): Promise<StepOutcome> {
  const cmd = await RemoteCommands.open(c, signal);
  try {
    if (signal.aborted) throw new StepEnded(interruptedResults(signal));
    const results = await body(cmd);
    return { results, summary: summary(results) };
  } catch (err) {
    if (err instanceof StepEnded)
      return {
        results: err.results,
        summary: summary(err.results),
        ...(err.workerLost ? { workerLost: err.workerLost } : {}),
      };
    if (err instanceof StepFailed) return { results: Results.FAILURE, summary: summary(Results.FAILURE) };
    throw err;
  } finally {
    await cmd.finish();
  }
}

type SingleUpload = Extract<StepConfig, { type: 'file_upload' | 'directory_upload' }>;

/**
 * FileUpload and DirectoryUpload: one source under the workdir, one artifact named
 * masterdest, described as Buildbot's ("uploading <base name of the source>").
 */
export function singleUpload<C extends SingleUpload>(kind: 'file' | 'directory'): StepKind<C> {
  return {
    defaultName: 'upload',
    describe: (step, render) => `uploading ${posix.basename(render(step.workersrc))}`,
    run: (c, signal) =>
      transferStep(
        c,
        signal,
        async (cmd) => {
          const { step } = c;
          const masterdest = c.render(step.masterdest);
          await addConfiguredUrl(c, masterdest);
          const compress = step.type === 'directory_upload' ? (step.compress ?? null) : null;
          return uploadArtifact(
            c,
            cmd,
            signal,
            {
              path: workerPath(c, c.render(step.workersrc)),
              maxsize: step.maxsize ?? null,
              blocksize: step.blocksize,
              ...(kind === 'directory' ? { compress } : {}),
            },
            {
              name: masterdest,
              kind,
              compress,
              mode: step.type === 'file_upload' ? (step.mode ?? null) : null,
              // Without `url`, urlText names the artifact's own link.
              ...(step.urlText !== undefined && step.url === undefined
                ? { urlText: c.render(step.urlText) }
                : {}),
            },
          );
        },
        (results) => stepSummary(c.text, results),
      ),
  };
}
