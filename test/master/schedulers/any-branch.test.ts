// The any-branch scheduler (Buildbot's AnyBranchScheduler): each branch its change_filter lets
// through has a tree-stable timer of its own, so each build set holds one branch's changes,
// stamped with that branch's newest; a quiet branch builds when its own timer says, keeping
// its classified changes while another branch's timer fires; branches the filter refuses are
// ignored. On the real master harness, with a clock that moves only when the test says.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getChangeClassifications } from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { eventually } from '../../helpers/wait.js';
import { buildsetsOf, type Cluster, configWith, frozenClock, openCluster, uniq } from './lib.js';

let c: Cluster;
beforeAll(async () => {
  c = await openCluster();
});
afterAll(async () => {
  await c?.close();
});

const classifiedIds = async (name: string) => {
  const [row] = await c.h.db.pool.query(sql`SELECT id FROM schedulers WHERE name = ${name}`);
  return [...(await c.h.run((tx) => getChangeClassifications(tx, row!.id as number))).keys()];
};

it('builds each branch on its own timer, with that branch changes only', async () => {
  const name = uniq('any');
  const prefix = uniq('rel');
  const t = frozenClock();
  await c.manager(
    configWith(`
  - type: any-branch
    name: ${name}
    tree_stable_timer: 1
    change_filter: { branch_re: "${prefix}/" }
    builders: [b1]`),
    { clock: t.clock },
  );
  const a = `${prefix}/a`;
  const b = `${prefix}/b`;
  const b1 = await c.change({ branch: b, revision: 'b1' });
  await c.change({ branch: `x${prefix}/c`, revision: 'c1' }); // refused: the expression matches at the start only
  await eventually(
    () => classifiedIds(name),
    (ids) => ids.length === 1,
  );
  t.skip(0.5);
  const a1 = await c.change({ branch: a, revision: 'a1' });
  await eventually(
    () => classifiedIds(name),
    (ids) => ids.length === 2,
  );
  t.skip(0.4);
  // b's second change restarts b's timer only.
  const b2 = await c.change({ branch: b, revision: 'b2' });
  expect(
    await eventually(
      () => classifiedIds(name),
      (ids) => ids.length === 3,
    ),
  ).toEqual([b1, a1, b2]);

  // a's timer fires (a second after a1), b's does not yet. b1 is older than a1 and stays
  // classified (Buildbot would flush it here: docs/compatibility.md).
  t.skip(0.7);
  const first = await eventually(
    () => buildsetsOf(c.h, name),
    (s) => s.length > 0,
  );
  expect(first.map((s) => s.stamps)).toEqual([
    [{ branch: a, revision: 'a1', repository: 'r', codebase: '' }],
  ]);
  expect(first[0]!.reason).toBe(`The AnyBranchScheduler scheduler named '${name}' triggered this build`);
  expect(
    await eventually(
      () => classifiedIds(name),
      (ids) => ids.length === 2,
    ),
  ).toEqual([b1, b2]);

  t.skip(0.5);
  const sets = await eventually(
    () => buildsetsOf(c.h, name),
    (s) => s.length === 2,
  );
  expect(sets[1]!.stamps).toEqual([{ branch: b, revision: 'b2', repository: 'r', codebase: '' }]);
  const built = await c.h.db.pool.query(sql`
    SELECT c.changeid FROM buildset_sourcestamps bss JOIN changes c ON c.sourcestampid = bss.sourcestampid
    WHERE bss.buildsetid = ${sets[1]!.bsid}`);
  expect(built.map((r) => r.changeid)).toEqual([b2]);
  expect(await classifiedIds(name)).toEqual([]);
});

it('without a timer, a build set per change of any branch the filter lets through', async () => {
  const name = uniq('anynow');
  await c.manager(
    configWith(`
  - { type: any-branch, name: ${name}, change_filter: { branch_not_eq: [wip, null] }, builders: [b1] }`),
  );
  await c.change({ branch: uniq('one'), revision: 'o1' });
  await c.change({ branch: 'wip', revision: 'w1' });
  await c.change({ branch: null, revision: 'd1' });
  await c.change({ branch: uniq('two'), revision: 't1' });
  const sets = await eventually(
    () => buildsetsOf(c.h, name),
    (s) => s.some((x) => x.stamps[0]!.revision === 't1'),
  );
  expect(sets.map((s) => s.stamps[0]!.revision)).toEqual(['o1', 't1']);
});
