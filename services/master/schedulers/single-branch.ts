// The single-branch scheduler (Buildbot's SingleBranchScheduler): the changes of one branch,
// or of whatever its change_filter lets through, with one tree-stable timer for all of them
// (basic.ts holds the rules both basic schedulers share).
import type { SchedulerConfig } from '../../core/config/master-config.js';
import { BasicScheduler } from './basic.js';

/** The class name its state object has, in Buildbot's objects table as in ours. */
export const STATE_CLASS = 'SingleBranchScheduler';

export class SingleBranchScheduler extends BasicScheduler<
  Extract<SchedulerConfig, { type: 'single-branch' }>
> {
  protected readonly stateClass = STATE_CLASS;

  protected timerOf() {
    return { key: 'only', filter: {} };
  }
}
