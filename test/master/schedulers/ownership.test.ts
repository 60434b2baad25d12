// Each scheduler and change source runs on exactly one live master: three managers on one
// database share them out; one that stops hands its items on within a round; one that goes
// silent keeps them until it is expired, then another takes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireMasters, transact } from '../../../services/core/data/index.js';
import { sql } from '../../../services/core/db/pool.js';
import type { SchedulerManager } from '../../../services/master/schedulers/index.js';
import { eventually } from '../../helpers/wait.js';
import { type Cluster, configWith, openCluster } from './lib.js';

const config = configWith(
  `
  - { type: single-branch, name: on-main, branch: main, tree_stable_timer: 30, builders: [b1] }
  - { type: periodic, name: hourly, period: 3600, builders: [b1] }
  - { type: nightly, name: nightly, cron: "0 3 * * *", builders: [b2] }
  - { type: triggerable, name: trig, builders: [b2] }`,
  `
force_schedulers: [{ name: force, builders: [b1] }]
change_sources: [{ name: "GitPoller:repo" }, { name: "hook" }]`,
);
const SCHEDULERS = ['force', 'hourly', 'nightly', 'on-main', 'trig'];
const SOURCES = ['GitPoller:repo', 'hook'];

let c: Cluster;
const managers: { manager: SchedulerManager; masterid: number }[] = [];

beforeAll(async () => {
  c = await openCluster();
  // Each master asks for every item at once on its first round: ownership races.
  managers.push(...(await Promise.all([1, 2, 3].map(() => c.manager(config)))));
});
afterAll(async () => {
  await c?.close();
});

/** name -> owning masterid, from the database. */
async function owners(): Promise<{
  schedulers: Map<string, number | null>;
  sources: Map<string, number | null>;
}> {
  const s = await c.h.db.pool.query(sql`
    SELECT s.name, sm.masterid FROM schedulers s LEFT JOIN scheduler_masters sm ON sm.schedulerid = s.id`);
  const cs = await c.h.db.pool.query(sql`
    SELECT c.name, cm.masterid FROM changesources c LEFT JOIN changesource_masters cm ON cm.changesourceid = c.id`);
  return {
    schedulers: new Map(s.map((r) => [r.name, r.masterid])),
    sources: new Map(cs.map((r) => [r.name, r.masterid])),
  };
}

/** What the running managers say they own, each item listed once per owner. */
function claimed(ms: typeof managers): { schedulers: string[]; sources: string[] } {
  return {
    schedulers: ms.flatMap((m) => m.manager.ownedNames().schedulers).sort(),
    sources: ms.flatMap((m) => m.manager.ownedNames().changeSources).sort(),
  };
}

const ownedBy = (o: Awaited<ReturnType<typeof owners>>, masterids: number[]) =>
  [...o.schedulers.values(), ...o.sources.values()].every((m) => m !== null && masterids.includes(m));

describe('three masters', () => {
  it('own every scheduler (force and triggerable included) and change source exactly once', async () => {
    const o = await owners();
    expect([...o.schedulers.keys()].sort()).toEqual(SCHEDULERS);
    expect([...o.sources.keys()].sort()).toEqual(SOURCES);
    expect(
      ownedBy(
        o,
        managers.map((m) => m.masterid),
      ),
    ).toBe(true);
    // What each manager runs is what the database says it owns, and nobody runs an item twice.
    expect(claimed(managers)).toEqual({ schedulers: SCHEDULERS, sources: SOURCES });
    for (const m of managers) {
      const mine = m.manager.ownedNames();
      expect(mine.schedulers.sort()).toEqual(
        [...o.schedulers]
          .filter(([, id]) => id === m.masterid)
          .map(([n]) => n)
          .sort(),
      );
    }
  });

  it('a master that stops hands its items to the others within a round', async () => {
    // The master that owns the most, so that there is something to hand on.
    const count = (m: (typeof managers)[number]) =>
      m.manager.ownedNames().schedulers.length + m.manager.ownedNames().changeSources.length;
    managers.sort((a, b) => count(b) - count(a));
    const [first, ...rest] = managers;
    // Out of the list before anything can fail, so that the next test sees only running ones.
    managers.shift();
    expect(count(first!)).toBeGreaterThan(0);
    await first!.manager.stop();
    expect(first!.manager.ownedNames()).toEqual({ schedulers: [], changeSources: [] });
    // A taken item is the database's once its claim commits, and the manager's once it has
    // started it: both are waited for (a CI run at load 15 read the second a moment early).
    const everything = (x: ReturnType<typeof claimed>) =>
      x.schedulers.join() === SCHEDULERS.join() && x.sources.join() === SOURCES.join();
    const o = await eventually(
      owners,
      (x) =>
        ownedBy(
          x,
          rest.map((m) => m.masterid),
        ) && everything(claimed(rest)),
    );
    expect(
      ownedBy(
        o,
        rest.map((m) => m.masterid),
      ),
    ).toBe(true);
    expect(claimed(rest)).toEqual({ schedulers: SCHEDULERS, sources: SOURCES });
  });

  it('a master that goes silent keeps its items until it is expired, then another takes them', async () => {
    const [silent, alive] = managers;
    // As if killed: no more rounds, nothing released.
    await silent!.manager.stop({ release: false });
    // The live master asks for everything again, and gets none of what the silent one holds.
    await alive!.manager.runRound();
    let o = await owners();
    const kept = [...o.schedulers.values(), ...o.sources.values()].filter((m) => m === silent!.masterid);
    expect(kept.length).toBeGreaterThan(0);
    await c.h.db.pool.query(sql`UPDATE masters SET last_active = 0 WHERE id = ${silent!.masterid}`);
    const expired = await transact(c.h.ctx, (tx) => expireMasters(tx, 600, alive!.masterid));
    expect(expired).toEqual([silent!.masterid]);
    o = await eventually(owners, (x) => ownedBy(x, [alive!.masterid]));
    expect(ownedBy(o, [alive!.masterid])).toBe(true);
    expect(claimed([alive!])).toEqual({ schedulers: SCHEDULERS, sources: SOURCES });
  });
});
