// The `services` section (Buildbot's c['services'] other than reporters): the old build
// canceller's configuration, and what its matching reads of a request's source stamps
// (services/master/old-build-canceller.ts; the cluster test is test/e2e/old-build-canceller.test.ts).
import { describe, expect, it } from 'vitest';
import { parseMasterConfig } from '../../services/core/config/master-config.js';
import type { UnfinishedStamp } from '../../services/core/data/index.js';
import { branchKey, supersededRequests } from '../../services/master/old-build-canceller.js';
import { problems } from './problems.js';

describe('services: old_build_canceller', () => {
  it("reads Buildbot's filters: builders and a source stamp filter", () => {
    const cfg = parseMasterConfig(`
services:
  - type: old_build_canceller
    name: canceller
    filters:
      - { builders: [a, b], branch_re: "feature/", repository: r }
      - { builders: c }
`);
    expect(cfg.services).toEqual([
      {
        type: 'old_build_canceller',
        name: 'canceller',
        filters: [{ builders: ['a', 'b'], branch_re: 'feature/', repository: 'r' }, { builders: 'c' }],
      },
    ]);
  });

  it('refuses a filter without builders, a category (not a source stamp field), and duplicate names', () => {
    expect(
      problems(`
services:
  - { type: old_build_canceller, name: x, filters: [{ branch: main }] }
  - { type: old_build_canceller, name: y, filters: [{ builders: [a], category: c }] }
`),
    ).toEqual([
      'services[0].filters[0].builders: expected a builder name or a list of builder names',
      'services[1].filters[0]: unknown key "category"',
    ]);
    expect(
      problems(`
services:
  - { type: old_build_canceller, name: x, filters: [{ builders: a }] }
  - { type: old_build_canceller, name: x, filters: [{ builders: a }] }
`),
    ).toEqual(['services[1].name: duplicate name "x"']);
  });
});

describe('which requests a change supersedes', () => {
  const stamp = (
    brid: number,
    builder: string,
    branch: string | null,
    more: Partial<UnfinishedStamp> = {},
  ) => ({
    brid,
    builder,
    project: '',
    codebase: '',
    repository: 'r',
    branch,
    ...more,
  });
  const change = { changeid: 9, project: '', codebase: '', repository: 'r', branch: 'main' };
  const onlyA = (s: UnfinishedStamp) => s.builder === 'a';

  it('those of filtered builders on the same line', () => {
    const stamps = [
      stamp(1, 'a', 'main'),
      stamp(2, 'b', 'main'),
      stamp(3, 'a', 'other'),
      stamp(4, 'a', 'main', { codebase: 'x' }),
    ];
    expect(supersededRequests(change, stamps, onlyA)).toEqual([1]);
  });

  it('none whose build set has a stamp on no branch, none for a change on no branch', () => {
    expect(
      supersededRequests(change, [stamp(1, 'a', 'main'), stamp(1, 'a', null, { codebase: 'y' })], onlyA),
    ).toEqual([]);
    expect(supersededRequests({ ...change, branch: null }, [stamp(1, 'a', 'main')], onlyA)).toEqual([]);
  });

  it("every patch set of one Gerrit review is one line, as Buildbot's default branch key", () => {
    expect(branchKey('refs/changes/12/3412/2')).toBe('refs/changes/12/3412');
    expect(branchKey('main')).toBe('main');
    const gerrit = { ...change, branch: 'refs/changes/12/3412/3' };
    expect(supersededRequests(gerrit, [stamp(5, 'a', 'refs/changes/12/3412/2')], onlyA)).toEqual([5]);
  });
});
