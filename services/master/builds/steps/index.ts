// The step kinds, by the `type` of their configuration: one line each. The type makes the
// list complete: a kind the configuration schema knows and this list lacks does not compile.
import type { StepConfig } from '../../../core/config/master-config.js';
import { directoryUpload } from './directory-upload.js';
import { fileDownload } from './file-download.js';
import { fileUpload } from './file-upload.js';
import { git } from './git.js';
import { multipleFileUpload } from './multiple-file-upload.js';
import { setProperty } from './set-property.js';
import { shell } from './shell.js';
import type { StepKind } from './step.js';
import { stringDownload } from './string-download.js';
import { trigger } from './trigger.js';

type StepKinds = { [T in StepConfig['type']]: StepKind<Extract<StepConfig, { type: T }>> };

const KINDS: StepKinds = {
  shell,
  set_property: setProperty,
  trigger,
  git,
  file_upload: fileUpload,
  directory_upload: directoryUpload,
  multiple_file_upload: multipleFileUpload,
  file_download: fileDownload,
  string_download: stringDownload,
};

export function stepKind<C extends StepConfig>(step: C): StepKind<C> {
  return KINDS[step.type] as unknown as StepKind<C>;
}
