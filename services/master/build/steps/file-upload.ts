// A file_upload step (Buildbot's FileUpload): a file of the worker, under the step's workdir,
// becomes an artifact of the build named masterdest, linked from the step (transfer.ts).
// Past maxsize the upload fails (the worker stops sending), and nothing is kept.
import type { StepConfig } from '../../../core/config/master-config.js';
import { singleUpload } from './transfer.js';

export const fileUpload = singleUpload<Extract<StepConfig, { type: 'file_upload' }>>('file');
