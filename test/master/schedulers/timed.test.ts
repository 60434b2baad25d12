// The timed schedulers: periodic builds on start and then every period; nightly builds at
// its cron times, with only_if_changed skipping a time with no important change; a master
// that takes a timed scheduler over goes on from the last build time its owner recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireMasters, transact } from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import { buildsetsOf, type Cluster, configWith, eventually, openCluster, sleep, uniq } from './lib.js';

let c: Cluster;
beforeAll(async () => {
  c = await openCluster();
});
afterAll(async () => {
  await c?.close();
});

describe('periodic', () => {
  it('builds on start, then every period', async () => {
    const name = uniq('every-second');
    const { manager } = await c.manager(
      configWith(`
  - { type: periodic, name: ${name}, period: 1, builders: [b1, b2], priority: 3, properties: { kind: timed } }`),
    );
    const count = async () => (await buildsetsOf(c.h, name)).length;
    await eventually(count, (n) => n === 1, 2_000);
    const started = Date.now();
    // The first at once, then at 1, 2 and 3 seconds: look half-way between.
    await sleep(started + 1_500 - Date.now());
    expect(await count()).toBe(2);
    await sleep(started + 2_500 - Date.now());
    expect(await count()).toBe(3);
    await sleep(started + 3_500 - Date.now());
    expect(await count()).toBe(4);
    await manager.stop();
    const [bs] = await buildsetsOf(c.h, name);
    expect(bs!.reason).toBe(`The Periodic scheduler named '${name}' triggered this build`);
    expect(bs!.stamps).toEqual([{ branch: null, revision: null, repository: '', codebase: '' }]);
    expect(bs!.properties).toEqual({ kind: ['timed', 'Scheduler'], scheduler: [name, 'Scheduler'] });
    expect(bs!.requests.map((r) => r.priority)).toEqual([3, 3]);
    await sleep(1_200);
    expect(await count()).toBe(4);
  });

  it('a master that takes it over goes on from the last build, not from scratch', async () => {
    const name = uniq('every-3s');
    const config = configWith(`  - { type: periodic, name: ${name}, period: 3, builders: [b1] }`);
    const first = await c.manager(config);
    await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length === 1,
    );
    await first.manager.stop();
    const second = await c.manager(config);
    expect(second.manager.ownedNames().schedulers).toEqual([name]);
    // The next build is due 3 s after the first, not at once.
    await sleep(1_000);
    expect(await buildsetsOf(c.h, name)).toHaveLength(1);
    await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length === 2,
    );
    const [state] = await c.h.db.pool.query(sql`
      SELECT s.value_json FROM object_state s JOIN objects o ON o.id = s.objectid
      WHERE o.name = ${name} AND o.class_name = 'Periodic' AND s.name = 'last_build'`);
    expect(typeof JSON.parse(state!.value_json)).toBe('number');
  });
});

describe('nightly', () => {
  /** A clock half a second before the next whole minute, that tests can move on. */
  function testClock() {
    const now = Date.now() / 1000;
    let offset = Math.ceil(now / 60) * 60 - 0.5 - now;
    return { clock: () => Date.now() / 1000 + offset, skip: (s: number) => (offset += s) };
  }

  it('builds at the cron times', async () => {
    const name = uniq('each-minute');
    const t = testClock();
    await c.manager(configWith(`  - { type: nightly, name: ${name}, cron: "* * * * *", builders: [b2] }`), {
      clock: t.clock,
    });
    await sleep(200);
    expect(await buildsetsOf(c.h, name)).toEqual([]);
    const sets = await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length > 0,
      3_000,
    );
    expect(sets).toHaveLength(1);
    expect(sets[0]!.reason).toBe(`The Nightly scheduler named '${name}' triggered this build`);
    t.skip(60);
    await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length === 2,
      3_000,
    );
    expect(await buildsetsOf(c.h, name)).toHaveLength(2);
  });

  it('only_if_changed: the first time builds, then only after an important change', async () => {
    const name = uniq('if-changed');
    const branch = uniq('main');
    const t = testClock();
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
    // First time: it builds whatever there is.
    await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length === 1,
      3_000,
    );
    // No change: the next time makes no build set.
    t.skip(60);
    await sleep(1_000);
    expect(await buildsetsOf(c.h, name)).toHaveLength(1);
    // An unimportant change, and one of another branch: still nothing.
    await c.change({ branch, revision: 'doc', files: ['docs/a.md'] });
    await c.change({ branch: uniq('other'), revision: 'o1', files: ['src/a.c'] });
    t.skip(60);
    await sleep(1_000);
    expect(await buildsetsOf(c.h, name)).toHaveLength(1);
    // An important change: built (with the unimportant one) at the next time.
    await c.change({ branch, revision: 'code', files: ['src/a.c'] });
    await sleep(300);
    t.skip(60);
    const sets = await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length === 2,
      3_000,
    );
    expect(sets[1]!.stamps).toEqual([{ branch, revision: 'code', repository: 'r', codebase: '' }]);
  });

  it('a time missed while its master was dead is built when another takes over', async () => {
    const name = uniq('missed');
    const t = testClock();
    const config = configWith(`  - { type: nightly, name: ${name}, cron: "* * * * *", builders: [b1] }`);
    const first = await c.manager(config, { clock: t.clock });
    await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length === 1,
      3_000,
    );
    await first.manager.stop({ release: false });
    t.skip(120);
    const second = await c.manager(config, { clock: t.clock });
    await c.h.db.pool.query(sql`UPDATE masters SET last_active = 0 WHERE id = ${first.masterid}`);
    await transact(c.h.ctx, (tx) => expireMasters(tx, 600, second.masterid));
    await eventually(
      () => buildsetsOf(c.h, name),
      (s) => s.length === 2,
      3_000,
    );
    await sleep(500);
    // One build for the missed times, not one each.
    expect(await buildsetsOf(c.h, name)).toHaveLength(2);
  });
});
