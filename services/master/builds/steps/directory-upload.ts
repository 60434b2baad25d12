// A directory_upload step (Buildbot's DirectoryUpload): a directory of the worker, as a tar
// archive (gzipped or bzipped with `compress`), becomes an artifact of the build named
// masterdest (transfer.ts). Buildbot unpacks the archive into a directory of its master; an
// artifact is served whole, so the archive is kept as it came, and downloads as one file.
import type { StepConfig } from '../../../core/config/master-config.js';
import { singleUpload } from './transfer.js';

export const directoryUpload = singleUpload<Extract<StepConfig, { type: 'directory_upload' }>>('directory');
