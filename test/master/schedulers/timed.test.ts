// The timed schedulers: periodic builds on start and then every period; nightly builds at
// its cron times, with only_if_changed skipping a time with no important change; a master
// that takes a timed scheduler over goes on from the last build time its owner recorded.
// Each runs on a clock that stands still until the test moves it (lib.ts frozenClock), so a
// build happens when the test says and at no other time, however slow the machine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireMasters, getChangeClassifications, transact } from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { eventually } from '../../helpers/wait.js';
import {
  buildsetsOf,
  type Cluster,
  configWith,
  frozenClock,
  openCluster,
  schedulerState,
  uniq,
} from './lib.js';

let c: Cluster;
beforeAll(async () => {
  c = await openCluster();
});
afterAll(async () => {
  await c?.close();
});

/** The scheduler's build sets once there are `n`. */
const sets = (name: string, n: number) =>
  eventually(
    () => buildsetsOf(c.h, name),
    (s) => s.length >= n,
  );

/** Its last build time (object_state last_build), once it is `at`. */
const lastBuild = (name: string, className: string, at: number) =>
  eventually(
    () => schedulerState(c.h, name, className, 'last_build'),
    (v) => v === at,
  );

describe('periodic', () => {
  it('builds on start, then every period', async () => {
    const name = uniq('every-minute');
    const t = frozenClock();
    const start = t.now();
    const { manager } = await c.manager(
      configWith(`
  - { type: periodic, name: ${name}, period: 60, builders: [b1, b2], priority: 3, properties: { kind: timed } }`),
      { clock: t.clock },
    );
    expect(await sets(name, 1)).toHaveLength(1);
    expect(await lastBuild(name, 'Periodic', start)).toBe(start);
    for (const n of [2, 3, 4]) {
      t.skip(60);
      expect(await sets(name, n)).toHaveLength(n);
      expect(await lastBuild(name, 'Periodic', start + 60 * (n - 1))).toBe(start + 60 * (n - 1));
    }
    await manager.stop();
    // Stopped: it no longer runs (its timer went with it).
    expect(manager.ownedNames().schedulers).toEqual([]);
    const all = await buildsetsOf(c.h, name);
    expect(all).toHaveLength(4);
    const [bs] = all;
    expect(bs!.reason).toBe(`The Periodic scheduler named '${name}' triggered this build`);
    expect(bs!.stamps).toEqual([{ branch: null, revision: null, repository: '', codebase: '' }]);
    expect(bs!.properties).toEqual({ kind: ['timed', 'Scheduler'], scheduler: [name, 'Scheduler'] });
    expect(bs!.requests.map((r) => r.priority)).toEqual([3, 3]);
  });

  it('a master that takes it over goes on from the last build, not from scratch', async () => {
    const name = uniq('every-3s');
    const t = frozenClock();
    const start = t.now();
    const config = configWith(`  - { type: periodic, name: ${name}, period: 3, builders: [b1] }`);
    const first = await c.manager(config, { clock: t.clock });
    await sets(name, 1);
    await first.manager.stop();
    t.skip(1);
    const second = await c.manager(config, { clock: t.clock });
    expect(second.manager.ownedNames().schedulers).toEqual([name]);
    // The next build is due 3 s after the first: had it started from scratch, it would have
    // built at once (a last build at start + 1) and not again before start + 4.
    t.skip(2);
    expect(await sets(name, 2)).toHaveLength(2);
    expect(await lastBuild(name, 'Periodic', start + 3)).toBe(start + 3);
  });
});

describe('nightly', () => {
  it('builds at the cron times', async () => {
    const name = uniq('each-minute');
    const t = frozenClock(0.5);
    const minute = t.now() + 0.5;
    await c.manager(configWith(`  - { type: nightly, name: ${name}, cron: "* * * * *", builders: [b2] }`), {
      clock: t.clock,
    });
    t.skip(0.5);
    const first = await sets(name, 1);
    expect(first).toHaveLength(1);
    expect(first[0]!.reason).toBe(`The Nightly scheduler named '${name}' triggered this build`);
    // Built at the minute, not before it.
    expect(await lastBuild(name, 'Nightly', minute)).toBe(minute);
    t.skip(60);
    expect(await sets(name, 2)).toHaveLength(2);
    expect(await lastBuild(name, 'Nightly', minute + 60)).toBe(minute + 60);
  });

  it('only_if_changed: the first time builds, then only after an important change', async () => {
    const name = uniq('if-changed');
    const branch = uniq('main');
    const t = frozenClock(0.5);
    const minute = t.now() + 0.5;
    await c.manager(
      configWith(`
  - type: nightly
    name: ${name}
    cron: "* * * * *"
    branch: ${branch}
    only_if_changed: true
    file_pattern: "^src/"
    builders: [b1]`),
      { clock: t.clock },
    );
    const schedulerid = (await c.h.db.pool.query(sql`SELECT id FROM schedulers WHERE name = ${name}`))[0]!.id;
    const classified = () => c.h.run((tx) => getChangeClassifications(tx, schedulerid));
    // First time: it builds whatever there is.
    t.skip(0.5);
    await sets(name, 1);
    // No change: the next time passes (its last build time moves on) and makes no build set.
    t.skip(60);
    await lastBuild(name, 'Nightly', minute + 60);
    expect(await buildsetsOf(c.h, name)).toHaveLength(1);
    // A change of another branch, then an unimportant one: weighed in that order, so once the
    // second is classified the first was ignored. Still nothing at the next time.
    await c.change({ branch: uniq('other'), revision: 'o1', files: ['src/a.c'] });
    const doc = await c.change({ branch, revision: 'doc', files: ['docs/a.md'] });
    expect([...(await eventually(classified, (m) => m.size === 1))]).toEqual([[doc, false]]);
    t.skip(60);
    await lastBuild(name, 'Nightly', minute + 120);
    expect(await buildsetsOf(c.h, name)).toHaveLength(1);
    // An important change: built (with the unimportant one) at the next time.
    const code = await c.change({ branch, revision: 'code', files: ['src/a.c'] });
    expect([...(await eventually(classified, (m) => m.size === 2))]).toEqual([
      [doc, false],
      [code, true],
    ]);
    t.skip(60);
    const all = await sets(name, 2);
    expect(all).toHaveLength(2);
    expect(all[1]!.stamps).toEqual([{ branch, revision: 'code', repository: 'r', codebase: '' }]);
  });

  it('a time missed while its master was dead is built when another takes over', async () => {
    const name = uniq('missed');
    const t = frozenClock(0.5);
    const minute = t.now() + 0.5;
    const config = configWith(`  - { type: nightly, name: ${name}, cron: "* * * * *", builders: [b1] }`);
    const first = await c.manager(config, { clock: t.clock });
    t.skip(0.5);
    await sets(name, 1);
    await first.manager.stop({ release: false });
    // Two minutes pass with nobody running it: the times at minute + 60 and + 120 are missed.
    t.skip(150);
    const second = await c.manager(config, { clock: t.clock });
    await c.h.db.pool.query(sql`UPDATE masters SET last_active = 0 WHERE id = ${first.masterid}`);
    await transact(c.h.ctx, (tx) => expireMasters(tx, 600, second.masterid));
    // One build for the missed times, made now, not one each.
    await lastBuild(name, 'Nightly', minute + 150);
    expect(await buildsetsOf(c.h, name)).toHaveLength(2);
  });
});
