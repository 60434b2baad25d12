// A warning_counting_shell step (Buildbot's WarningCountingShellCommand): a shell command
// whose warnings are counted (warning-counting.ts). Buildbot gives it no name of its own.
import type { StepConfig } from '../../../core/config/master-config.js';
import { warningCounting } from './warning-counting.js';

export const warningCountingShell =
  warningCounting<Extract<StepConfig, { type: 'warning_counting_shell' }>>('generic');
