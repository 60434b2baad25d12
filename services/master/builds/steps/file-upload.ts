// A file_upload step (Buildbot's FileUpload): a file of the worker, under the step's workdir,
// becomes an artifact of the build named masterdest, linked from the step (transfer.ts).
// Past maxsize (or artifacts.default_maxsize) the master stops the upload and it fails,
// keeping nothing (upload-limit.ts).
import type { StepConfig } from '../../../core/config/master-config.js';
import { singleUpload } from './transfer.js';

export const fileUpload = singleUpload<Extract<StepConfig, { type: 'file_upload' }>>('file');
