// Which changes a scheduler looks at, and which of those are important (Buildbot's
// BaseScheduler._changeCallback with its change_filter, codebases, fileIsImportant and
// onlyImportant):
// - a change passes if its branch is the scheduler's (when it names one; null is the default
//   branch), each field of change_filter matches, and its codebase is one the scheduler builds;
// - with file_pattern, it is important if one of its files matches the pattern (a change that
//   names no file is important: there is nothing to judge it by); without, always;
// - with only_important, an unimportant change is dropped; otherwise it is kept, unimportant.
import type { SchedulerConfig } from '../../core/config/master-config.js';
import type { ChangeFacts } from '../../core/data/index.js';
import { codebasesOf } from './buildset.js';

export type Verdict = 'ignore' | 'important' | 'unimportant';

type Watching = Extract<SchedulerConfig, { type: 'single-branch' | 'nightly' }>;

const oneOf = (wanted: string | readonly string[] | undefined, actual: string | null) =>
  wanted === undefined || (typeof wanted === 'string' ? wanted === actual : wanted.includes(actual ?? ''));

export function changeVerdict(s: Watching): (c: ChangeFacts) => Verdict {
  const codebases = new Set(Object.keys(codebasesOf(s)));
  const pattern = s.file_pattern === undefined ? null : new RegExp(s.file_pattern);
  const f = s.change_filter ?? {};
  return (c) => {
    if (s.branch !== undefined && c.branch !== s.branch) return 'ignore';
    if (!oneOf(f.repository, c.repository) || !oneOf(f.project, c.project)) return 'ignore';
    if (f.category !== undefined && (c.category === null || !oneOf(f.category, c.category))) return 'ignore';
    if (!codebases.has(c.codebase)) return 'ignore';
    const important = pattern === null || c.files.length === 0 || c.files.some((file) => pattern.test(file));
    if (important) return 'important';
    return s.only_important ? 'ignore' : 'unimportant';
  };
}
