// The dependent scheduler (Buildbot's Dependent): a build set of its upstream scheduler that
// completes SUCCESS or WARNINGS gets one build set of its builders on the same source stamps
// (reason `downstream`); a failed one gets none; either way the subscription, kept where
// Buildbot keeps it (object_state `upstream_bsids` of its 'Dependent' object), is dropped.
// A build set that completes while no master runs the scheduler is built when one takes it.
// On the real master harness: real PostgreSQL, the real event bus, real SchedulerManagers.
import { expect, it } from 'vitest';
import { parseMasterConfig } from '../../../services/core/config/master-config.js';
import {
  addBuildset,
  claimBuildRequests,
  completeBuildRequests,
  findBuilderId,
} from '../../../services/core/data/index.js';
import { Results } from '../../../services/core/results.js';
import { eventually } from '../../helpers/wait.js';
import { buildsetsOf, clusterPerFile, configWith, schedulerState, uniq } from './lib.js';

const cluster = clusterPerFile();

function dependentConfig(up: string, down: string) {
  return configWith(`
  - { type: triggerable, name: ${up}, builders: [b1] }
  - { type: dependent, name: ${down}, upstream: ${up}, builders: [b2], properties: { stage: two } }`);
}

/** An upstream build set (as the upstream scheduler adds it: its name in the `new` event). */
async function upstreamBuildset(up: string, revision: string) {
  return cluster().h.run(async (tx) =>
    addBuildset(tx, {
      scheduler: up,
      sourcestamps: [{ codebase: '', repository: 'r', branch: 'main', revision, project: 'p' }],
      reason: 'upstream',
      properties: { scheduler: [up, 'Scheduler'] },
      builderids: [(await findBuilderId(tx, 'b1'))!],
    }),
  );
}

/** Its build request claimed by `masterid` and completed with `results`. */
async function finish(brids: Record<number, number>, masterid: number, results: number) {
  const ids = Object.values(brids);
  await cluster().h.run(async (tx) => {
    expect(await claimBuildRequests(tx, ids, masterid)).toBe(true);
    expect(await completeBuildRequests(tx, ids, results, masterid)).toBe(true);
  });
}

const subscriptions = (down: string) => schedulerState(cluster().h, down, 'Dependent', 'upstream_bsids');

it('builds the stamps of an upstream build set that succeeded or warned, and not of one that failed', async () => {
  const up = uniq('up');
  const down = uniq('down');
  const { masterid } = await cluster().manager(dependentConfig(up, down));
  const ok = await upstreamBuildset(up, 'ok1');
  const warned = await upstreamBuildset(up, 'warn1');
  const failed = await upstreamBuildset(up, 'fail1');
  // Another scheduler's build set is not subscribed to.
  const other = await cluster().h.run(async (tx) =>
    addBuildset(tx, {
      scheduler: 'someone-else',
      sourcestamps: [{ codebase: '', repository: 'r', branch: 'main', revision: 'x1', project: 'p' }],
      reason: 'other',
      builderids: [(await findBuilderId(tx, 'b1'))!],
    }),
  );
  await eventually(
    () => subscriptions(down),
    (s) => Array.isArray(s) && s.length === 3,
  );
  expect(await subscriptions(down)).toEqual([ok.bsid, warned.bsid, failed.bsid]);

  await finish(failed.brids, masterid, Results.FAILURE);
  await finish(other.brids, masterid, Results.SUCCESS);
  await finish(ok.brids, masterid, Results.SUCCESS);
  await finish(warned.brids, masterid, Results.WARNINGS);
  const sets = await eventually(
    () => buildsetsOf(cluster().h, down),
    (s) => s.length === 2,
  );
  expect(
    await eventually(
      () => subscriptions(down),
      (s) => Array.isArray(s) && s.length === 0,
    ),
  ).toEqual([]);
  expect(sets.map((s) => s.stamps.map((ss) => ss.revision))).toEqual([['ok1'], ['warn1']]);
  expect(sets[0]!.reason).toBe('downstream');
  expect(sets[0]!.properties).toMatchObject({ scheduler: [down, 'Scheduler'], stage: ['two', 'Scheduler'] });
  const b2 = await cluster().h.run(async (tx) => findBuilderId(tx, 'b2'));
  expect(sets[0]!.requests.map((r) => r.builderid)).toEqual([b2]);
  // Still two: the failed and the foreign build sets gave none.
  expect(await buildsetsOf(cluster().h, down)).toHaveLength(2);
});

it('builds an upstream build set that completed while no master ran it, once one takes it', async () => {
  const up = uniq('up');
  const down = uniq('down');
  const first = await cluster().manager(dependentConfig(up, down));
  const ok = await upstreamBuildset(up, 'while-away');
  await eventually(
    () => subscriptions(down),
    (s) => Array.isArray(s) && s.length === 1,
  );
  await first.manager.stop();
  await finish(ok.brids, first.masterid, Results.SUCCESS);
  expect(await buildsetsOf(cluster().h, down)).toEqual([]);

  const second = await cluster().manager(dependentConfig(up, down));
  const sets = await eventually(
    () => buildsetsOf(cluster().h, down),
    (s) => s.length === 1,
  );
  expect(sets[0]!.stamps.map((s) => s.revision)).toEqual(['while-away']);
  expect(second.manager.ownedNames().schedulers).toContain(down);
  expect(await subscriptions(down)).toEqual([]);
});

it('refuses at load a dependent scheduler whose upstream is not another scheduler', () => {
  const load = (upstream: string) => () =>
    parseMasterConfig(`
workers: [{ name: w1, password: p }]
builders: [{ name: b1, workers: [w1] }]
force_schedulers: [{ name: force, builders: [b1] }]
schedulers:
  - { type: dependent, name: down, upstream: ${upstream}, builderNames: [b1] }`);
  expect(load('nowhere')).toThrow(/schedulers\[0\]\.upstream: no other scheduler named "nowhere"/);
  expect(load('down')).toThrow(/schedulers\[0\]\.upstream: no other scheduler named "down"/);
  // A force scheduler is a scheduler, as in Buildbot; Buildbot's builderNames is taken.
  expect(load('force')().schedulers[0]).toMatchObject({
    type: 'dependent',
    upstream: 'force',
    builders: ['b1'],
  });
});
