// The single-branch scheduler: the tree-stable timer coalesces changes into one build set
// stamped with the newest; other branches are ignored; file_pattern decides importance;
// without a timer each important change builds at once; a master that takes the scheduler
// over builds what its previous owner had classified and what came while nobody ran it.
// The tree-stable timer runs on a clock that stands still until the test moves it (lib.ts
// frozenClock): it fires when the test says, never because the machine is slow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addBuildset,
  expireMasters,
  findBuilderId,
  findSchedulerId,
  getChangeClassifications,
  masterActive,
  transact,
  trySetSchedulerMaster,
} from '../../../services/core/data/index.js';
import { getState, stateObjectId } from '../../../services/core/data/object-state.js';
import { sql } from '../../../services/core/db/pool.js';
import { SEEN_KEY } from '../../../services/master/schedulers/watch.js';
import { eventually } from '../../helpers/wait.js';
import { buildsetsOf, type Cluster, configWith, frozenClock, openCluster, uniq } from './lib.js';

let c: Cluster;
beforeAll(async () => {
  c = await openCluster();
});
afterAll(async () => {
  await c?.close();
});

const schedulerId = async (name: string) =>
  (await c.h.db.pool.query(sql`SELECT id FROM schedulers WHERE name = ${name}`))[0]!.id as number;

/** The scheduler's classified changes, once there are `n`. */
const classified = async (name: string, n: number) => {
  const id = await schedulerId(name);
  return eventually(
    async () => [...(await c.h.run((tx) => getChangeClassifications(tx, id)))],
    (m) => m.length === n,
  );
};

describe('with a tree-stable timer', () => {
  it('coalesces three quick changes into one build set with the newest revision', async () => {
    const name = uniq('stable');
    const branch = uniq('main');
    const t = frozenClock();
    await c.manager(
      configWith(`
  - type: single-branch
    name: ${name}
    branch: ${branch}
    tree_stable_timer: 1
    builders: [b1, b2]
    priority: 7
    properties: { color: blue }`),
      { clock: t.clock },
    );
    const ids: number[] = [];
    for (const rev of ['r1', 'r2', 'r3']) {
      ids.push(await c.change({ branch, revision: rev, properties: { from_change: rev } }));
      t.skip(0.2);
    }
    // Still within the timer: classified, not built.
    expect(await classified(name, 3)).toEqual(ids.map((id) => [id, true]));
    expect(await buildsetsOf(c.h, name)).toEqual([]);

    // A second after the last change, the tree is stable.
    t.skip(1);
    const sets = await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length > 0,
    );
    expect(sets).toHaveLength(1);
    const [bs] = sets;
    expect(bs!.reason).toBe(`The SingleBranchScheduler scheduler named '${name}' triggered this build`);
    expect(bs!.stamps).toEqual([{ branch, revision: 'r3', repository: 'r', codebase: '' }]);
    expect(bs!.properties).toEqual({
      color: ['blue', 'Scheduler'],
      scheduler: [name, 'Scheduler'],
      from_change: ['r3', 'Change'],
    });
    expect(bs!.requests.map((r) => r.priority)).toEqual([7, 7]);
    expect(bs!.requests).toHaveLength(2);
    // Built: the classifications are flushed.
    const after = await c.h.run(async (tx) => getChangeClassifications(tx, await schedulerId(name)));
    expect(after.size).toBe(0);
  });

  it('ignores a change on another branch, and unimportant ones ride along with important ones', async () => {
    const name = uniq('pattern');
    const branch = uniq('main');
    const t = frozenClock();
    await c.manager(
      configWith(`
  - { type: single-branch, name: ${name}, branch: ${branch}, tree_stable_timer: 1, file_pattern: "\\\\.c$", builders: [b1] }`),
      { clock: t.clock },
    );
    // Weighed in order: once the second is classified, the first (another branch) was ignored.
    await c.change({ branch: uniq('other'), revision: 'x1', files: ['a.c'] });
    const docs = await c.change({ branch, revision: 'd1', files: ['README'] });
    expect(await classified(name, 1)).toEqual([[docs, false]]);
    // Only an unimportant change: no timer, so time passing builds nothing (had it started
    // one, the build set below would be d1's).
    t.skip(2);

    const code = await c.change({ branch, revision: 'c1', files: ['src/main.c', 'README'] });
    await classified(name, 2);
    t.skip(1);
    const sets = await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length > 0,
    );
    expect(sets).toHaveLength(1);
    expect(sets[0]!.stamps[0]!.revision).toBe('c1');
    const changes = await c.h.db.pool.query(sql`
      SELECT c.changeid FROM buildset_sourcestamps bss JOIN changes c ON c.sourcestampid = bss.sourcestampid
      WHERE bss.buildsetid = ${sets[0]!.bsid}`);
    expect(changes.map((r) => r.changeid)).toEqual([code]);
  });
});

describe('without a timer', () => {
  it('adds a build set for each important change at once, none for an unimportant one', async () => {
    const name = uniq('now');
    const branch = uniq('main');
    await c.manager(
      configWith(`
  - { type: single-branch, name: ${name}, branch: ${branch}, file_pattern: "^src/", builders: [b1] }`),
    );
    await c.change({ branch, revision: 'n1', files: ['src/a.ts'] });
    await c.change({ branch, revision: 'n2', files: ['docs/x.md'] });
    await c.change({ branch, revision: 'n3', files: ['src/b.ts'] });
    // Weighed in order: once n3 is built, n2 was weighed (and not built).
    const sets = await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.some((x) => x.stamps[0]!.revision === 'n3'),
    );
    expect(sets.map((s) => s.stamps[0]!.revision)).toEqual(['n1', 'n3']);
    expect(sets[0]!.requests).toEqual([{ builderid: expect.any(Number), priority: 0 }]);
  });

  it('the default branch is null: a change with no branch', async () => {
    const name = uniq('default');
    await c.manager(configWith(`  - { type: single-branch, name: ${name}, builders: [b1] }`));
    await c.change({ branch: 'main', revision: 'm1' });
    await c.change({ revision: 'd1' });
    // Weighed in order: once d1 is built, m1 was weighed (and not built).
    const sets = await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length > 0,
    );
    expect(sets.map((s) => s.stamps[0])).toEqual([
      { branch: null, revision: 'd1', repository: 'r', codebase: '' },
    ]);
  });
});

describe('changing hands', () => {
  it('a master that takes the scheduler over builds what the old owner classified and what came meanwhile', async () => {
    const name = uniq('handover');
    const branch = uniq('main');
    const t = frozenClock();
    const config = configWith(`
  - { type: single-branch, name: ${name}, branch: ${branch}, tree_stable_timer: 1, builders: [b1] }`);
    const first = await c.manager(config, { clock: t.clock });
    await c.change({ branch, revision: 'h1' });
    await classified(name, 1);
    // The owner dies before its timer fires; a change comes while nobody runs the scheduler.
    await first.manager.stop({ release: false });
    await c.change({ branch, revision: 'h2' });
    t.skip(2);
    expect(await buildsetsOf(c.h, name)).toEqual([]);

    const second = await c.manager(config, { clock: t.clock });
    expect(second.manager.ownedNames().schedulers).toEqual([]);
    await c.h.db.pool.query(sql`UPDATE masters SET last_active = 0 WHERE id = ${first.masterid}`);
    await transact(c.h.ctx, (tx) => expireMasters(tx, 600, second.masterid));
    // It catches up on h2, classified beside h1, and times the tree from now.
    await eventually(
      async () => second.manager.ownedNames().schedulers,
      (s) => s.includes(name),
    );
    await classified(name, 2);
    t.skip(1);
    const sets = await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length > 0,
    );
    expect(sets).toHaveLength(1);
    expect(sets[0]!.stamps[0]!.revision).toBe('h2');
  });

  it('a tree-stable scheduler taking over from a Buildbot master builds nothing that master built', async () => {
    const name = uniq('mixed');
    const branch = uniq('main');
    const t = frozenClock();
    const config = configWith(`
  - { type: single-branch, name: ${name}, branch: ${branch}, tree_stable_timer: 1, builders: [b1] }`);
    const first = await c.manager(config, { clock: t.clock });
    await eventually(
      async () => first.manager.ownedNames().schedulers,
      (s) => s.includes(name),
    );
    await first.manager.stop();
    // A Buildbot master ran it meanwhile: it heard of k1 and k2 and, its tree stable, built
    // one build set of k2's stamp, its properties written as Buildbot writes JSON.
    await c.change({ branch, revision: 'k1' });
    const k2 = await c.change({ branch, revision: 'k2' });
    await transact(c.h.ctx, async (tx) => {
      const [{ sourcestampid }] = await tx.q.query(
        sql`SELECT sourcestampid FROM changes WHERE changeid = ${k2}`,
      );
      const { bsid } = await addBuildset(tx, {
        scheduler: name,
        sourcestamps: [sourcestampid],
        reason: `The SingleBranchScheduler scheduler named '${name}' triggered this build`,
        properties: { scheduler: [name, 'Scheduler'] },
        builderids: [(await findBuilderId(tx, 'b1'))!],
      });
      await tx.q.query(sql`UPDATE buildset_properties SET property_value = ${`["${name}", "Scheduler"]`}
                           WHERE buildsetid = ${bsid} AND property_name = 'scheduler'`);
    });

    const second = await c.manager(config, { clock: t.clock });
    await eventually(
      async () => second.manager.ownedNames().schedulers,
      (s) => s.includes(name),
    );
    // Weighed in order: once k3 is classified, k1 and k2 were weighed, and left alone.
    const k3 = await c.change({ branch, revision: 'k3' });
    expect(await classified(name, 1)).toEqual([[k3, true]]);
    t.skip(1);
    const sets = await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length > 1,
    );
    expect(sets.map((s) => s.stamps[0]!.revision)).toEqual(['k2', 'k3']);
  });

  it('a change that only a Flotilla master heard of, while a Buildbot master ran the scheduler for long, is built when Flotilla takes it over', async () => {
    const name = uniq('deaf');
    const branch = uniq('main');
    const t = frozenClock();
    const config = configWith(
      `  - { type: single-branch, name: ${name}, branch: ${branch}, builders: [b1] }`,
    );
    // A Buildbot master runs the scheduler: it hears nothing of the changes posted to us.
    const [sid, objectid] = await c.h.run(async (tx) => {
      const id = await findSchedulerId(tx, name);
      const buildbot = await masterActive(tx, uniq('buildbot'));
      expect(await trySetSchedulerMaster(tx, id, buildbot)).toBe(true);
      return [id, await stateObjectId(tx.q, name, 'SingleBranchScheduler')];
    });
    const record = () =>
      c.h.run((tx) => getState(tx.q, objectid, SEEN_KEY)) as Promise<{ at: number } | undefined>;
    const flotilla = await c.manager(config, { clock: t.clock, catchUpSeconds: 100 });
    await eventually(record, (r) => r !== undefined);
    await c.change({ branch, revision: 'heard-by-flotilla' });
    // Far longer than a record may age: only a record kept current is caught up from.
    t.skip(1000);
    const now = t.clock();
    await eventually(record, (r) => (r?.at ?? 0) >= now);
    expect(flotilla.manager.ownedNames().schedulers).toEqual([]);
    expect(await buildsetsOf(c.h, name)).toEqual([]);
    // The Buildbot master stops, handing the scheduler back.
    await c.h.run((tx) => trySetSchedulerMaster(tx, sid, null));
    const sets = await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length > 0,
    );
    expect(sets.map((s) => s.stamps[0]!.revision)).toEqual(['heard-by-flotilla']);
  });
});
