// A compile step (Buildbot's Compile): `make all` with its warnings counted
// (warning-counting.ts); "compiling" while it runs, then "compile", "compile (warnings)".
import type { StepConfig } from '../../../core/config/master-config.js';
import { warningCounting } from './warning-counting.js';

export const compile = warningCounting<Extract<StepConfig, { type: 'compile' }>>('compile');
