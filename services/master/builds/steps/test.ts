// A test step (Buildbot's Test): `make test` with its warnings counted (warning-counting.ts);
// "testing" while it runs, then "test", "test (failure)".
import type { StepConfig } from '../../../core/config/master-config.js';
import { warningCounting } from './warning-counting.js';

export const test = warningCounting<Extract<StepConfig, { type: 'test' }>>('test');
