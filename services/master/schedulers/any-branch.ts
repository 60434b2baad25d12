// The any-branch scheduler (Buildbot's AnyBranchScheduler): the changes of every branch its
// change_filter lets through, with a tree-stable timer per (codebase, project, repository,
// branch), Buildbot's timer name, so that each build set holds one branch's changes and a
// busy branch does not hold back a quiet one (basic.ts holds the shared rules).
import type { SchedulerConfig } from '../../core/config/master-config.js';
import type { ChangeFacts } from '../../core/data/index.js';
import { BasicScheduler } from './basic.js';

/** The class name its state object has, in Buildbot's objects table as in ours. */
export const ANY_BRANCH_CLASS = 'AnyBranchScheduler';

export class AnyBranchScheduler extends BasicScheduler<Extract<SchedulerConfig, { type: 'any-branch' }>> {
  protected readonly stateClass = ANY_BRANCH_CLASS;

  protected timerOf(c: ChangeFacts) {
    const { codebase, project, repository, branch } = c;
    return {
      key: JSON.stringify([codebase, project, repository, branch]),
      filter: { codebase, project, repository, branch },
    };
  }
}
