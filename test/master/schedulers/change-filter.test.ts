// A scheduler's change_filter by Buildbot's ChangeFilter rules (buildbot/changes/filter.py,
// buildbot/util/ssfilter.py), with the cases Buildbot's manual gives: a project, a list of
// branches, the default branch (None), `branch_re`, `repository_re`, `*_not_eq`, `*_not_re`,
// a codebase; a null field against each kind of test; every key must hold. Pure logic.
import { describe, expect, it } from 'vitest';
import { changeFilter } from '../../../services/core/config/master-config/change-filter.js';
import { parseMasterConfig } from '../../../services/core/config/master-config.js';
import {
  compileChangeFilter,
  type FilteredFields,
} from '../../../services/master/schedulers/change-filter.js';

const change = (c: Partial<FilteredFields> = {}): FilteredFields => ({
  project: '',
  repository: '',
  branch: null,
  category: null,
  codebase: '',
  ...c,
});

const passes = (filter: unknown, c: Partial<FilteredFields>) =>
  compileChangeFilter(changeFilter.parse(filter))(change(c));

describe('exact values', () => {
  it('project: the one value (the manual: ChangeFilter(project="myproject"))', () => {
    expect(passes({ project: 'myproject' }, { project: 'myproject' })).toBe(true);
    expect(passes({ project: 'myproject' }, { project: 'other' })).toBe(false);
  });

  it('branch: a list of branches (ChangeFilter(branch=["main", "release"]))', () => {
    const f = { branch: ['main', 'release'] };
    expect(passes(f, { branch: 'main' })).toBe(true);
    expect(passes(f, { branch: 'release' })).toBe(true);
    expect(passes(f, { branch: 'feature' })).toBe(false);
    expect(passes(f, { branch: null })).toBe(false);
  });

  it('branch: null is the default branch, and may sit in a list', () => {
    expect(passes({ branch: null }, { branch: null })).toBe(true);
    expect(passes({ branch: null }, { branch: 'main' })).toBe(false);
    expect(passes({ branch: [null, 'main'] }, { branch: null })).toBe(true);
  });

  it('no filter, or an empty one, passes everything', () => {
    expect(compileChangeFilter(undefined)(change({ branch: 'x' }))).toBe(true);
    expect(passes({}, { branch: 'x', category: 'c' })).toBe(true);
  });

  it('category: a change without one matches no value', () => {
    expect(passes({ category: 'release' }, { category: null })).toBe(false);
    expect(passes({ category: ['a', 'release'] }, { category: 'release' })).toBe(true);
  });

  it('codebase (the manual: ChangeFilter(codebase="mainline"))', () => {
    expect(passes({ codebase: 'mainline' }, { codebase: 'mainline' })).toBe(true);
    expect(passes({ codebase: 'mainline' }, { codebase: '' })).toBe(false);
  });
});

describe('_not_eq', () => {
  it('any value but those', () => {
    expect(passes({ branch_not_eq: ['wip', 'tmp'] }, { branch: 'main' })).toBe(true);
    expect(passes({ branch_not_eq: ['wip', 'tmp'] }, { branch: 'tmp' })).toBe(false);
    expect(passes({ project_not_eq: 'sandbox' }, { project: 'sandbox' })).toBe(false);
  });

  it('a null field passes a string list, and a null in the list excludes the default branch', () => {
    expect(passes({ category_not_eq: 'docs' }, { category: null })).toBe(true);
    expect(passes({ branch_not_eq: null }, { branch: null })).toBe(false);
    expect(passes({ branch_not_eq: null }, { branch: 'main' })).toBe(true);
  });
});

describe('_re and _not_re', () => {
  it('matches at the start of the value, not necessarily to its end (re.match)', () => {
    const f = { branch_re: 'release-' };
    expect(passes(f, { branch: 'release-1.0' })).toBe(true);
    expect(passes(f, { branch: 'old-release-1.0' })).toBe(false);
    expect(passes({ branch_re: 'release-\\d+$' }, { branch: 'release-10' })).toBe(true);
    expect(passes({ branch_re: 'release-\\d+$' }, { branch: 'release-10x' })).toBe(false);
  });

  it('the manual: ChangeFilter(repository_re=r".*github\\.com/.*"), and project_re', () => {
    expect(passes({ repository_re: '.*github\\.com/.*' }, { repository: 'https://github.com/o/r' })).toBe(
      true,
    );
    expect(passes({ repository_re: '.*github\\.com/.*' }, { repository: 'https://gitlab.com/o/r' })).toBe(
      false,
    );
    expect(passes({ project_re: '^baseproduct/.*' }, { project: 'baseproduct/ui' })).toBe(true);
  });

  it('one expression of a list is enough', () => {
    const f = { branch_re: ['release/', 'hotfix/'] };
    expect(passes(f, { branch: 'hotfix/1' })).toBe(true);
    expect(passes(f, { branch: 'feature/1' })).toBe(false);
  });

  it('a null field matches no _re and passes every _not_re', () => {
    expect(passes({ branch_re: '.*' }, { branch: null })).toBe(false);
    expect(passes({ category_not_re: '.*' }, { category: null })).toBe(true);
  });

  it('_not_re: none may match at the start', () => {
    const f = { branch_not_re: ['dependabot/', 'wip'] };
    expect(passes(f, { branch: 'dependabot/npm' })).toBe(false);
    expect(passes(f, { branch: 'main' })).toBe(true);
    expect(passes(f, { branch: 'my-wip' })).toBe(true);
  });

  it("Python's named groups read as JavaScript's", () => {
    expect(passes({ branch_re: '(?P<v>\\d+)\\.(?P=v)' }, { branch: '1.1' })).toBe(true);
    expect(passes({ branch_re: '(?P<v>\\d+)\\.(?P=v)' }, { branch: '1.2' })).toBe(false);
  });

  it('the same expression gives the same answer each time (no state kept between values)', () => {
    const test = compileChangeFilter(changeFilter.parse({ branch_re: 'a' }));
    expect([
      test(change({ branch: 'ab' })),
      test(change({ branch: 'ab' })),
      test(change({ branch: 'ba' })),
    ]).toEqual([true, true, false]);
  });
});

it('every key given must hold', () => {
  const f = { project: 'p', branch_re: 'release-', category_not_eq: 'docs' };
  expect(passes(f, { project: 'p', branch: 'release-1', category: 'code' })).toBe(true);
  expect(passes(f, { project: 'q', branch: 'release-1', category: 'code' })).toBe(false);
  expect(passes(f, { project: 'p', branch: 'main', category: 'code' })).toBe(false);
  expect(passes(f, { project: 'p', branch: 'release-1', category: 'docs' })).toBe(false);
});

describe('bad filters are refused with the path of the key', () => {
  const config = (filter: string, branch = '') =>
    parseMasterConfig(`
workers: [{ name: w1, password: p }]
builders: [{ name: b1, workers: [w1] }]
schedulers: [{ type: single-branch, name: s, builders: [b1], ${branch} change_filter: ${filter} }]`);

  it('an expression that does not compile', () => {
    expect(() => config('{ branch_re: "release-(" }')).toThrow(
      /schedulers\[0\]\.change_filter\.branch_re: expected a regular expression/,
    );
  });

  it('an unknown key (a Python callable has no form)', () => {
    expect(() => config('{ branch_fn: x }')).toThrow(/branch_fn/);
  });

  it('a branch both on the scheduler and in its filter', () => {
    expect(() => config('{ branch_re: "r" }', 'branch: main,')).toThrow(
      /schedulers\[0\]\.branch: .*not both/,
    );
  });

  it('a valid filter loads', () => {
    expect(config('{ branch: [main, null], repository_not_re: "x" }').schedulers[0]).toMatchObject({
      change_filter: { branch: ['main', null], repository_not_re: 'x' },
    });
  });
});
