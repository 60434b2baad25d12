// Which changes a scheduler looks at, and which of those are important (Buildbot's
// BaseScheduler._changeCallback with its change_filter, codebases, fileIsImportant and
// onlyImportant):
// - a change passes if its branch is the scheduler's (when it names one; null is the default
//   branch), it passes change_filter (change-filter.ts), and its codebase is one the
//   scheduler builds;
// - with file_pattern, it is important if one of its files matches the pattern (a change that
//   names no file is important: there is nothing to judge it by); without, always;
// - with only_important, an unimportant change is dropped; otherwise it is kept, unimportant.
import type { SchedulerConfig } from '../../core/config/master-config.js';
import type { ChangeFacts } from '../../core/data/index.js';
import { codebasesOf } from './buildset.js';
import { compileChangeFilter } from './change-filter.js';

export type Verdict = 'ignore' | 'important' | 'unimportant';

type Watching = Extract<SchedulerConfig, { type: 'single-branch' | 'any-branch' | 'nightly' }>;

/**
 * The branch a scheduler's own `branch` key restricts it to (undefined: none). A single-branch
 * scheduler with neither `branch` nor change_filter builds the default branch; Buildbot
 * requires one of the two, and this default keeps what such a YAML always meant.
 */
function schedulerBranch(s: Watching): string | null | undefined {
  if (s.type === 'any-branch') return undefined;
  if (s.type === 'single-branch' && s.branch === undefined && s.change_filter === undefined) return null;
  return s.branch;
}

export function changeVerdict(s: Watching): (c: ChangeFacts) => Verdict {
  const codebases = new Set(Object.keys(codebasesOf(s)));
  const pattern = s.file_pattern === undefined ? null : new RegExp(s.file_pattern);
  const branch = schedulerBranch(s);
  const passes = compileChangeFilter(s.change_filter);
  return (c) => {
    if (branch !== undefined && c.branch !== branch) return 'ignore';
    if (!passes(c)) return 'ignore';
    if (!codebases.has(c.codebase)) return 'ignore';
    const important = pattern === null || c.files.length === 0 || c.files.some((file) => pattern.test(file));
    if (important) return 'important';
    return s.only_important ? 'ignore' : 'unimportant';
  };
}
