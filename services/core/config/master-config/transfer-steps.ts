// Transfer steps: Buildbot's FileUpload, DirectoryUpload, MultipleFileUpload, FileDownload and
// StringDownload (buildbot/steps/transfer.py), with its names and defaults. Worker paths are
// relative to the step's workdir (the builder's `build` by default). An upload's masterdest
// is the artifact's name in its build (services/core/data/artifacts.ts) rather than a path
// on one master's disk; a FileDownload's mastersrc is a file on the master, as Buildbot's,
// or, with `artifact`, an artifact an earlier step of the build uploaded.
import { z } from 'zod';
import { renderable, stepCommon } from './step-common.js';

// A permission mode, as Buildbot's (an int: 0o755 in YAML is 493; "0755" is accepted too).
const mode = z
  .union([
    z.number().int().min(0).max(0o7777),
    z.string().regex(/^0?o?[0-7]{1,4}$/, 'expected an octal mode'),
  ])
  .transform((m) => (typeof m === 'number' ? m : Number.parseInt(m.replace(/^0?o?/, ''), 8)))
  .optional();

const maxsize = z.number().int().positive().optional();
const compress = z.enum(['gz', 'bz2']).optional();
// Bytes per message; Buildbot's default differs by step (256 KiB up a file, 16 KiB otherwise).
const blocksize = (byDefault: number) => z.number().int().positive().default(byDefault);

// What Buildbot's _TransferBuildStep changes of every step: it halts the build on failure.
const transferCommon = {
  ...stepCommon,
  haltOnFailure: z.boolean().default(true),
  workdir: z.string().default('build'),
};

const upload = {
  masterdest: renderable,
  // A link added to the step (Buildbot's url/urlText); the artifact's own download link is
  // added whatever these say.
  url: renderable.optional(),
  urlText: renderable.optional(),
  maxsize,
};

export const fileUploadStep = z
  .object({
    type: z.literal('file_upload'),
    workersrc: renderable,
    ...upload,
    blocksize: blocksize(256 * 1024),
    mode,
    keepstamp: z.boolean().default(false),
    ...transferCommon,
  })
  .strict();

export const directoryUploadStep = z
  .object({
    type: z.literal('directory_upload'),
    workersrc: renderable,
    ...upload,
    blocksize: blocksize(16 * 1024),
    compress,
    ...transferCommon,
  })
  .strict();

export const multipleFileUploadStep = z
  .object({
    type: z.literal('multiple_file_upload'),
    workersrcs: z.union([renderable, z.array(renderable)]),
    ...upload,
    blocksize: blocksize(16 * 1024),
    // Each of workersrcs a shell pattern, expanded on the worker (Buildbot's glob).
    glob: z.boolean().default(false),
    mode,
    compress,
    keepstamp: z.boolean().default(false),
    ...transferCommon,
  })
  .strict();

export const fileDownloadStep = z
  .object({
    type: z.literal('file_download'),
    mastersrc: renderable.optional(),
    // An artifact of this build by name (what an earlier upload's masterdest said).
    artifact: renderable.optional(),
    workerdest: renderable,
    maxsize,
    blocksize: blocksize(16 * 1024),
    mode,
    ...transferCommon,
  })
  .strict();

export const stringDownloadStep = z
  .object({
    type: z.literal('string_download'),
    s: renderable,
    workerdest: renderable,
    maxsize,
    blocksize: blocksize(16 * 1024),
    mode,
    ...transferCommon,
  })
  .strict();

/** What the schema of one key cannot say: a download names exactly one source. */
export function fileDownloadProblems(s: z.infer<typeof fileDownloadStep>): string[] {
  return (s.mastersrc === undefined) === (s.artifact === undefined)
    ? ['mastersrc: expected exactly one of mastersrc, artifact']
    : [];
}
