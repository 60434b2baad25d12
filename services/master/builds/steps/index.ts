// The step kinds, by the `type` of their configuration: one line each. The type makes the
// list complete: a kind the configuration schema knows and this list lacks does not compile.
import type { StepConfig } from '../../../core/config/master-config.js';
import { compile } from './compile.js';
import { copyDirectory } from './copy-directory.js';
import { directoryUpload } from './directory-upload.js';
import { fileDownload } from './file-download.js';
import { fileUpload } from './file-upload.js';
import { git } from './git.js';
import { makeDirectory } from './make-directory.js';
import { masterShell } from './master-shell.js';
import { multipleFileUpload } from './multiple-file-upload.js';
import { removeDirectory } from './remove-directory.js';
import { setProperty } from './set-property.js';
import { setPropertyValue } from './set-property-value.js';
import { shell } from './shell.js';
import { shellSequence } from './shell-sequence.js';
import type { StepKind } from './step.js';
import { stringDownload } from './string-download.js';
import { test } from './test.js';
import { trigger } from './trigger.js';
import { warningCountingShell } from './warning-counting-shell.js';

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
  warning_counting_shell: warningCountingShell,
  compile,
  test,
  set_property_value: setPropertyValue,
  shell_sequence: shellSequence,
  remove_directory: removeDirectory,
  make_directory: makeDirectory,
  copy_directory: copyDirectory,
  master_shell: masterShell,
};

export function stepKind<C extends StepConfig>(step: C): StepKind<C> {
  return KINDS[step.type] as unknown as StepKind<C>;
}
