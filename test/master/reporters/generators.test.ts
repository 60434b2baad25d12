// Which builds a build_status generator reports, by mode (Buildbot's
// is_message_needed_by_results), and what its filters keep: pure logic, no servers.
import { describe, expect, it } from 'vitest';
import type { ReportMode } from '../../../services/core/config/master-config.js';
import { Results } from '../../../services/core/results.js';
import { createGenerator, neededByResults } from '../../../services/master/reporters/generators.js';
import type { BuildDict } from '../../../services/master/reporters/report.js';

function build(results: number | null, previous?: number | null, more: Partial<BuildDict> = {}): BuildDict {
  return {
    builderid: 1,
    buildid: 10,
    number: 2,
    complete: results !== null,
    results,
    state_string: 'finished',
    properties: { buildername: ['app', 'Builder'], branch: ['main', 'Build'] },
    builder: { builderid: 1, name: 'app', tags: ['web'] },
    buildset: { bsid: 1, sourcestamps: [] },
    buildrequest: {},
    url: 'http://flotilla.test/#/builders/1/builds/2',
    ...(previous !== undefined ? { prev_build: previous === null ? null : { results: previous } } : {}),
    ...more,
  };
}

const R = Results;

describe('build_status modes', () => {
  const cases: [ReportMode[], number, number | null, boolean][] = [
    [['failing'], R.FAILURE, R.SUCCESS, true],
    [['failing'], R.SUCCESS, R.FAILURE, false],
    [['passing'], R.SUCCESS, null, true],
    [['warnings'], R.WARNINGS, null, true],
    [['exception'], R.EXCEPTION, null, true],
    [['cancelled'], R.CANCELLED, null, true],
    [['cancelled'], R.EXCEPTION, null, false],
    // problem: a failure after anything but a failure.
    [['problem'], R.FAILURE, R.SUCCESS, true],
    [['problem'], R.FAILURE, R.FAILURE, false],
    [['problem'], R.SUCCESS, R.FAILURE, false],
    // change: any result that differs from the previous build's; none when there is none.
    [['change'], R.SUCCESS, R.FAILURE, true],
    [['change'], R.FAILURE, R.SUCCESS, true],
    [['change'], R.SUCCESS, R.SUCCESS, false],
    [['change'], R.SUCCESS, null, false],
  ];
  it.each(cases)('%j: results %i after %s -> %s', (mode, results, previous, wanted) => {
    expect(neededByResults(mode, build(results, previous))).toBe(wanted);
  });

  it('reports per mode, with filters on builders, tags and branches', () => {
    const settings = { title: 'T', buildbotURL: 'http://flotilla.test/', users: ['alice'] };
    const gen = (extra: object) =>
      createGenerator({
        type: 'build_status',
        mode: ['failing'],
        report_new: false,
        add_patch: false,
        message_formatter: { type: 'renderable', template: '%(prop:buildername)s failed' },
        ...extra,
      });
    const failed = build(R.FAILURE, R.SUCCESS);
    expect(gen({}).generate('build-finished', failed, settings)).toMatchObject({
      body: 'app failed',
      results: R.FAILURE,
      users: ['alice'],
    });
    expect(gen({}).generate('build-finished', build(R.SUCCESS), settings)).toBeNull();
    expect(gen({ builders: ['other'] }).generate('build-finished', failed, settings)).toBeNull();
    expect(gen({ tags: ['web'] }).generate('build-finished', failed, settings)).not.toBeNull();
    expect(gen({ branches: ['release'] }).generate('build-finished', failed, settings)).toBeNull();
    // Only a build's end, unless report_new asks for its start too.
    expect(gen({}).wants('build-new')).toBe(false);
    expect(gen({ report_new: true }).wants('build-new')).toBe(true);
  });
});
